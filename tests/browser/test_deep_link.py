"""A fresh server whose first visitor opens a deep link still gets the frame (sidebar, all pages).
Streamlit's legacy pages/ mode would otherwise run that page alone on the first request."""


from testkit.browser import no_exception
from testkit.server import start_app, stop_app


def test_first_request_deep_link_gets_the_frame(browser, tmp_path):
    proc, url = start_app(tmp_path / "fresh.log")  # its own server: this must be the first run
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(url + "/all_heads")
        page.locator('[data-testid="stSidebar"] textarea').first.wait_for(timeout=60_000)
        page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
        links = page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()
        assert any("All heads" in x for x in links) and any("Explorer" in x for x in links)
        assert "/all_heads" in page.url and no_exception(page)
        page.close()
    finally:
        stop_app(proc)
