"""A Streamlit client without a browser: one session speaking the app's own websocket protocol
(/_stcore/stream: a BackMsg or ForwardMsg per binary frame, built with the installed Streamlit's
own protobuf classes, over the `websockets` client), for the protocol test and
bench/class_protocol.py. Nothing runs on connect: the client asks for each script run.

    s = Session("http://127.0.0.1:8501", cookie="student-7")   # cookie: nginx's sticky key
    await s.connect()
    run = await s.rerun(query="text=Hello")         # the first run: open a (shared) link
    run = await s.rerun({"text": text_value("A new sentence.")})
    run = await s.rerun({"ex_layer": slider_value(3)})
    run = await s.rerun(page="head_view")           # another page (its url path)
    run.seconds, run.status, run.bytes, run.messages, run.components["ex_grid"]["tokens"]
    await s.close()

Widgets are named by their key: ids are collected from the deltas ("$$ID-<hash>-<key>"); a
rerun sends every widget value this session set so far (as a browser sends every widget's
value), and a trigger only once. A background task reads every ForwardMsg as it arrives: the
server drops a client whose send queue passes 500 messages.

For many idle or short sessions (the proxy's limit tests), two blocking calls do without the
Session class:

    ws = open_socket("http://127.0.0.1:8501", cookie="headscope_affinity=abc")
    session_id = run_script(ws)          # the default page; waits for "script finished"
"""

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.sync.client import connect

FINISHED_FOR_RERUN = 2  # script_finished: 0 done, 1 compile error, 2 superseded, 3 fragment done
GRACE = 0.25  # seconds to wait after a run for the next run of a chain (a callback's st.rerun)


def component_data(element_json: str):
    """An attention component's data from its element's JSON: the page sends one JSON string
    (headscope/ui/attention/component.py), which the element's JSON holds as a string."""
    data = json.loads(element_json)
    return json.loads(data) if isinstance(data, str) else data


