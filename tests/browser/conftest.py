"""Real-browser fixtures: the app (`streamlit run headscope/frame/headscope_asgi.py`) on a free
port, and Debian's chromium driven by playwright. Never `playwright install`: the browser comes
from apt (see .ci/run)."""

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


# The six tiny random encoder families other than BERT and two decoders (testkit/families.py),
# offered as tiny-<family>
FAMILIES = ["roberta", "distilbert", "electra-discriminator", "albert", "deberta", "modernbert",
            "llama", "gpt2"]


@pytest.fixture(scope="session")
def family_app(tmp_path_factory):
    """One server offering a tiny random model of every family through HEADSCOPE_MODELS:
    (base url, {family: saved directory})."""
    from testkit.families import save_tiny_family

    require_chromium()
    saved = {f: save_tiny_family(f, tmp_path_factory.mktemp(f) / f) for f in FAMILIES}
    env = {"HEADSCOPE_MODELS": ";".join(f"tiny-{f}={p}" for f, p in saved.items())}
    proc, url = start_app(tmp_path_factory.mktemp("families") / "streamlit.log", env_extra=env)
    yield url, saved
    stop_app(proc)
