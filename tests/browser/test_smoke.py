"""The app starts under `streamlit run` and shows the model in a real browser."""


from testkit.browser import no_exception


def test_app_starts_and_shows_model(app_url, page):
    page.goto(app_url)
    page.get_by_text("6 layers × 12 heads").first.wait_for(timeout=60_000)
    assert no_exception(page)


def test_about_opens_with_the_guide(app_url, page):
    page.goto(app_url + "/about")
    page.get_by_text("How it checks itself").first.wait_for(timeout=60_000)
    page.get_by_text("Lesson 1: why many heads?").first.wait_for(timeout=60_000)
    assert no_exception(page)


def test_the_server_serves_the_attention_component_files(app_url, page):
    """The elements name the component's entry module and CSS by URL, and the browser fetches
    them and every module they import, each from its own URL: the running server found the
    package's manifest (headscope/pyproject.toml) and answers with the modules' own text."""
    from urllib.request import urlopen

    from headscope.ui.attention import bundle, component
    from testkit.browser import wait_for_component

    page.goto(app_url + "/?text=Hi%20there.")
    wait_for_component(page, "ex_focus_bars", ["[CLS]", "hi", "there", ".", "[SEP]"])
    fetched = page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    for name in (*bundle.CORE, "host_streamlit.js", bundle.CSS_FILE):
        text = bundle.source(name)
        url = f"{app_url}/_stcore/bidi-components/{component.NAME}/{name}"
        assert url in fetched, (url, [f for f in fetched if "bidi" in f])
        with urlopen(url) as r:
            kind = "javascript" if name.endswith(".js") else "css"
            assert r.status == 200 and kind in r.headers["Content-Type"]
            assert r.read().decode("utf-8") == text


def test_streamlit_run_app_py_draws_the_explorer(tmp_path, page):
    """`streamlit run app.py` from the checkout, Streamlit's convention and what hosted Streamlit
    runs, is the app: the checkout's app.py runs the frame."""
    from testkit.browser import wait_for_explorer
    from testkit.server import ROOT, start_app, stop_app

    proc, url = start_app(tmp_path / "streamlit.log", script=ROOT / "app.py")
    try:
        page.goto(url + "/?text=Hi%20there.")
        wait_for_explorer(page, ["[CLS]", "hi", "there", ".", "[SEP]"], 12, timeout_ms=90_000)
        page.get_by_text("6 layers × 12 heads").first.wait_for(timeout=30_000)
        assert no_exception(page)
    finally:
        stop_app(proc)
