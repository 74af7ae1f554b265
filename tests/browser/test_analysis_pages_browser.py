"""All heads, Head lab and Two readings in a real browser: each loads and draws its main figure
with no Streamlit exception; a click on the two-readings grid selects that head."""

import re

from testkit.browser import no_exception


def open_page(page, app_url, title):
    """Start at the app's root and follow the sidebar link, as a student does."""
    page.goto(app_url)
    link = page.get_by_role("link", name=re.compile(rf"^\W*{title}$"))  # case-sensitive
    link.wait_for(timeout=60_000)
    link.click()


def svg_texts(locator) -> list:
    return locator.evaluate_all("els => els.map(e => e.textContent)")


def test_all_heads_draws_the_atlas(app_url, page):
    open_page(page, app_url, "All heads")
    title = page.locator(".st-key-ah_atlas .gtitle")
    title.wait_for(timeout=60_000)
    assert "6 layers × 12 heads" in title.text_content()
    labels = svg_texts(page.locator(".st-key-ah_atlas .textpoint"))
    assert len(labels) == 72 and set(labels) <= {"CLS", "SEP", "punct", "prev", "next", "self",
                                                 "broad", "het"}
    page.locator(".st-key-ah_rollout .main-svg").first.wait_for(timeout=60_000)
    assert no_exception(page)


def test_head_lab_draws_the_importance(app_url, page):
    open_page(page, app_url, "Head lab")
    page.locator(".st-key-hl_importance .main-svg").first.wait_for(timeout=60_000)
    page.locator(".st-key-hl_pruning .main-svg").first.wait_for(timeout=60_000)
    # the metric's value, waited for: a rerun may redraw it after the charts are in place
    page.get_by_text("0 of 72", exact=True).wait_for(timeout=30_000)
    assert no_exception(page)


def test_two_readings_click_selects_a_head(app_url, page):
    open_page(page, app_url, "Two readings")
    grid = page.locator(".st-key-tr_grid")
    grid.locator(".main-svg").first.wait_for(timeout=60_000)
    titles = page.locator(".st-key-tr_pair_maps .annotation-text")
    titles.first.wait_for(timeout=60_000)
    assert svg_texts(titles) != ["A · L2 H3", "B · L2 H3"]
    # click the cell where column H3 meets row L2, found from the axis labels
    x = grid.locator(".xtick text", has_text=re.compile("^H3$")).bounding_box()
    y = grid.locator(".ytick text", has_text=re.compile("^L2$")).bounding_box()
    page.mouse.click(x["x"] + x["width"] / 2, y["y"] + y["height"] / 2)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.st-key-tr_pair_maps .annotation-text')]"
        ".map(e => e.textContent).join('|') === 'A · L2 H3|B · L2 H3'", timeout=30_000)
    assert no_exception(page)
