"""What a page declares about itself, first thing in its script, so that the frame needs no
list of other pages' widgets or link parameters.

    PAGE = Page("ex", keep=("ex_words", "ex_nospecial"), link=("layer", "head", "focus"))
    pending = PAGE.start()        # this page's values from the link, popped as they are applied

Widget keys start with the page's prefix, so two pages never share one (a Training lab
selectbox once wrote an int into the Head lab's multiselect of head names).
"""

from dataclasses import dataclass

import streamlit as st

from . import share
from .link import FRAME_PARAMS, pending_params
from .presentation import presenting
from .sidebar import TEXT_FRAGMENT

_KEPT = "_kept_widgets"


@dataclass(frozen=True)
class Page:
    prefix: str  # every widget key of the page starts with prefix + "_"
    # widgets whose values outlive a visit to another page. Streamlit drops a widget's state at
    # the end of a run that does not draw it; the frame writes these back first (Streamlit's
    # docs, "Working with widgets in multipage apps", option 3). Only widgets created without a
    # default of their own belong here (with one, Streamlit warns that the value was also set).
    keep: tuple = ()
    link: tuple = ()  # the query parameters this page reads and writes (besides the frame's)

    def __post_init__(self):
        stray = [k for k in self.keep if not k.startswith(self.prefix + "_")]
        if stray:
            raise ValueError(f"widget keys of page {self.prefix!r} must start with "
                             f"{self.prefix + '_'!r}: {stray}")
        shared = set(self.link) & set(FRAME_PARAMS)
        if shared:
            raise ValueError(f"{sorted(shared)} belong to the frame's link")

    def start(self) -> dict:
        """Register the page's kept widgets with the frame, drop other pages' parameters from
        the address bar and from the pending link values, and return this page's pending ones."""
        ss = st.session_state
        ss.setdefault(_KEPT, set()).update(self.keep)
        qp = st.query_params
        for k in [k for k in qp if k not in FRAME_PARAMS and k not in self.link]:
            del qp[k]
        pending = pending_params()
        for k in [k for k in pending if k not in self.link]:
            del pending[k]
        share.refresh()  # the copy-link box without the parameters just dropped
        return pending

    def heading(self, title: str, intro: str, where=st, compact: bool = False):
        """The page's title and its one-line intro (markdown, our own text), in `where` (st or
        a column). On a projector one caption line, cut with an ellipsis where it is longer
        than the screen is wide (style.PRESENT_CSS; the top navigation already names the
        page), so the figure fits. compact: that one line everywhere (a page whose first
        screen is full, as the Explorer's)."""
        if presenting() or compact:
            where.container(key=f"{self.prefix}_heading").caption(f"**{title}** · {intro}")
        else:
            where.header(title)
            where.caption(intro)


def keep_widgets():
    """The frame's part: once per run, before any page draws a widget, write back every kept
    widget of every page this session has opened. A kept value that the widget's options lack
    (a model with fewer heads) is dropped by Streamlit itself."""
    ss = st.session_state
    for key in ss.get(_KEPT, ()):
        if key in ss:
            ss[key] = ss[key]


def as_fragment(key: str):
    """A part of a page whose own widgets change only that part (the Explorer's maps, and the
    masked word under them) runs through this: a change of one of its widgets reruns it alone
    (an st.fragment named `key`), without the frame, the sidebar, the navigation and the page's
    constant text around it. A new sentence typed in the frame's sentence box reruns the parts
    the page names at its end (sentence_parts). Other sidebar changes still rerun everything.
    The frame draws such a page's copy-link box closed and lazy (share.open_slot), so that the
    link a part's own rerun writes needs no box drawn again."""
    return st.fragment(key=key)


def sentence_parts(*keys: str):
    """The page's last line: a new sentence reruns these fragments alone, in this order
    (sidebar.sentence_changed), since they are all of the page that reads it. Named only once
    the whole page has run: a full run cut short (a new sentence sent while it ran) leaves
    none named, and the next sentence reruns the whole app, so no part is left behind."""
    st.session_state[TEXT_FRAGMENT] = keys
