"""The one AppTest harness: any page opened inside the real frame (headscope/frame/app.py: the
sidebar, the link and the navigation), as a browser would open a link; its charts read back as
numbers; and the guards the hostile-input tests rely on.
"""

import base64
import html
import json
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from headscope.files import FRAME
from headscope.files import PAGES as PAGES_DIR
from headscope.ui import sidebar
from headscope.ui.docs import as_html, teaching_guide
from headscope.ui.labels import ZWSP
from headscope.ui.style import PAGE_CSS, PRESENT_CSS

from .protocol import component_data
from .server import ROOT

APP = str(FRAME)
# A new sentence reruns the whole app here, as it did before the Explorer's own rerun: AppTest
# keeps no sidebar in its tree after a fragment's rerun (headscope.ui.sidebar says why)
sidebar.RERUN_FRAGMENT_ALONE = False
PAGES = tuple(sorted(p.stem for p in PAGES_DIR.glob("*.py")))  # every page script


def page_file(page: str) -> str:
    """A page's script, as AppTest.switch_page takes it."""
    return str(PAGES_DIR / f"{page}.py")


def open_app(page: str = "explorer", timeout=120, **query) -> AppTest:
    """A new session that opens the link /<page>?<query>."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in query.items():
        at.query_params[k] = v
    # Before the first run AppTest names a page by its file name, which is also the url path
    # st.Page gives it: the first run is the link's own page, as in a browser.
    at.switch_page(page_file(page)).run()
    assert shown_page(at) == page
    return at


def copy_links(at: AppTest) -> list:
    """The copy-link box's links, as a reader who opens it sees them: on a page that builds the
    box only while open (the Explorer: headscope.ui.share.refresh, lazy), it is opened first."""
    if not at.code and "share_box" in at.session_state:
        at.session_state["share_box"] = True  # the popover's open state, as a click sets it
        at.run()
    return [c.value for c in at.code]


def go_to(at: AppTest, page: str) -> AppTest:
    """Follow the navigation to another page in the same session."""
    at.switch_page(page_file(page)).run()
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


# --- charts as numbers -------------------------------------------------------------------------

def _decode(value):
    """Plotly writes numpy arrays as {"dtype": "f4", "bdata": base64, "shape": "10, 10"}."""
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if isinstance(value.get("bdata"), str) and "dtype" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            arr = arr.reshape([int(s) for s in str(shape).split(",")])
        return arr
    return {k: _decode(v) for k, v in value.items()}


def _key(element_id: str) -> str:
    """The widget key that ends an element id, or the whole id for a chart without a key."""
    key = element_id.rsplit("-", 1)[-1]
    return element_id if key == "None" else key


def charts(at) -> dict:
    """{key: figure dict} for every st.plotly_chart on the page, in page order, with plotly's
    binary arrays decoded to numpy."""
    return {_key(el.proto.id): _decode(json.loads(el.proto.spec))
            for el in at.get("plotly_chart")}


def chart(at, key: str):
    """The figure dict of the chart with this key, or None if the page has none."""
    return charts(at).get(key)


def components(at) -> dict:
    """{key: data dict} for every attention component (headscope.ui.attention) on the page, in page
    order: what the page sent the browser. Its binary arrays stay packed; unpack them with
    testkit.payloads.unpack (grid maps) or unpack_lines (head view lines)."""
    return {_key(el.proto.id): component_data(el.proto.json) for el in at.get("bidi_component")
            if el.proto.component_name == "headscope.attention"}


def component(at, key: str):
    """The data the page sent the attention component with this key, or None."""
    return components(at).get(key)


def explorer_sent(at) -> dict | None:
    """The Explorer's data (component ex_view) with its arrays unpacked as the browser decodes
    them: maps (L', H + 1, T, T) with the summed head last, norm (L', H, T, T) and norm_sum
    (L', H, T) when sent, frows (L, H, F, T) for a long text; None when the page has none."""
    from .payloads import norm_view, unpack, unpack_rows

    d = component(at, "ex_view")
    if d is None:
        return None
    out = {k: unpack(v) if isinstance(v, dict) and "b64" in v else v for k, v in d.items()}
    for name in ("maps", "frows"):
        if name in d:
            out[name] = unpack_rows(d, name)
    if "vnorm" in d:  # the norm maps the browser makes: weights times value norms
        out["norm"], out["norm_sum"] = norm_view(d, out["maps"])
    return out


def click(at, key: str, event: str, value):
    """Rerun as the browser does after the attention component with this key called
    setTriggerValue(event, value) (a click): the component's trigger widget carries
    [{"event", "value"}] for this one run, and its on_<event>_change callback runs first, through
    Streamlit's own widget machinery."""
    from streamlit.components.v2.bidi_component.main import _make_trigger_id
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    el = next(el for el in at.get("bidi_component") if _key(el.proto.id) == key)
    states = at._tree.get_widget_states()
    states.widgets.append(WidgetState(id=_make_trigger_id(el.proto.id, "events"),
                                      json_trigger_value=json.dumps([dict(event=event,
                                                                          value=value)])))
    return at._run(states)


def selectbox(at, label: str):
    """The page's selectbox with this label (the first one)."""
    return next(s for s in at.selectbox if s.label == label)


def array(v) -> np.ndarray:
    return np.asarray(v, dtype=np.float64)


def plain_label(axis_label: str) -> str:
    """The inverse of headscope.ui.labels.axis_labels for one label (what a reader sees):
    escapes undone, the zero-width marks that keep repeated tokens apart removed."""
    return html.unescape(axis_label.replace(ZWSP, ""))


def axis_tokens(values) -> list:
    """Tick values as a reader sees them (escapes and zero-width marks removed)."""
    return [plain_label(v) for v in values]


# --- guards ------------------------------------------------------------------------------------

# Our figures write no markup but plotly's <extra></extra> (hover boxes) and <br>; any other
# tag in a chart's spec came from user text
TAG = re.compile(r"<\s*/?\s*(?!extra>|br>)[a-z][^>]*>", re.IGNORECASE)


def survives(at):
    """The run ended without an exception element, user text never went into HTML (only the
    app's constant CSS is HTML), and the page drew something: a chart, an attention component
    or a message."""
    assert not at.exception, [e.value for e in at.exception]
    html, unsafe = html_and_markdown(at)
    assert set(html) <= {PAGE_CSS, PRESENT_CSS, *CONSTANT_GUIDES}, html
    assert not unsafe
    for el in at.get("plotly_chart"):  # plotly reads a few tags in its text: none from users
        assert not TAG.search(el.proto.spec), TAG.search(el.proto.spec).group()
    assert at.get("plotly_chart") or components(at) or messages(at)


# About's teaching guide: our own document drawn as HTML (same-tab links), constant per mode
CONSTANT_GUIDES = {as_html(teaching_guide(present)) for present in (False, True)}


def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def html_and_markdown(at):
    """(the bodies of every st.html element, every markdown element that may render HTML)."""
    nodes = list(_walk(at._tree))
    html = [n.proto.body for n in nodes if type(n).__name__ == "Html"]
    unsafe = [n for n in nodes if hasattr(getattr(n, "proto", None), "allow_html")
              and n.proto.allow_html]
    return html, unsafe


# What a run touches (sys.audit events, every thread)
PROCESS_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                  "os.fork", "os.forkpty", "pty.spawn", "os.startfile"}
READ_ROOTS = tuple(str(Path(p).resolve()) for p in {ROOT, sys.prefix, sys.base_prefix})
_watch = {"on": False, "events": [], "hooked": False}


def _audit(event, args):
    if _watch["on"] and (event == "open" or event in PROCESS_EVENTS):
        _watch["events"].append((event, args))


@contextmanager
def sandboxed():
    """Fails if the code run inside starts a process or a shell, writes a file, or reads one
    outside the project and the Python installation (what imports and scripts read). An audit
    hook cannot be removed, so one is installed for the process and switched on here."""
    if not _watch["hooked"]:
        sys.addaudithook(_audit)
        _watch["hooked"] = True
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


TEXT_AREAS = ("text", "pair", "ah_corpus_lines", "cs_lines")  # the rest are text inputs


class Sessions:
    """One app session per page, kept across hypothesis examples (a new one costs ~1 s); each
    opened from a link with `query` (e.g. model=...)."""

    def __init__(self, **query):
        self.open, self.query = {}, query

    def __call__(self, page):
        if page not in self.open:
            self.open[page] = open_app(page, **self.query)
        return self.open[page]

    def run(self, page, **values):
        at = self(page)
        for key, value in values.items():
            widget = at.text_area(key=key) if key in TEXT_AREAS else at.text_input(key=key)
            widget.set_value(value)
        with sandboxed():
            at.run()
        assert shown_page(at) == page
        survives(at)
        return at
