"""Presentation mode (a projector): no sidebar, larger text, bigger charts. On with the
sidebar's toggle or a `present=1` link; the frame reads it, every chart goes through plot()."""

import streamlit as st

from .figures import for_projector
from .style import PROJECTOR_SCALE


def presenting() -> bool:
    return bool(st.session_state.get("_present"))


def set_present(on: bool | None = None):
    """The toggle's callback (on=None: the toggle's value) and the leave button's (on=False)."""
    ss = st.session_state
    ss._present = ss.get("present_toggle", False) if on is None else on


def plot(where, fig, **kwargs):
    """st.plotly_chart in `where` (st, a column, a tab), enlarged in presentation mode."""
    if presenting():
        fig = for_projector(fig, PROJECTOR_SCALE)
    return where.plotly_chart(fig, **kwargs)
