"""Uploads Streamlit keeps count in the worker's budget (ui.st_internals.cap_uploads): at the
protocol level, one session PUTs full-size files to /_stcore/upload_file until it is refused,
and another session on the same server is not."""

import secrets

import pytest

from testkit.protocol import open_socket, run_script
from tests.browser.test_proxy_limits import get, put_upload
from ui.budget import UPLOAD_SESSION_BUDGET

pytestmark = pytest.mark.slow
FILE = 9 * 2**20  # under the 10 MB a file may have


def session(base: str):
    """An open websocket whose script has run: (socket, session id, xsrf token)."""
    xsrf = next(c.split("=", 1)[1].split(";")[0] for c in  # the health check sets it
                get(base + "/_stcore/health")[1].get_all("Set-Cookie")
                if c.startswith("_streamlit_xsrf="))
    ws = open_socket(base, cookie=f"_streamlit_xsrf={xsrf}", token=xsrf)
    return ws, run_script(ws), xsrf


def test_one_session_cannot_pile_up_uploads(app_url):
    assert UPLOAD_SESSION_BUDGET // FILE == 2  # what the counts below assume
    ws, sid, xsrf = session(app_url)
    other, other_sid, other_xsrf = session(app_url)
    with ws, other:
        first = secrets.token_hex(8)
        assert put_upload(app_url, sid, xsrf, "a", FILE, FILE, file_id=first) == 204
        assert put_upload(app_url, sid, xsrf, "a", FILE, FILE) == 204
        assert put_upload(app_url, sid, xsrf, "a", FILE, FILE) == 413  # a third: refused
        assert put_upload(app_url, sid, xsrf, "a", 1024, 1024) == 204  # what is left fits
        assert put_upload(app_url, sid, xsrf, "a", 3 * 2**20, 3 * 2**20) == 413
        # the same file sent again replaces itself, and another session has its own share
        assert put_upload(app_url, sid, xsrf, "a", FILE, FILE, file_id=first) == 204
        assert put_upload(app_url, other_sid, other_xsrf, "b", FILE, FILE) == 204
