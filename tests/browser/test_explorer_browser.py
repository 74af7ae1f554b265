"""The Explorer in Debian's chromium: typing a sentence redraws every head; XSS stays text."""

import json

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from headscope.ui.presets import DEFAULT_TEXT
from testkit.browser import (
    FIND,
    box_of,
    close_start_card,
    host,
    no_exception,
    sentence_box,
    type_sentence,
    wait_for_component,
    wait_for_explorer,
    wait_for_grid,
)


@pytest.fixture(scope="module")
def tokens(bundled):
    return lambda text: bundled.encode(text).tokens


def test_typed_sentence_redraws_every_head_beside_the_single_head(app_url, page, tokens,
                                                                   bundled, tmp_path):
    heads = bundled.config.num_attention_heads
    page.goto(app_url)
    close_start_card(page)  # a bare first visit shows the start card above the maps
    wait_for_grid(page, tokens(DEFAULT_TEXT), heads)
    text = "The astronomer saw the man with a telescope."
    type_sentence(page, text)
    wait_for_explorer(page, tokens(text), heads)  # the grid and every plotly chart
    grid = host(page, "ex_grid")
    assert grid.get_attribute("data-maps") == str(heads + 2)  # the heads, single head, mean
    # every head, the single head and the mean share the first 1280×800 screen, in that
    # order, none overlapping, no sideways scrolling
    maps = json.loads(grid.get_attribute("data-layout"))
    canvas = page.locator(".st-key-ex_grid canvas.hs-main").bounding_box()
    assert [m["i"] for m in maps] == list(range(heads + 2))
    for m in maps:
        assert 0 <= canvas["x"] + m["x"] and canvas["x"] + m["x"] + m["size"] <= 1280
        assert 0 <= canvas["y"] + m["y"] and canvas["y"] + m["y"] + m["size"] <= 800
    cells = {(round(m["x"]), round(m["y"])) for m in maps}
    assert len(cells) == heads + 2
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert no_exception(page)
    page.screenshot(path=str(tmp_path / "explorer.png"))
    assert (tmp_path / "explorer.png").stat().st_size > 10_000


def test_html_in_the_sentence_is_shown_as_text_and_never_runs(app_url, page, tokens, bundled):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(app_url)
    close_start_card(page)  # a bare first visit shows the start card above the maps
    wait_for_grid(page, tokens(DEFAULT_TEXT), bundled.config.num_attention_heads)
    xss = "<img src=x onerror=alert(1)> <script>alert(2)</script>"
    type_sentence(page, xss)
    wait_for_grid(page, tokens(xss), bundled.config.num_attention_heads)
    assert dialogs == []
    # playwright's locators pierce the component's shadow root
    assert page.locator('img[src="x"]').count() == 0
    assert page.locator("script:text('alert(2)')").count() == 0
    assert host(page, "ex_grid").get_attribute("data-drawn") == " ".join(tokens(xss))
    assert sentence_box(page).input_value() == xss
    assert no_exception(page)


