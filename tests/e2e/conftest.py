"""Real-browser fixtures: `streamlit run app.py` on a free port, and Debian's chromium driven by
playwright. Never `playwright install`: the browser comes from apt (see .ci/run)."""

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.conftest import ROOT, require

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(log_path, env_extra=None, port=None, launcher=("-m", "streamlit")):
    """Start the app; return (process, base_url) once /_stcore/health answers ok. launcher:
    what python runs in place of `-m streamlit` (a benchmark's wrapper that takes the same
    arguments)."""
    port = port or free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env_extra or {})}
    log = open(log_path, "w")  # a file, not a pipe: a full pipe would block the server
    proc = subprocess.Popen(
        [sys.executable, *launcher, "run", str(ROOT / "app.py"),
         "--server.port", str(port), "--server.address", "127.0.0.1",
         "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited early; see {log_path}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError(f"streamlit did not become healthy in 60 s; see {log_path}")


def stop_app(proc):
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    require(os.path.exists(CHROMIUM), "Debian's chromium is not installed (apt-get install "
            "chromium)")
    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    proc, url = start_app(log)
    yield url
    stop_app(proc)


@pytest.fixture(scope="session")
def browser():
    require(os.path.exists(CHROMIUM), "Debian's chromium is not installed (apt-get install "
            "chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "playwright is not installed")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = ctx.new_page()
    yield pg
    ctx.close()


def no_exception(pg):
    """Streamlit renders an uncaught exception as [data-testid=stException]."""
    return pg.locator('[data-testid="stException"]').count() == 0
