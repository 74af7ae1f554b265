"""The Explorer in Debian's chromium: typing a sentence redraws every head; XSS stays text."""

import pytest

from testkit.browser import (
    SINGLE_SHOWS,
    box_of,
    no_exception,
    sentence_box,
    type_sentence,
    wait_for_grid,
)
from ui.presets import DEFAULT_TEXT


@pytest.fixture(scope="module")
def tokens(bundled):
    return lambda text: bundled.encode(text).tokens


def test_typed_sentence_redraws_every_head_beside_the_single_head(app_url, page, tokens,
                                                                   bundled, tmp_path):
    heads = bundled.config.num_attention_heads
    page.goto(app_url)
    wait_for_grid(page, tokens(DEFAULT_TEXT), heads)
    text = "The astronomer saw the man with a telescope."
    type_sentence(page, text)
    wait_for_grid(page, tokens(text), heads)
    assert page.evaluate("document.querySelector('.st-key-ex_grid .js-plotly-plot').data.length") \
        == heads
    page.wait_for_function(SINGLE_SHOWS, arg=tokens(text), timeout=30_000)
    assert page.locator(".st-key-ex_single .js-plotly-plot").first.is_visible()
    # the grid and the single-head map share the first 1280×800 screen, no sideways scrolling
    grid_box, single_box = box_of(page, "ex_grid"), box_of(page, "ex_single")
    assert grid_box["x"] + grid_box["width"] <= single_box["x"]
    assert single_box["x"] + single_box["width"] <= 1280 and single_box["y"] < 800
    assert grid_box["y"] < 800
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert no_exception(page)
    page.screenshot(path=str(tmp_path / "explorer.png"))
    assert (tmp_path / "explorer.png").stat().st_size > 10_000


def test_html_in_the_sentence_is_shown_as_text_and_never_runs(app_url, page, tokens, bundled):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(app_url)
    wait_for_grid(page, tokens(DEFAULT_TEXT), bundled.config.num_attention_heads)
    xss = "<img src=x onerror=alert(1)> <script>alert(2)</script>"
    type_sentence(page, xss)
    wait_for_grid(page, tokens(xss), bundled.config.num_attention_heads)
    assert dialogs == []
    assert page.locator('img[src="x"]').count() == 0
    assert page.locator("script:text('alert(2)')").count() == 0
    assert sentence_box(page).input_value() == xss
    assert no_exception(page)


def test_presentation_link_hides_the_sidebar_and_enlarges_the_page(app_url, page, tokens,
                                                                  bundled, tmp_path):
    """A link with present=1: no sidebar, larger text, a bigger grid, and the sentence box in a
    row above the page, where typing still redraws every head; leaving brings the sidebar back."""
    heads = bundled.config.num_attention_heads
    page.goto(app_url + "/?layer=2")
    wait_for_grid(page, tokens(DEFAULT_TEXT), heads)
    normal = box_of(page, "ex_grid")["height"]

    page.goto(app_url + "/?layer=2&present=1")
    wait_for_grid(page, tokens(DEFAULT_TEXT), heads)
    assert page.locator('[data-testid="stSidebar"]').count() == 0
    assert page.evaluate("getComputedStyle(document.documentElement).fontSize") == "20px"
    assert box_of(page, "ex_grid")["height"] > 1.2 * normal
    box = page.locator('[data-testid="stMain"] textarea').first
    bar = page.locator('header[data-testid="stHeader"]').bounding_box()
    assert box.bounding_box()["y"] >= bar["y"] + bar["height"]  # the sentence is not under it
    box.click()
    box.press("Control+a")
    box.press_sequentially("The cat sat on the mat.")
    box.press("Control+Enter")
    wait_for_grid(page, tokens("The cat sat on the mat."), heads)
    page.screenshot(path=str(tmp_path / "presentation.png"))
    assert no_exception(page)
    # read once, then off the address bar: a teacher copying it gives students a normal link
    page.wait_for_function("() => !location.search.includes('present=')", timeout=30_000)

    page.get_by_role("button", name="Leave presentation").click()
    page.locator('[data-testid="stSidebar"] textarea').first.wait_for(timeout=30_000)
    # the copy-link box: this server's own address, the view, and a projector link apart
    page.get_by_role("button", name="Copy link").click()
    codes = page.locator('[data-testid="stCode"] code')
    codes.nth(1).wait_for(timeout=30_000)
    students, projector = codes.nth(0).inner_text(), codes.nth(1).inner_text()
    assert students.replace("\n", "").startswith(app_url + "/?")
    assert "model=bundled" in students and "layer=2" in students and "present" not in students
    assert projector.replace("\n", "").endswith("&present=1")


def test_hover_reads_each_heads_own_weight(app_url, page, tokens, bundled):
    """Hovering a cell of any head's map shows "query → key: weight" of that head, to 3
    decimals (checked against bert.attend)."""
    page.goto(app_url + "/?layer=2&head=1")
    wait_for_grid(page, tokens(DEFAULT_TEXT), bundled.config.num_attention_heads)
    res = bundled.attend(DEFAULT_TEXT)
    att = res.attentions[1]  # (H, T, T): layer 2
    q, k = res.tokens.index("with"), res.tokens.index("saw")
    for h in (0, 4, 11):
        r, c = divmod(h, 3)
        xy = page.evaluate(
            """([r, c, q, k]) => {
                 const gd = document.querySelector('.st-key-ex_grid .js-plotly-plot');
                 const L = gd._fullLayout, box = gd.getBoundingClientRect();
                 const x = L['xaxis' + (c ? c + 1 : '')], y = L['yaxis' + (r ? r + 1 : '')];
                 return [box.left + x._offset + x.c2p(k), box.top + y._offset + y.c2p(q)];
               }""", [r, c, q, k])
        page.mouse.move(*xy)
        want = f"with → saw: {float(att[h, q, k]):.3f}"
        page.wait_for_function(
            "(want) => [...document.querySelectorAll('.st-key-ex_grid .hovertext text')]"
            ".some(e => e.textContent.replaceAll('\\u200b', '') === want)", arg=want,
            timeout=10_000)
    assert no_exception(page)
