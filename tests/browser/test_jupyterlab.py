"""End to end: a real JupyterLab (PyPI) on 127.0.0.1 with a token, a notebook that calls
headscope's head_view, run in chromium: the view is drawn, and every request the page makes
stays on 127.0.0.1 (recorded; anything else would be aborted and fail the test)."""

import pytest

from testkit.jupyter import APP_READY, notebook, run_all, start_lab, stop_lab
from tests.browser.conftest import require_chromium

TEXT = "The cat sat on the mat because it was tired."


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_head_view_draws_in_jupyterlab_offline(browser, bundled, tmp_path):
    require_chromium()
    notebook(tmp_path / "views.ipynb",
             "from headscope.widgets import head_view\n"
             f"head_view({TEXT!r}, layer=2)")
    proc, url, token = start_lab(tmp_path, tmp_path / "lab.log")
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    seen, outside = [], []
    ctx.on("request", lambda r: seen.append(r.url))

    def route(r):
        if r.request.url.startswith((url + "/", "blob:", "data:")):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    page = ctx.new_page()
    try:
        page.goto(f"{url}/lab/tree/views.ipynb?token={token}")
        page.wait_for_function(APP_READY, timeout=60_000)
        run_all(page)
        tokens = " ".join(bundled.attend(TEXT).tokens)
        page.wait_for_function("t => { const h = document.querySelector('div.hs-host');"
                               " return !!h && h.dataset.drawn === t; }", arg=tokens,
                               timeout=60_000)
        host = page.locator("div.hs-host")
        assert host.get_attribute("data-layer") == "3"
        assert int(host.get_attribute("data-lines")) > 0
    finally:
        ctx.close()
        stop_lab(proc)
    assert not outside, outside
    assert seen and all(u.startswith((url + "/", "blob:", "data:")) for u in seen)