def test_presentation_link_hides_the_sidebar_and_enlarges_the_page(app_url, page, tokens,
                                                                  bundled, tmp_path):
    """A link with present=1: no sidebar, larger text, the heads as thumbnails and the enlarged
    head, single head and mean large (labels of 18 px or more) starting on the first screen,
    and the sentence box in a row above the page, where typing still redraws every head;
    leaving brings the sidebar back."""
    heads = bundled.config.num_attention_heads
    page.goto(app_url + "/?layer=2&head=2&present=1")
    wait_for_grid(page, tokens(DEFAULT_TEXT), heads)
    assert page.locator('[data-testid="stSidebar"]').count() == 0
    assert page.evaluate("getComputedStyle(document.documentElement).fontSize") == "20px"
    maps = json.loads(host(page, "ex_grid").get_attribute("data-layout"))
    assert maps[0]["thumb"] and maps[0]["size"] >= 64  # small: the enlarged head fits below
    large = [m for m in maps if not m["thumb"]]
    assert [m["i"] for m in large] == [1, heads, heads + 1]  # the enlarged head 2, single, mean
    assert float(host(page, "ex_grid").get_attribute("data-label-px")) >= 18
    grid = box_of(page, "ex_grid")
    assert grid["y"] + large[0]["y"] < page.viewport_size["height"]  # starts on the first screen
    box = page.locator('.st-key-text input').first  # one line above the page
    bar = page.locator('header[data-testid="stHeader"]').bounding_box()
    assert box.bounding_box()["y"] >= bar["y"] + bar["height"]  # the sentence is not under it
    box.click()
    box.press("Control+a")
    box.press_sequentially("The cat sat on the mat.")
    box.press("Enter")
    wait_for_grid(page, tokens("The cat sat on the mat."), heads)
    page.screenshot(path=str(tmp_path / "presentation.png"))
    assert no_exception(page)
    # read once, then off the address bar: a teacher copying it gives students a normal link
    page.wait_for_function("() => !location.search.includes('present=')", timeout=30_000)

    page.get_by_role("button", name="Leave presentation").click()
    page.locator('[data-testid="stSidebar"] textarea').first.wait_for(timeout=30_000)
    # the copy-link box: this server's own address, the view, and a projector link apart
    page.get_by_test_id("stSidebar").get_by_role("button", name="Copy link").click()
    codes = page.locator('[data-testid="stCode"] code')
    codes.nth(1).wait_for(timeout=30_000)
    students, projector = codes.nth(0).inner_text(), codes.nth(1).inner_text()
    assert students.replace("\n", "").startswith(app_url + "/?")
    assert "model=bundled" in students and "layer=2" in students and "present" not in students
    assert projector.replace("\n", "").endswith("&present=1")


def hover_until(page, key, where, want, attempts=10):
    """Move the mouse to where() until the component under `key` reports hovering `want`
    (its data-hover). where() is asked again on each attempt: under load the page's layout can
    still move after a box was read (a late delta, a scrollbar), and a mouse that does not move
    fires no new event."""
    sel = f".st-key-{key} [data-drawn]"
    for attempt in range(attempts):
        x, y = where()
        page.mouse.move(x + 2, y + 2)
        page.mouse.move(x, y)
        try:
            page.wait_for_function(f"([sel, want]) => {FIND}(sel)?.dataset.hover"
                                   " === want", arg=[sel, want], timeout=3_000)
            return
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise


def point_at(page, key, m, q, k, G):
    """Viewport coordinates of cell (q, k) of map m (an entry of the component's data-layout),
    the page first scrolled so that the cell is on screen (a mouse cannot hover off screen)."""
    canvas = page.locator(f".st-key-{key} canvas.hs-main")
    cell = m["size"] / G
    box = canvas.bounding_box()
    y = box["y"] + m["y"] + (q + 0.5) * cell
    height = page.viewport_size["height"]
    if not 0 < y < height:  # scroll the main area (the wheel over it), then wait until it moved
        before = host(page, key).bounding_box()["y"]
        page.mouse.move(box["x"] + 5, min(max(box["y"], 0) + 5, height - 5))
        page.mouse.wheel(0, y - height / 2)
        page.wait_for_function(f"([sel, y0]) => Math.abs({FIND}(sel)"
                               ".getBoundingClientRect().y - y0) > 1",
                               arg=[f".st-key-{key} [data-drawn]", before])
        box = canvas.bounding_box()
    return box["x"] + m["x"] + (k + 0.5) * cell, box["y"] + m["y"] + (q + 0.5) * cell


def test_hover_reads_each_heads_own_weight(app_url, page, tokens, bundled):
    """Hovering a cell of any head's map shows "query → key: weight" of that head, to 3
    decimals (checked against bert.attend), and highlights that row and column in every map."""
    page.goto(app_url + "/?layer=2&head=1")
    wait_for_grid(page, tokens(DEFAULT_TEXT), bundled.config.num_attention_heads)
    res = bundled.attend(DEFAULT_TEXT)
    att = res.attentions[1]  # (H, T, T): layer 2
    q, k = res.tokens.index("with"), res.tokens.index("saw")
    maps = json.loads(host(page, "ex_grid").get_attribute("data-layout"))
    tip = page.locator(".st-key-ex_grid .hs-tip-text")
    for h in (0, 4, 11):
        hover_until(page, "ex_grid", lambda h=h: point_at(page, "ex_grid", maps[h], q, k,
                                                         len(res.tokens)), f"{q}:{k}")
        want = f"with → saw: {float(att[h, q, k]):.3f}"
        assert tip.text_content() == want
        assert tip.is_visible()
    assert no_exception(page)


