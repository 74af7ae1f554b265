"""The one module that touches Streamlit's internals. tests/unit/test_streamlit_internals.py
fails with a clear message when a Streamlit upgrade removes what is used here."""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

_LEGACY_MODE_LEFT = False


def uses_legacy_pages_switch() -> bool:
    """Whether this Streamlit still has the switch leave_legacy_pages_mode flips."""
    return hasattr(PagesManager, "uses_pages_directory")


def leave_legacy_pages_mode():
    """The first run after the server starts sees our pages/ folder and takes Streamlit's legacy
    multipage mode: app.py then runs as a page with other widget ids (the first sentence typed
    would be dropped), and a deep link such as /all_heads runs its page alone, without the
    frame and the sidebar. st.navigation in app.py switches the legacy mode off for good; this
    call, first in app.py and in every page (Page.start), starts such a first run again without
    it. Once per process: AppTest turns the legacy mode back on before each of its runs, and a
    rerun there would swallow the button clicks of the run."""
    global _LEGACY_MODE_LEFT
    if PagesManager.uses_pages_directory and not _LEGACY_MODE_LEFT:
        _LEGACY_MODE_LEFT = True
        PagesManager.uses_pages_directory = False
        st.rerun()
