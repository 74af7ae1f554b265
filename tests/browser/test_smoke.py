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