def test_clicking_a_head_enlarges_it_and_the_link_follows(app_url, page, tokens, bundled):
    page.goto(app_url + "/?layer=2&head=1")
    wait_for_explorer(page, tokens(DEFAULT_TEXT), bundled.config.num_attention_heads)  # idle
    maps = json.loads(host(page, "ex_grid").get_attribute("data-layout"))
    page.mouse.click(*point_at(page, "ex_grid", maps[4], 0, 0, len(tokens(DEFAULT_TEXT))))
    page.wait_for_function(f"() => {FIND}('.st-key-ex_grid [data-drawn]')"
                           ".dataset.selected === '5'", timeout=60_000)  # outlined, from 1
    page.wait_for_function(
        f"() => {FIND}('.st-key-ex_big [data-drawn]')?.dataset.tag"
        " === 'layer 2 head 5'", timeout=60_000)
    page.wait_for_url(lambda url: "head=5" in url, timeout=60_000)
    wait_for_component(page, "ex_grid", tokens(DEFAULT_TEXT), tag="layer 2")
    assert no_exception(page)


def test_focus_grid_reads_each_heads_top_key_and_a_click_opens_that_head(app_url, page, tokens,
                                                                        bundled):
    page.goto(app_url + "/?layer=2&head=1&focus=with")
    wait_for_explorer(page, tokens(DEFAULT_TEXT), bundled.config.num_attention_heads)
    res = bundled.attend(DEFAULT_TEXT)
    rows = res.attentions.numpy()[:, :, res.tokens.index("with")]  # (L, H, T)
    g = json.loads(host(page, "ex_focus_grid").get_attribute("data-geometry"))
    canvas = page.locator(".st-key-ex_focus_grid canvas.hs-main")
    tip = page.locator(".st-key-ex_focus_grid .hs-tip-text")

    def cell(layer, head):  # the middle of a cell, where the canvas is now
        canvas.scroll_into_view_if_needed()
        box = canvas.bounding_box()
        return (box["x"] + g["left"] + (head + 0.5) * g["w"],
                box["y"] + g["top"] + (layer + 0.5) * g["h"])

    for layer, head in ((0, 0), (3, 6), (5, 11)):
        hover_until(page, "ex_focus_grid", lambda at=(layer, head): cell(*at),
                    f"{layer}:{head}")
        top = int(rows[layer, head].argmax())
        assert tip.text_content() == (f"L{layer + 1} H{head + 1} → {res.tokens[top]}: "
                                      f"{float(rows[layer, head, top]):.3f}")
    page.mouse.click(*cell(3, 6))
    wait_for_component(page, "ex_grid", tokens(DEFAULT_TEXT), tag="layer 4", timeout_ms=60_000)
    page.wait_for_function(f"() => {FIND}('.st-key-ex_grid [data-drawn]')"
                           ".dataset.selected === '7'", timeout=60_000)
    page.wait_for_url(lambda url: "layer=4" in url and "head=7" in url, timeout=60_000)
    assert no_exception(page)


