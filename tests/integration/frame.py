"""AppTest of the whole app: app.py's frame (sidebar, link, navigation) around any page.

AppTest resets Streamlit's legacy pages/ switch before every run, and our pages/ folder turns it
on: app.py would then run a page alone, without the frame. `frame_mode()` makes that switch
stay off, as it is in the served app after its first run (common.leave_legacy_pages_mode), so
`switch_page` runs app.py with the chosen page inside st.navigation, as a browser would.
"""

from contextlib import contextmanager
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


def survives(at):
    """The run ended without an exception element, user text never went into HTML (only the
    app's constant CSS is HTML), and the page drew something: a chart or a message."""
    from pages import common

    assert not at.exception, [e.value for e in at.exception]
    html, unsafe = html_and_markdown(at)
    assert set(html) <= {common.PAGE_CSS, common.PRESENT_CSS}, html
    assert not unsafe
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
