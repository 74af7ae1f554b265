"""The copy-link box: the link to the view as it is now, for the students' screens (never with
present=1) and, separately, for the projector. Every query-parameter write of a run redraws it,
so it shows the view the run ends with, also when a page stops early on bad input."""

from urllib.parse import quote, urlencode

import streamlit as st

from . import style

_SLOT, _PAGE, _DRAWN = "_share_slot", "_share_page", "_share_drawn"


def open_slot(where, page_path: str):
    """The frame's call, once per run: where the box goes (the sidebar, or the row above the
    page in presentation mode) and the url path of the page being run ("" for the default)."""
    st.session_state[_SLOT] = where.empty()
    st.session_state[_PAGE] = page_path
    st.session_state[_DRAWN] = None  # a new slot: nothing drawn in it yet
    refresh()


def links() -> tuple:
    """(for the students, for the projector): the app's address in this browser (relative when
    the server does not know it), the page, and every query parameter but present."""
    params = {k: v for k, v in st.query_params.to_dict().items() if k != "present"}
    page = st.session_state.get(_PAGE, "")
    url = (st.context.url or "").split("?", 1)[0].split("#", 1)[0]
    root = url[: -len(page)] if page and url.endswith("/" + page) else url
    root = root if root.endswith("/") else (root + "/" if root else "./")
    query = urlencode(params, quote_via=quote)
    students = root + page + ("?" + query if query else "")
    return students, students + ("&" if query else "?") + "present=1"


def refresh():
    slot = st.session_state.get(_SLOT)
    if slot is None:
        return
    students, projector = links()
    if st.session_state.get(_DRAWN) == (students, projector):
        return  # the box already shows these links: redrawing it sends ~6 messages for nothing
    st.session_state[_DRAWN] = (students, projector)
    with slot.container():
        with st.popover("Copy link", icon=style.ICON_LINK, width="stretch"):
            st.caption("This view, for the students' screens (the copy icon is at the right "
                       "of the box):")
            st.code(students, language=None, wrap_lines=True)
            st.caption("The same view for a projector (presentation mode):")
            st.code(projector, language=None, wrap_lines=True)
