"""A browserless Streamlit session over its websocket protocol (Streamlit 1.67: one protobuf per
binary frame, BackMsg up, ForwardMsg down), for tests that need many sessions or a session's
id without a browser.

    ws = open_socket("http://127.0.0.1:8501", cookie="headscope_affinity=abc")
    session_id = run_script(ws)          # the default page; waits for "script finished"
"""

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect


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
