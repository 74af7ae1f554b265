"""The copy-link box: the link to the view as it is now, for the students' screens (never with
present=1) with its QR code beside it, and, separately, the link for the projector. Every
query-parameter write of a run redraws it, so it shows the view the run ends with, also when a
page stops early on bad input; on a page run as fragments (the Explorer) it is drawn closed
once a full run, after the frame wrote the link, and built only in the run that opens it."""

import io
from functools import lru_cache
from urllib.parse import quote, urlencode

import segno
import streamlit as st

from . import style
from .presentation import presenting

_SLOT, _PAGE, _DRAWN = "_share_slot", "_share_page", "_share_drawn"
_HELD = "_share_held"  # the box is drawn once per full run, lazily (a page run as fragments)
QR_PX = 300  # the QR code's width on screen: ~9 px a module for a 100-character link, read by a
             # phone from the back of a classroom when projected at 1280×720


def open_slot(where, page_path: str, lazy: bool = False):
    """The frame's call, once per run: where the box goes (the sidebar, or its own button in the
    row above the page in presentation mode) and the url path of the page being run ("" for the
    default). lazy: the page runs its parts as fragments (the Explorer), whose own reruns change
    the link: the frame draws the box once, closed, after it wrote the link (draw_lazy), its
    contents built only while it is open (opening it reruns the app), and no later change of
    the link redraws it. A new sentence then sends nothing to the sidebar."""
    ss = st.session_state
    ss[_SLOT] = where.empty()
    ss[_PAGE] = page_path
    ss[_DRAWN] = None  # a new slot: nothing drawn in it yet
    ss[_HELD] = lazy  # a lazy box is drawn once, by draw_lazy; refresh leaves it
    if not lazy:
        refresh()


def draw_lazy(on_open):
    """The frame's call after it wrote the link (link.sync_link), on a page run as fragments:
    the box drawn closed, on_open its callback (sidebar.whole_run), its contents built only
    while it is open (opening it reruns the app): its QR code costs ~6 ms (segno's encoding and
    the PNG), which every new sentence would pay for a box seldom opened. Opened, it is built
    from the link this run wrote: the run that opens it may carry the address of the sentence
    before (Streamlit sends the query string of its last run), and the frame writes the
    sentence in the box."""
    _draw(*links(), on_open=on_open)


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


def qr_code(link: str) -> segno.QRCode | None:
    """The QR code of a link: error correction M (a projected code loses contrast, not
    modules), the smallest version that holds it (segno picks it); None when no QR code holds
    it (about 2,300 bytes: a long sentence in the link)."""
    try:
        return segno.make_qr(link, error="m")
    except segno.DataOverflowError:
        return None


@lru_cache(maxsize=256)  # the box is drawn again on every run that opens or follows it
def qr_png(link: str) -> bytes | None:
    """The link's QR code as a PNG, black on white with the standard 4-module quiet zone; None
    where qr_code gives none."""
    code = qr_code(link)
    if code is None:
        return None
    out = io.BytesIO()
    code.save(out, kind="png", scale=8, border=4)
    return out.getvalue()


def refresh():
    """Draw the box in its slot with the links of the view as it is now, unless it shows them
    already, or it is a lazy one (open_slot)."""
    slot = st.session_state.get(_SLOT)
    if slot is None or st.session_state.get(_HELD):
        return  # no box, or a lazy one, drawn once (draw_lazy)
    students, projector = links()
    if st.session_state.get(_DRAWN) == (students, projector):
        return  # the box already shows these links: redrawing it sends ~6 messages for nothing
    st.session_state[_DRAWN] = (students, projector)
    _draw(students, projector)


def _draw(students: str, projector: str, on_open=None):
    """The box in its slot. on_open: a lazy box, a widget with this callback, its contents
    built only while it is open."""
    lazy = dict(key="share_box", on_change=on_open) if on_open else {}
    with st.session_state[_SLOT].container():
        with st.popover("Copy link", icon=style.ICON_LINK, width="stretch", **lazy) as box:
            if on_open and not box.open:
                return
            # on a projector the QR code stands beside the links (the popover fits 720 px)
            text, code = st.columns([1, 1]) if presenting() else (st, st)
            text.caption("This view, for the students' screens (the copy icon is at the right "
                         "of the box), and its QR code for their phones:")
            text.code(students, language=None, wrap_lines=True)
            png = qr_png(students) if students.startswith(("http://", "https://")) else None
            if png is not None:
                code.image(png, width=QR_PX, caption="Scan to open this view")
            elif students.startswith(("http://", "https://")):
                code.caption(f"This link ({len(students.encode()):,} bytes) is too long for a QR "
                             "code (they hold about 2,300): a shorter sentence gives one. The "
                             "link above still works.")
            else:  # no address known (a test harness): a QR code of "./" would open nothing
                code.caption("The QR code needs the server's address; open the app through it.")
            text.caption("The same view for a projector (presentation mode):")
            text.code(projector, language=None, wrap_lines=True)
