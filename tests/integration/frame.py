"""AppTest of the whole app: app.py's frame (sidebar, link, navigation) around any page.

AppTest resets Streamlit's legacy pages/ switch before every run, and our pages/ folder turns it
on: app.py would then run a page alone, without the frame. `frame_mode()` makes that switch
stay off, as it is in the served app after its first run (common.leave_legacy_pages_mode), so
`switch_page` runs app.py with the chosen page inside st.navigation, as a browser would.
"""

import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import streamlit.testing.v1.app_test as app_test
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

APP = str(ROOT / "app.py")
PAGES = ("explorer", "inside_mha", "training_lab", "all_heads", "head_lab", "two_readings")


class _NavigationPages(PagesManager):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        PagesManager.uses_pages_directory = False  # st.navigation, never the pages/ folder


@contextmanager
def frame_mode():
    with mock.patch.object(app_test, "PagesManager", _NavigationPages):
        try:
            yield
        finally:
            PagesManager.uses_pages_directory = None


def open_app(page: str = "explorer", timeout=120, **query) -> AppTest:
    """A new session that opens the link /<page>?<query>. Call inside frame_mode()."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in query.items():
        at.query_params[k] = v
    # Before the first run AppTest names a page by its file name, which is also the url path
    # st.Page gives it: the first run is the link's own page, as in a browser.
    at.switch_page(f"pages/{page}.py").run()
    assert shown_page(at) == page
    return at


def shown_page(at) -> str:
    """The file name of the page the last run drew."""
    info = at._registered_pages.get(at._finished_page_script_hash, {})
    return str(info.get("script_path", "")).rsplit("/", 1)[-1].removesuffix(".py")


def messages(at) -> str:
    """Every warning, info, error and caption on the page, joined."""
    return " | ".join(str(m.value) for kind in (at.warning, at.info, at.error, at.caption)
                      for m in kind)


# Our figures write no markup but plotly's <extra></extra> (hover boxes) and <br>; any other
# tag in a chart's spec came from user text
TAG = re.compile(r"<\s*/?\s*(?!extra>|br>)[a-z][^>]*>", re.IGNORECASE)


def survives(at):
    """The run ended without an exception element, user text never went into HTML (only the
    app's constant CSS is HTML), and the page drew something: a chart or a message."""
    from pages import common

    assert not at.exception, [e.value for e in at.exception]
    html, unsafe = html_and_markdown(at)
    assert set(html) <= {common.PAGE_CSS, common.PRESENT_CSS}, html
    assert not unsafe
    for chart in at.get("plotly_chart"):  # plotly reads a few tags in its text: none from users
        assert not TAG.search(chart.proto.spec), TAG.search(chart.proto.spec).group()
    assert at.get("plotly_chart") or messages(at)


def walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from walk(child)


def html_and_markdown(at):
    """(the bodies of every st.html element, every markdown element that may render HTML)."""
    nodes = list(walk(at._tree))
    html = [n.proto.body for n in nodes if type(n).__name__ == "Html"]
    unsafe = [n for n in nodes if hasattr(getattr(n, "proto", None), "allow_html")
              and n.proto.allow_html]
    return html, unsafe


# --- what a run touches (sys.audit events, every thread) ---------------------------------------
PROCESS_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                  "os.fork", "os.forkpty", "pty.spawn", "os.startfile"}
READ_ROOTS = tuple(str(Path(p).resolve()) for p in {ROOT, sys.prefix, sys.base_prefix})
_watch = {"on": False, "events": []}


def _audit(event, args):
    if _watch["on"] and (event == "open" or event in PROCESS_EVENTS):
        _watch["events"].append((event, args))


_hook_installed = False


@contextmanager
def sandboxed():
    """Fails if the code run inside starts a process or a shell, writes a file, or reads one
    outside the project and the Python installation (what imports and scripts read). An audit
    hook cannot be removed, so one is installed for the process and switched on here."""
    global _hook_installed
    if not _hook_installed:
        sys.addaudithook(_audit)
        _hook_installed = True
    _watch["events"], _watch["on"] = [], True
    try:
        yield
    finally:
        _watch["on"] = False
    for event, args in _watch["events"]:
        assert event not in PROCESS_EVENTS, f"a page started a process: {event} {args[:1]}"
        path, mode, flags = (list(args) + [None, None])[:3]
        if isinstance(path, int):  # an open file descriptor, not a path
            continue
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
        assert not writes, f"a page wrote a file: {path}"
        where = str(Path(os.fsdecode(path)).resolve())
        assert where.startswith(READ_ROOTS + ("/dev/", "/proc/", "/sys/")), \
            f"a page read a file outside the project: {where}"
