"""`make serve`'s limits, at the protocol level (no chromium): what the proxy tells strangers,
uploads larger than the app's 10 MB refused by Streamlit and by nginx, the longest link the app
writes, and one client's 600 idle websockets not locking out a new visitor while 60 sessions
from the same address (each with its own cookie, as a NAT'd classroom) still work."""

import http.client
import secrets
import urllib.request
from urllib.parse import quote, urlsplit

import pytest

from testkit.protocol import open_socket, run_script
from testkit.proxy import NGINX, start_proxy, stop_proxy
from tests.conftest import require

pytestmark = pytest.mark.slow
UPLOAD = 150 * 2**20


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    require(NGINX is not None, "nginx is not installed (apt-get install nginx; .ci/run does)")
    proc, state = start_proxy(tmp_path_factory.mktemp("serve"), workers=1,
                              upstream_header=False)
    yield state["url"], f"http://127.0.0.1:{state['workers'][0]['port']}"
    stop_proxy(proc)


def get(url: str, cookie: str | None = None):
    req = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.headers


def test_headers_say_nothing_about_the_inside(served):
    proxy, worker = served
    status, headers = get(proxy + "/")
    assert status == 200
    assert "X-Headscope-Upstream" not in headers
    assert headers["Server"] == "nginx"  # no version
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Content-Security-Policy"] == "frame-ancestors 'self'"
    assert get(proxy + "/_stcore/metrics")[0] == 404
    assert get(worker + "/_stcore/metrics")[0] == 200  # the operator's, on the worker's port


def put_upload(base: str, session_id: str, xsrf: str, affinity: str, size: int,
               send: int, file_id: str | None = None) -> int:
    """PUT a file of `size` bytes (Content-Length says so) to the session's upload endpoint,
    sending only `send` bytes of it; the response status."""
    u = urlsplit(base)
    boundary = "headscopeboundary"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"x.conllu\"\r\nContent-Type: text/plain\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.putrequest("PUT", f"/_stcore/upload_file/{session_id}/"
                         f"{file_id or secrets.token_hex(8)}")
    conn.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
    conn.putheader("Content-Length", str(len(head) + size + len(tail)))
    conn.putheader("Cookie", f"_streamlit_xsrf={xsrf}; headscope_affinity={affinity}")
    conn.putheader("X-Xsrftoken", xsrf)
    conn.endheaders()
    try:
        conn.send(head + b"x" * min(send, size) + (tail if send >= size else b""))
    except OSError:  # refused while sending: the status is still read below
        pass
    status = conn.getresponse().status
    conn.close()
    return status


@pytest.mark.parametrize("via", ["worker", "proxy"])
def test_an_upload_above_10_mb_is_refused(served, via):
    base = served[0] if via == "proxy" else served[1]
    affinity = secrets.token_hex(8)
    xsrf = next(c.split("=", 1)[1].split(";")[0] for c in  # the health check sets it
                get(base + "/_stcore/health", f"headscope_affinity={affinity}")[1]
                .get_all("Set-Cookie") if c.startswith("_streamlit_xsrf="))
    with open_socket(base, cookie=f"headscope_affinity={affinity}; _streamlit_xsrf={xsrf}",
                     token=xsrf) as ws:
        session_id = run_script(ws)
        assert put_upload(base, session_id, xsrf, affinity, 1024, 1024) == 204  # a small one
        assert put_upload(base, session_id, xsrf, affinity, UPLOAD, 64 * 1024) == 413


def test_the_longest_link_the_app_writes_loads(served):
    proxy, _ = served
    cjk = "注意力機制的每個頭" * 223  # 2,007 characters: cut to the app's 2,000
    cjk = cjk[:2000]
    emoji = "🙂" * 2000  # 4 bytes a character: 24 KB percent-encoded
    url = f"{proxy}/?text={quote(cjk)}&pair={quote(emoji)}"
    assert len(url.encode()) > 40_000
    assert get(url)[0] == 200


def test_idle_websockets_of_one_client_do_not_lock_out_a_class(served):
    proxy, _ = served
    idle = [open_socket(proxy) for _ in range(600)]  # no cookie: only the address limit binds
    try:
        assert get(proxy + "/")[0] == 200  # a new visitor from the same address
        class_ = [open_socket(proxy, cookie=f"headscope_affinity={secrets.token_hex(8)}")
                  for _ in range(60)]
        try:
            for ws in class_:
                assert run_script(ws)
        finally:
            for ws in class_:
                ws.close()
        one = f"headscope_affinity={secrets.token_hex(8)}"  # one browser: at most 30
        opened = []
        with pytest.raises(Exception, match="429"):
            for _ in range(40):
                opened.append(open_socket(proxy, cookie=one))
        assert len(opened) == 30
        for ws in opened:
            ws.close()
    finally:
        for ws in idle:
            ws.close()

