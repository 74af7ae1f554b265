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
    """The browser fetches the component's module and CSS by URL (ui/attention/component.py):
    the running server answers with the bundle's own text (once the component is mounted)."""
    from urllib.request import urlopen

    from testkit.browser import wait_for_component
    from ui.attention import bundle, component

    page.goto(app_url + "/?text=Hi%20there.")
    wait_for_component(page, "ex_focus_bars", ["[CLS]", "hi", "there", ".", "[SEP]"])

    for name, text, kind in ((component.JS_FILE, bundle.streamlit_js(), "javascript"),
                             (component.CSS_FILE, bundle.css(), "css")):
        with urlopen(f"{app_url}/_stcore/bidi-components/{component.NAME}/{name}") as r:
            assert r.status == 200 and kind in r.headers["Content-Type"]
            assert r.read().decode("utf-8") == text
