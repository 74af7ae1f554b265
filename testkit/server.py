"""`streamlit run headscope/frame/headscope_asgi.py` (the app with its route) on a free port,
healthy before it is used, stopped with its children."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from headscope.files import SERVER

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc=None, timeout: float = 60, log_path=None):
    """Poll url/_stcore/health until it answers ok; raise if proc exits or time runs out."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"streamlit exited early; see {log_path}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not become healthy in {timeout:.0f} s; see {log_path}")


def start_app(log_path, env_extra=None, port=None, launcher=("-m", "streamlit"), script=None,
              cwd=ROOT):
    """Start the app; return (process, base_url) once /_stcore/health answers ok. launcher:
    what python runs in place of `-m streamlit` (a benchmark's wrapper that takes the same
    arguments); script: another Streamlit script than the app's (a test's own); cwd: where it
    runs (another checkout's, whose headscope `-m streamlit` then imports)."""
    port = port or free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env_extra or {})}
    log = open(log_path, "w")  # a file, not a pipe: a full pipe would block the server
    proc = subprocess.Popen(
        [sys.executable, *launcher, "run", str(script or SERVER),
         "--server.port", str(port), "--server.address", "127.0.0.1",
         "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, 60, log_path)
    except RuntimeError:
        proc.kill()
        raise
    return proc, url


def stop_app(proc):
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