def run_async(coro):
    """asyncio.run in a thread of its own: playwright's sync API may hold a running event loop
    in the caller's thread (the browser tests of the same pytest worker), where asyncio.run
    refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def text_value(s: str):
    return ("string_value", s)  # text_input, text_area


def select_value(label: str):
    return ("string_value", label)  # selectbox, radio: the option's label


def slider_value(*v: float):
    return ("double_array_value", [float(x) for x in v])  # slider: [v] or [lo, hi]


def multiselect_value(labels):
    return ("string_array_value", list(labels))


def toggle_value(on: bool):
    return ("bool_value", bool(on))  # checkbox, toggle


def trigger():
    return ("trigger_value", True)  # button


@dataclass
class Run:
    """One action: from sending the rerun to the script_finished that ends it."""
    seconds: float = 0.0  # send -> script_finished (0, 1 or 3), as this client saw it
    status: int | None = None  # script_finished's status; None: no end seen (timeout, closed)
    bytes: int = 0  # ForwardMsg bytes received for the action
    messages: int = 0
    elements: list = field(default_factory=list)  # (element type, widget key or "")
    components: dict = field(default_factory=dict)  # key -> the component's data (json)
    sizes: dict = field(default_factory=dict)  # element type (or "component js") -> bytes
    metrics: dict = field(default_factory=dict)  # st.metric: label -> shown value
    markdown: list = field(default_factory=list)  # st.markdown / st.caption bodies
    exceptions: list = field(default_factory=list)  # st.exception / error texts
    query: str | None = None  # the address bar's query string the run set (None: unchanged)
    error: str = ""  # why the action failed (timeout, connection closed)


def _key_of(widget_id: str) -> str:
    parts = widget_id.split("-", 2)  # "$$ID-<hash>-<key>"
    return parts[2] if len(parts) == 3 and parts[2] != "None" else ""


def _set(state: WidgetState, arm: str, value):
    if arm in ("double_array_value", "string_array_value", "int_array_value"):
        getattr(state, arm).data.extend(value)
    else:
        setattr(state, arm, value)


class Session:
    def __init__(self, base_url: str, cookie: str | None = None, open_timeout: float = 60,
                 fragments: bool = False):
        self.url = base_url.replace("http", "ws", 1).rstrip("/") + "/_stcore/stream"
        self.cookie, self.open_timeout = cookie, open_timeout
        # fragments: as a browser does, a change of widgets drawn by one fragment (st.fragment)
        # reruns that fragment alone (script_finished 3); without, every rerun is a full one
        self.fragments = fragments
        self.fragment_of: dict = {}  # widget key -> the fragment that drew it ("" for none)
        self.ids: dict = {}  # widget key -> id
        self.values: dict = {}  # widget id -> (arm, value) sent with every rerun
        self.pages: dict = {}  # url path ("" for the default page) -> page_script_hash
        self.page_hash = ""
        self.query = ""
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.ws = None
        self._reader = None
        self.upstream = ""  # nginx's X-Headscope-Upstream on the handshake

    async def connect(self):
        headers = {"Cookie": f"headscope_affinity={self.cookie}"} if self.cookie else None
        self.ws = await websockets.connect(
            self.url, subprotocols=["streamlit", "PLACEHOLDER_AUTH_TOKEN"],
            additional_headers=headers, max_size=None, open_timeout=self.open_timeout,
            ping_interval=None)  # the server pings; websockets answers them
        self.upstream = self.ws.response.headers.get("X-Headscope-Upstream", "")
        self._reader = asyncio.create_task(self._read())

    async def _read(self):
        try:
            async for data in self.ws:
                msg = ForwardMsg()
                msg.ParseFromString(data)
                self.inbox.put_nowait((len(data), msg))
        except websockets.ConnectionClosed:
            pass
        self.inbox.put_nowait((0, None))  # closed

    async def close(self):
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)

    def id_of(self, key: str) -> str:
        return self.ids[key]

    async def rerun(self, widgets: dict | None = None, page: str | None = None,
                    query: str | None = None, timeout: float = 120) -> Run:
        """Send one rerun_script (widgets: key -> (arm, value)) and read until it finished."""
        msg = BackMsg()
        cs = msg.rerun_script
        if query is not None:
            self.query = query
        if page is not None:
            self.page_hash = self.pages[page]
        cs.query_string, cs.page_script_hash = self.query, self.page_hash
        drawn_by = {self.fragment_of.get(key, "") for key in widgets or {}}
        if self.fragments and len(drawn_by) == 1:
            cs.fragment_id = drawn_by.pop()
        once = {}
        for key, (arm, value) in (widgets or {}).items():
            wid = self.ids[key]
            if arm == "trigger_value":
                once[wid] = (arm, value)
            else:
                self.values[wid] = (arm, value)
        for wid, (arm, value) in {**self.values, **once}.items():
            state = cs.widget_states.widgets.add()
            state.id = wid
            _set(state, arm, value)
        while not self.inbox.empty():  # anything left over from an earlier action
            self.inbox.get_nowait()
        run = Run()
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        deadline = t0 + timeout
        ended_at = None  # when the last script_finished arrived
        while True:
            until = deadline if ended_at is None else min(deadline, ended_at + GRACE)
            try:
                size, fm = await asyncio.wait_for(self.inbox.get(),
                                                  max(until - time.perf_counter(), 0.001))
            except TimeoutError:
                if ended_at is None:
                    run.error = f"no script_finished in {timeout:.0f} s"
                return run
            if fm is None:
                run.error = run.error or "connection closed"
                return run
            run.bytes += size
            run.messages += 1
            kind = fm.WhichOneof("type")
            if kind == "script_finished" and fm.script_finished != FINISHED_FOR_RERUN:
                run.status, run.seconds = fm.script_finished, time.perf_counter() - t0
                ended_at = time.perf_counter()
            elif kind == "new_session" and ended_at is not None:
                ended_at = None  # a chain: the action ends with the next run
            elif kind == "page_info_changed":
                run.query = fm.page_info_changed.query_string
            elif kind == "navigation":
                for p in fm.navigation.app_pages:
                    self.pages[p.url_pathname] = p.page_script_hash
                    if p.is_default:
                        self.pages[""] = p.page_script_hash
            elif kind == "delta":
                self._delta(fm, run, size)

    def _delta(self, fm, run: Run, size: int):
        if fm.delta.WhichOneof("type") != "new_element":
            return
        el = fm.delta.new_element
        etype = el.WhichOneof("type")
        body = getattr(el, etype)
        wid = getattr(body, "id", "") if etype != "exception" else ""
        key = _key_of(wid) if isinstance(wid, str) and wid.startswith("$$ID-") else ""
        if key:
            self.ids[key] = wid
            self.fragment_of[key] = fm.delta.fragment_id
        run.elements.append((etype, key))
        run.sizes[etype] = run.sizes.get(etype, 0) + size
        if etype == "exception":
            run.exceptions.append(f"{body.type}: {body.message}")
        elif etype == "metric":
            run.metrics[body.label] = body.body
        elif etype == "markdown":
            run.markdown.append(body.body)
        elif etype == "bidi_component" and key:
            code = len(body.js_content) + len(body.css_content) + len(body.html_content)
            run.sizes["component js+css"] = run.sizes.get("component js+css", 0) + code
            try:
                run.components[key] = component_data(body.json)
            except ValueError:
                run.components[key] = None


# Blocking, for many idle or short sessions (tests/browser/test_proxy_limits.py)


def open_socket(base_url: str, cookie: str | None = None, token: str | None = None,
                timeout: float = 60):
    """A websocket to base_url's /_stcore/stream, as a browser opens it (no Origin header;
    token: the _streamlit_xsrf cookie's value, which a browser sends as a subprotocol)."""
    url = base_url.replace("http", "ws", 1) + "/_stcore/stream"
    headers = {"Cookie": cookie} if cookie else None
    return connect(url, subprotocols=["streamlit", token or "PLACEHOLDER_AUTH_TOKEN"],
                   additional_headers=headers, open_timeout=timeout, max_size=None,
                   ping_interval=None)


def run_script(ws, query_string: str = "", timeout: float = 120) -> str:
    """Ask for a script run of the default page and read until it finishes; the session id."""
    msg = BackMsg()
    msg.rerun_script.query_string = query_string
    msg.rerun_script.page_script_hash = ""
    ws.send(msg.SerializeToString())
    session_id = ""
    while True:
        fwd = ForwardMsg()
        fwd.ParseFromString(ws.recv(timeout=timeout))
        kind = fwd.WhichOneof("type")
        if kind == "new_session":
            session_id = fwd.new_session.initialize.session_id or session_id
        elif kind == "script_finished" and fwd.script_finished in (0, 1):
            if fwd.script_finished == 1:
                raise RuntimeError("the script did not compile")
            return session_id
