"""`make serve`: real nginx in front of two app processes, driven by Debian's chromium.

Which worker holds a session is read from the X-Headscope-Upstream header nginx adds to the
websocket's handshake (testkit.proxy.watch_websockets): the session lives where its websocket
is. A script run is counted when the websocket delivers Streamlit's "script finished".
"""

import hashlib
import os
import signal
import socket
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import streamlit
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from headscope.ui.presets import DEFAULT_TEXT
from testkit.browser import MAPS_DRAWN, no_exception, type_sentence
from testkit.proxy import (
    NGINX,
    alive,
    children,
    read_state,
    start_proxy,
    stop_proxy,
    watch_websockets,
    worker_of,
)
from testkit.server import wait_healthy
from tests.browser.conftest import require_chromium
from tests.conftest import require

TIMEOUT_MS = 90_000  # two app processes and chromium share two busy cores


def require_nginx():
    require(NGINX is not None, "nginx is not installed (apt-get install nginx; .ci/run does)")


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    require_nginx()
    require_chromium()
    run_dir = tmp_path_factory.mktemp("serve")
    proc, state = start_proxy(run_dir, workers=2)
    yield state
    stop_proxy(proc)


@pytest.fixture(scope="module")
def tokens(bundled):
    return lambda text: bundled.encode(text).tokens


def wait_until(page, condition, what: str, timeout_s: float = TIMEOUT_MS / 1000):
    """Until condition() holds; page.wait_for_timeout lets playwright deliver its events (the
    DevTools protocol's handshakes, the websocket's frames) meanwhile."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        page.wait_for_timeout(50)


# Streamlit's own test hooks on the app's root: no script running, websocket connected.
SETTLED = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.dataset.testScriptState === 'notRunning'
    && app.dataset.testConnectionState === 'CONNECTED';
}"""


# The browser asked for a script run and has not seen it start.
WAITING_FOR_A_RUN = """() => document.querySelector('[data-testid="stApp"]')
  ?.dataset.testScriptState === 'rerunRequested'"""


class Session:
    """One browser (its own context, so its own cookies) with the Explorer open."""

    def __init__(self, browser, url: str):
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        self.context.set_default_timeout(TIMEOUT_MS)
        self.page = self.context.new_page()
        self.upstreams = watch_websockets(self.context, self.page)  # one per websocket
        self.runs = []  # per websocket: script runs that finished, as the browser got them
        self.page.on("websocket", self._socket)
        self.document = self.page.goto(url).headers.get("x-headscope-upstream")
        wait_until(self.page, lambda: self.upstreams, "the websocket's handshake")

    def _socket(self, ws):
        index = len(self.runs)
        self.runs.append(0)
        ws.on("framereceived", lambda payload: self._frame(index, payload))

    def _frame(self, index, payload):
        if isinstance(payload, bytes | bytearray):
            msg = ForwardMsg()
            msg.ParseFromString(bytes(payload))
            # a layer move reruns the Explorer alone (a fragment): finished with status 3
            done = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
            if msg.WhichOneof("type") == "script_finished" and msg.script_finished in done:
                self.runs[index] += 1

    def worker(self, state) -> dict:
        return worker_of(self.upstreams[-1], state)

    def slider(self):
        """The Explorer's layer slider (its component's own control)."""
        return self.page.locator(".st-key-ex_view").get_by_role("slider", name="Layer")

    def layer(self) -> int:
        return int(self.slider().input_value())

    def link(self) -> dict:
        return parse_qs(urlsplit(self.page.url).query)

    def wait_link(self, text: str, layer: int):
        """Until the address bar holds this sentence and layer (the app writes them)."""
        wait_until(self.page, lambda: self.link().get("text") == [text]
                   and self.link().get("layer") == [str(layer)], f"the link to layer {layer}")

    def wait_maps(self, tokens):
        heads = 12  # the bundled model
        self.page.wait_for_function(MAPS_DRAWN, arg=[list(tokens), heads], polling=100)

    def settle(self, runs: int, what: str):
        """Until `runs` script runs have finished in all and the page has shown the last."""
        wait_until(self.page, lambda: sum(self.runs) >= runs, what)
        self.page.wait_for_function(SETTLED, polling=100)

    def rerun(self, action):
        """Do something that reruns the script; return once that run is on the page."""
        before = sum(self.runs)
        action()
        self.settle(before + 1, "the script run to finish")

    def type(self, text: str, tokens):
        self.rerun(lambda: type_sentence(self.page, text))
        self.wait_maps(tokens)

    def move_layer(self) -> int:
        """One step right on the layer slider, or left at the last layer (drawn in the
        browser: no script run); the new layer."""
        now, top = self.layer(), int(self.slider().get_attribute("max"))
        key, layer = ("ArrowRight", now + 1) if now < top else ("ArrowLeft", now - 1)
        self.slider().focus()
        self.slider().press(key)
        assert self.layer() == layer
        return layer

    def rerun_key(self):
        """Streamlit's R (rerun) key: a script run of the page as it is."""
        self.page.evaluate("document.activeElement?.blur()")  # R in a widget is typing
        self.rerun(lambda: self.page.keyboard.press("r"))

    def close(self):
        self.context.close()