def test_enlarged_head_and_focus_bars_read_the_models_weights_and_save_figures(
        app_url, page, tokens, bundled, tmp_path):
    """The enlarged head (one map drawn large by the component) reads "query → key: weight" of
    the chosen head on hover; the focus bars read each head's share on the hovered key (checked
    against bert.attend); both save a PNG, the head also an SVG."""
    page.goto(app_url + "/?layer=2&head=5&focus=with")
    wait_for_explorer(page, tokens(DEFAULT_TEXT), bundled.config.num_attention_heads)
    res = bundled.attend(DEFAULT_TEXT)
    att = res.attentions[1]  # (H, T, T): layer 2
    q, k, G = res.tokens.index("with"), res.tokens.index("saw"), len(res.tokens)
    assert host(page, "ex_big").get_attribute("data-tag") == "layer 2 head 5"
    big = json.loads(host(page, "ex_big").get_attribute("data-layout"))[0]
    hover_until(page, "ex_big", lambda: point_at(page, "ex_big", big, q, k, G), f"{q}:{k}")
    assert page.locator(".st-key-ex_big .hs-tip-text").text_content() == \
        f"with → saw: {float(att[4, q, k]):.3f}"

    keys = json.loads(host(page, "ex_focus_bars").get_attribute("data-keys"))
    assert "saw" in keys and keys[-1] is None  # one segment per key word, "other" last
    below = sum(float(att[3, q, res.tokens.index(w)]) for w in keys[:keys.index("saw")] if w)
    share = float(att[3, q, k])  # head 4: the middle of its "saw" segment
    canvas = page.locator(".st-key-ex_focus_bars canvas.hs-main")

    def middle_of_segment():  # head 4's "saw" segment, where the canvas and its bars are now
        canvas.scroll_into_view_if_needed()
        box = canvas.bounding_box()  # the geometry too: a late relayout (a scrollbar) moves it
        g = json.loads(host(page, "ex_focus_bars").get_attribute("data-geometry"))
        k = box["width"] / g["W"]  # the canvas as shown, if the page narrowed it since drawn
        return (box["x"] + k * (g["left"] + 3.5 * g["slot"]),
                box["y"] + k * (g["top"] + g["h"] * (1 - below - share / 2)))

    hover_until(page, "ex_focus_bars", middle_of_segment, f"3:{keys.index('saw')}")
    tip = page.locator(".st-key-ex_focus_bars .hs-tip-text")
    assert tip.text_content() == f"H4 → saw: {share:.3f}"

    for key, kinds in (("ex_big", ("PNG", "SVG")), ("ex_focus_bars", ("PNG",))):
        for kind in kinds:
            with page.expect_download() as got:
                page.locator(f".st-key-{key} .hs-btn", has_text=kind).click()
            path = tmp_path / got.value.suggested_filename
            got.value.save_as(path)
            data = path.read_bytes()
            assert data[:8] == b"\x89PNG\r\n\x1a\n" if kind == "PNG" else b"<svg" in data[:200]
    assert no_exception(page)


def test_copy_link_right_after_a_new_sentence_links_that_sentence(app_url, page, tokens,
                                                                  bundled):
    """A new sentence reruns the Explorer's parts alone and the copy-link box is built only
    when opened: opened straight after a sentence (typed then Ctrl+Enter, and typed then the
    box clicked, which commits the sentence on the same click), its link names the new
    sentence, never the one before."""
    from urllib.parse import quote

    heads = bundled.config.num_attention_heads
    page.goto(app_url + "/?text=" + quote("I saw the man with a telescope."))
    wait_for_grid(page, tokens("I saw the man with a telescope."), heads)
    sidebar = page.get_by_test_id("stSidebar")
    codes = page.locator('[data-testid="stCode"] code')  # the popover's, drawn over the page
    for text, enter in (("The dog ran across the field.", True),
                        ("A nurse carried warm blankets.", False)):
        box = sentence_box(page)
        box.click()
        box.press("Control+a")
        box.press_sequentially(text)
        if enter:
            box.press("Control+Enter")
            wait_for_explorer(page, tokens(text), heads)
        sidebar.get_by_role("button", name="Copy link").click()
        page.wait_for_function(
            "([sel, want]) => [...document.querySelectorAll(sel)].some(c =>"
            " c.textContent.replace(/\\s/g, '').includes(want))",
            arg=['[data-testid="stCode"] code',
                 "text=" + quote(text, safe="")], timeout=30_000)
        assert codes.count() >= 1
        wait_for_explorer(page, tokens(text), heads)  # the maps follow the sentence too
        page.keyboard.press("Escape")  # the box closed again
        codes.first.wait_for(state="detached", timeout=30_000)
    assert no_exception(page)
