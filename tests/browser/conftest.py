"""Real-browser fixtures: `streamlit run app.py` on a free port, and Debian's chromium driven by
playwright. Never `playwright install`: the browser comes from apt (see .ci/run)."""

import os
from pathlib import Path

import pytest

from testkit.browser import CHROMIUM, launch
from testkit.server import start_app, stop_app
from tests.conftest import require


def require_chromium():
    require(os.path.exists(CHROMIUM), "Debian's chromium is not installed (apt-get install "
            "chromium)")


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    require_chromium()
    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    proc, url = start_app(log)
    yield url
    stop_app(proc)


@pytest.fixture(scope="session")
def browser():
    require_chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "playwright is not installed")
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = ctx.new_page()
    yield pg
    ctx.close()


@pytest.fixture(scope="session")
def component_url(tmp_path_factory):
    """A server running tests/browser/component_app.py: the component alone on test data."""
    require_chromium()
    log = tmp_path_factory.mktemp("component") / "streamlit.log"
    proc, url = start_app(log, script=Path(__file__).with_name("component_app.py"))
    yield url
    stop_app(proc)