def test_fresh_visitors_are_spread_over_both_workers_and_stay_on_theirs(proxy):
    """Sixteen cookieless first visits (a browser's first request): each gets the affinity
    cookie, and every later request carrying it reaches the same worker."""
    first = {}
    for _ in range(16):
        with urllib.request.urlopen(proxy["url"] + "/") as r:
            cookie = r.headers["Set-Cookie"].split(";")[0]
            first[cookie] = worker_of(r.headers["X-Headscope-Upstream"], proxy)["index"]
    assert cookie.startswith("headscope_affinity=") and len(first) == 16
    assert set(first.values()) == {0, 1}  # all 16 on one worker: 1 chance in 32,768
    for cookie, index in first.items():
        for _ in range(3):
            req = urllib.request.Request(proxy["url"] + "/_stcore/health",
                                         headers={"Cookie": cookie})
            with urllib.request.urlopen(req) as r:
                set_cookies = r.headers.get_all("Set-Cookie") or []  # Streamlit sets its own
                assert not any("headscope_affinity" in c for c in set_cookies)  # key kept
                assert worker_of(r.headers["X-Headscope-Upstream"], proxy)["index"] == index


def test_a_large_file_reaches_a_slow_reader_whole(proxy):
    """Streamlit's largest script through nginx to a client with a small receive buffer: nginx
    must not need to park it on disk (run as root, its workers could not write there)."""
    js = max((Path(streamlit.__file__).parent / "static" / "static" / "js").glob("*.js"),
             key=lambda p: p.stat().st_size)
    port = int(proxy["url"].rsplit(":", 1)[1])
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: it sets
        s.connect(("127.0.0.1", port))                          # the window offered
        s.sendall(f"GET /static/js/{js.name} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                  f"Connection: close\r\n\r\n".encode())
        chunks = []
        while chunk := s.recv(512):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    assert len(body) == js.stat().st_size  # nginx cut it short when it could not buffer
    assert hashlib.sha256(body).digest() == hashlib.sha256(js.read_bytes()).digest()


def test_two_sessions_keep_their_own_state_across_ten_reruns(proxy, browser, tokens):
    texts = ["The cat sat on the mat.", "Rain is expected in the north by the weekend."]
    sessions = [Session(browser, proxy["url"]) for _ in texts]
    try:
        for s, text in zip(sessions, texts):
            s.wait_maps(tokens(DEFAULT_TEXT))
            s.type(text, tokens(text))
        for _ in range(10):  # interleaved: a rerun of one between two of the other
            for s, text in zip(sessions, texts):
                layer = s.move_layer()
                s.rerun_key()
                s.wait_link(text, layer)
                s.wait_maps(tokens(text))
        for s, text in zip(sessions, texts):
            assert s.page.locator('[data-testid="stSidebar"] textarea').first.input_value() \
                == text
            assert len(s.upstreams) == 1  # one websocket all along: never moved
            assert s.document == s.upstreams[0]  # the page and its websocket: one worker
            assert no_exception(s.page)
    finally:
        for s in sessions:
            s.close()


def sessions_on_both_workers(browser, state) -> dict:
    """{worker index: a session on it}: new browsers until each worker holds one (with even
    odds per browser, sixteen all on one worker is 1 chance in 32,768)."""
    found = {}
    for _ in range(16):
        s = Session(browser, state["url"])
        index = s.worker(state)["index"]
        if index in found:
            s.close()
        else:
            found[index] = s
        if len(found) == 2:
            return found
    for s in found.values():
        s.close()
    raise AssertionError("sixteen browser sessions all reached the same worker")


def test_a_killed_workers_session_comes_back_on_the_other_from_its_link(proxy, browser,
                                                                         tokens):
    """A worker dies while one of its students waits for a run. That browser reconnects
    through nginx to the live worker and asks it for the run again; the live worker, which
    never saw this session, starts a new one from the page's link: the same sentence and view.
    The other worker's session notices nothing.

    (Streamlit's page asks for the run again after a reconnect only when it was waiting for
    one; an idle page reconnects quietly and its next action starts the new session.)"""
    by_worker = sessions_on_both_workers(browser, proxy)
    doomed, survivor = by_worker[0], by_worker[1]
    dead, live = proxy["workers"][0], proxy["workers"][1]
    texts = {doomed: "The cat sat on the mat.",
             survivor: "Rain is expected in the north by the weekend."}
    try:
        for s, text in texts.items():
            s.wait_maps(tokens(DEFAULT_TEXT))
            s.type(text, tokens(text))
        doomed.move_layer()
        layer = doomed.move_layer()  # a view of its own: not the default layer
        doomed.wait_link(texts[doomed], layer)
        doomed.wait_maps(tokens(texts[doomed]))
        link = doomed.link()

        # Mid-session: the worker freezes, the student asks for a run (Streamlit's Rerun, the
        # R key) that is never answered, then the worker dies.
        os.kill(dead["pid"], signal.SIGSTOP)
        doomed.page.evaluate("document.activeElement?.blur()")  # R in a widget is typing
        doomed.page.keyboard.press("r")
        doomed.page.wait_for_function(WAITING_FOR_A_RUN, polling=100)
        os.kill(dead["pid"], signal.SIGKILL)

        # The other worker's session goes on as if nothing happened.
        for _ in range(3):
            survivor.wait_link(texts[survivor], survivor.move_layer())
            survivor.wait_maps(tokens(texts[survivor]))
        assert len(survivor.upstreams) == 1 and survivor.worker(proxy) == live
        assert no_exception(survivor.page)

        # The dead worker's session: a new websocket, on the live worker, and a run there.
        wait_until(doomed.page, lambda: len(doomed.runs) == 2 and doomed.runs[1] > 0,
                   "a script run on a new websocket")
        doomed.page.wait_for_function(SETTLED, polling=100)
        assert len(doomed.upstreams) == 2 and doomed.worker(proxy) == live
        assert doomed.link() == link and doomed.layer() == layer
        doomed.wait_maps(tokens(texts[doomed]))
        assert doomed.page.locator('[data-testid="stSidebar"] textarea').first.input_value() \
            == texts[doomed]
        assert no_exception(doomed.page)
        assert doomed.page.get_by_text("Connection error").count() == 0
        # and it goes on there
        doomed.wait_link(texts[doomed], doomed.move_layer())
        doomed.wait_maps(tokens(texts[doomed]))
        assert len(doomed.upstreams) == 2
    finally:
        for s in by_worker.values():
            s.close()

    # The launcher starts the dead worker again, on its port.
    wait_healthy(f"http://127.0.0.1:{dead['port']}", timeout=180)
    restarted = next(w for w in read_state(proxy["run_dir"])["workers"]
                     if w["index"] == dead["index"])
    assert restarted["pid"] != dead["pid"] and alive(restarted["pid"])


def test_ctrl_c_stops_everything_the_launcher_started(tmp_path):
    require_nginx()
    proc, state = start_proxy(tmp_path / "serve", workers=2)
    pids = [w["pid"] for w in state["workers"]] + [state["nginx_pid"]]
    pids += children(state["nginx_pid"])  # nginx's own worker process
    try:
        for w in state["workers"]:
            wait_healthy(f"http://127.0.0.1:{w['port']}", timeout=10)
        assert len(pids) >= 4 and all(alive(p) for p in pids)
    finally:
        code = stop_proxy(proc, signal.SIGINT)
    assert code == 0
    assert [p for p in pids if alive(p)] == []
    with pytest.raises(OSError):
        urllib.request.urlopen(state["url"] + "/_stcore/health", timeout=5)
