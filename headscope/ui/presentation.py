"""Presentation mode (a projector): no sidebar, larger text, bigger charts. On with the
sidebar's toggle or a `present=1` link; the frame reads it, every chart goes through plot().

Each page's main figure fits the first screen of the smallest projector we plan for
(1280×720; tests/browser/test_projector_fit.py): the page gives plot() the room its figure has
there (`room`, px, fixed: 1080 px screens get the same figure), and tucks secondary controls
into a popover (tucked()) and long notes into one line (note())."""

import streamlit as st

from .figures import for_projector
from .style import PROJECTOR_SCALE

# The most tokens a map shows at once on a projector: every one labelled at 18 px or more
# (a longer text shows a window of them, moved with the page's slider)
PRESENT_WINDOW = 16


def presenting() -> bool:
    return bool(st.session_state.get("_present"))


def set_present(on: bool | None = None):
    """The toggle's callback (on=None: the toggle's value) and the leave button's (on=False)."""
    ss = st.session_state
    ss._present = ss.get("present_toggle", False) if on is None else on


def plot(where, fig, room: int | None = None, square: bool = False, **kwargs):
    """st.plotly_chart in `where` (st, a column, a tab), enlarged in presentation mode, and
    there at most `room` px high (square: with square cells; see figures.for_projector)."""
    if presenting():
        fig = for_projector(fig, PROJECTOR_SCALE, max_height=room, square=square)
    return where.plotly_chart(fig, **kwargs)


def tucked(label: str, where=st, icon: str = ":material/tune:"):
    """Where a page's secondary controls go: a popover button `label` in presentation mode (so
    the main figure keeps the first screen), the page itself (`where`) otherwise."""
    if presenting():
        return where.popover(label, icon=icon, width="stretch")
    return where.container()


def note(full: str, short: str | None = None, where=st):
    """A caption: `short` in presentation mode (one line on a projector; None: no caption
    there), `full` otherwise. Our own markdown; user text only through guards.md_text."""
    text = (short if presenting() else full)
    if text:
        where.caption(text)
