"""The Explorer draws every view change in the browser (headscope/ui/attention/js/explorer.js): no
websocket message for a layer, head, focus, switch or window change; the address bar and Copy
link follow the view and a reload restores it; several focus tokens combine as their rows'
mean (checked against numpy on bert.attend); every control works from the keyboard alone,
found by its role and name; a text over LOCAL_TOKENS asks the server for a layer, with the wait
shown; on a projector the enlarged head and its labels lie in the first screen."""

import json
import re
from urllib.parse import quote

import numpy as np
import pytest

from headscope.ui.attention.explorer_payload import LOCAL_TOKENS
from testkit.browser import FIND, no_exception, wait_for_explorer
from tests.browser.test_explorer_browser import hover_until

TEXT = "Unbelievably, the astronomers hesitated."  # "un ##bel ##ie ##va ##bly": Whole words
PART_TAG = f"([key, tag]) => {FIND}(`.st-key-${{key}} [data-drawn]`)?.dataset.tag === tag"
EXPLORER = ".st-key-ex_view [data-view=explorer]"


def opened(page, url, bundled, query=""):
    """The Explorer on TEXT (plus query), drawn and its run over; returns the frames the page
    sends on its websocket from now on (a list that grows)."""
    sent = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(payload)))
    page.goto(f"{url}/?text={quote(TEXT)}{query}")
    wait_for_explorer(page, bundled.encode(TEXT).tokens, bundled.config.num_attention_heads)
    page.wait_for_function("() => document.querySelector('[data-testid=\"stApp\"]')"
                           "?.dataset.testScriptState === 'notRunning'", timeout=60_000)
    return sent


def tag_is(page, key, tag):
    page.wait_for_function(PART_TAG, arg=[key, tag], timeout=10_000)


def explorer(page, attr):
    return page.locator(EXPLORER).get_attribute(f"data-{attr}")


def geometry(page):
    """The focus grid's cells: {top, left, w, h} in CSS px of its canvas."""
    return json.loads(page.locator(".st-key-ex_focus_grid [data-drawn]").get_attribute(
        "data-geometry"))


def tokens_group(page):
    return page.get_by_role("group", name="Focus tokens")


def test_every_view_change_is_drawn_without_a_server_message(app_url, page, bundled):
    sent = opened(page, app_url, bundled, "&layer=2&head=1")
    before = len(sent)
    layer = page.get_by_role("slider", name="Layer")
    layer.focus()
    layer.press("ArrowRight")
    tag_is(page, "ex_grid", "layer 3")
    page.get_by_role("combobox", name="Head").select_option(label="head 7")
    tag_is(page, "ex_big", "layer 3 head 7")
    tokens_group(page).get_by_role("button", name="astronomers").click()
    tag_is(page, "ex_focus_grid", "focus 8")
    tokens_group(page).get_by_role("button", name="hesitated").click(modifiers=["Shift"])
    tag_is(page, "ex_focus_grid", "focus 8,9")
    page.get_by_role("switch", name="Whole words").check()  # the focus kept by its tokens
    page.wait_for_function(f"() => {FIND}('.st-key-ex_grid [data-drawn]')?.dataset.drawn"
                           " === '[CLS] Unbelievably , the astronomers hesitated . [SEP]'")
    tag_is(page, "ex_focus_grid", "focus 4,5")
    page.get_by_role("switch", name="Hide [CLS]/[SEP]").check()
    page.wait_for_function(f"() => {FIND}('.st-key-ex_grid [data-drawn]')?.dataset.drawn"
                           " === 'Unbelievably , the astronomers hesitated .'")
    page.get_by_role("switch", name="By norm").check()
    tag_is(page, "ex_grid", "layer 3 by norm")
    maps = json.loads(page.locator(".st-key-ex_grid [data-drawn]").get_attribute("data-layout"))
    canvas = page.locator(".st-key-ex_grid canvas.hs-main")
    box = canvas.bounding_box()
    m = maps[1]  # a click on head 2's map enlarges it
    page.mouse.click(box["x"] + m["x"] + m["size"] / 2, box["y"] + m["y"] + m["size"] / 2)
    tag_is(page, "ex_big", "layer 3 by norm head 2")
    g = geometry(page)
    fbox = page.locator(".st-key-ex_focus_grid canvas.hs-main").bounding_box()
    page.mouse.click(fbox["x"] + g["left"] + 4.5 * g["w"], fbox["y"] + g["top"] + 0.5 * g["h"])
    tag_is(page, "ex_big", "layer 1 by norm head 5")  # the focus grid's cell L1 H5
    assert explorer(page, "switches") == "words hide norm"
    assert len(sent) == before, f"{len(sent) - before} messages sent for view changes"
    assert no_exception(page)


def test_the_address_bar_and_copy_link_follow_the_view_and_a_reload_restores_it(
        app_url, page, bundled):
    opened(page, app_url, bundled, "&layer=2")
    page.get_by_role("slider", name="Layer").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.get_by_role("combobox", name="Head").select_option(label="head 3")
    tokens_group(page).get_by_role("button", name="the").click()
    tokens_group(page).get_by_role("button", name="hesitated").click(modifiers=["Shift"])
    page.get_by_role("switch", name="Hide [CLS]/[SEP]").check()
    page.wait_for_url(lambda u: all(p in u for p in ("layer=4", "head=3", "nospecial=1",
                                                      "focus=%236%2C%238")), timeout=10_000)
    page.locator(".st-key-ex_view").get_by_role("button", name="Copy link").click()
    links = page.locator(".st-key-ex_view .hs-ex-link")
    links.first.wait_for(timeout=10_000)
    assert links.nth(0).text_content() == page.url  # no present=1 in it
    assert links.nth(1).text_content() == page.url + "&present=1"
    page.reload()
    wait_for_explorer(page, [t for t in bundled.encode(TEXT).tokens
                             if t not in ("[CLS]", "[SEP]")], bundled.config.num_attention_heads)
    assert page.get_by_role("slider", name="Layer").input_value() == "4"
    assert explorer(page, "head") == "3" and explorer(page, "switches") == "hide"
    pressed = tokens_group(page).locator("button[aria-pressed=true]")
    assert pressed.all_text_contents() == ["the", "hesitated"]
    # Inside MHA opens on this view (Streamlit drops the query on a page change: the
    # component keeps the view in sessionStorage and Inside MHA's hidden component sends it)
    page.get_by_role("link", name=re.compile(r"^\W*Inside MHA$")).click()
    page.wait_for_url(lambda u: "/inside_mha?" in u and "layer=4" in u and "head=3" in u,
                      timeout=60_000)  # the page writes the layer and head it opened on
    assert no_exception(page)


def test_several_focus_tokens_show_the_mean_of_their_rows(app_url, page, bundled):
    """Two focus tokens: each head's cell in the focus grid is the top key of the mean of the two
    tokens' rows and its weight, as numpy computes it from bert.attend."""
    opened(page, app_url, bundled, "&layer=2&focus=astronomers")
    tokens_group(page).get_by_role("button", name="the").click(modifiers=["Shift"])
    tag_is(page, "ex_focus_grid", "focus 7,8")
    res = bundled.attend(TEXT)
    rows = res.attentions.numpy()[:, :, [7, 8]].mean(axis=2)  # (L, H, T): the mean of two rows
    g = geometry(page)
    canvas = page.locator(".st-key-ex_focus_grid canvas.hs-main")
    tip = page.locator(".st-key-ex_focus_grid .hs-tip-text")

    def cell(layer, head):
        canvas.scroll_into_view_if_needed()
        box = canvas.bounding_box()
        return (box["x"] + g["left"] + (head + 0.5) * g["w"],
                box["y"] + g["top"] + (layer + 0.5) * g["h"])

    for layer, head in ((0, 2), (2, 7), (5, 11)):
        hover_until(page, "ex_focus_grid", lambda at=(layer, head): cell(*at), f"{layer}:{head}")
        top = int(np.argmax(rows[layer, head]))
        assert tip.text_content() == (f"L{layer + 1} H{head + 1} → {res.tokens[top]}: "
                                      f"{float(rows[layer, head, top]):.3f}")
    assert "mean of their rows" in page.locator(".st-key-ex_view .hs-ex-notes").inner_text()


def test_every_control_works_from_the_keyboard_alone(app_url, page, bundled):
    sent = opened(page, app_url, bundled, "&layer=2&head=1")
    before = len(sent)
    page.get_by_role("slider", name="Layer").focus()
    page.keyboard.press("ArrowRight")
    tag_is(page, "ex_grid", "layer 3")
    page.keyboard.press("Tab")  # the head
    page.keyboard.press("ArrowDown")
    tag_is(page, "ex_big", "layer 3 head 2")
    page.keyboard.press("Tab")  # Whole words
    page.keyboard.press("Space")
    page.wait_for_function(f"() => document.querySelector('{EXPLORER}')?.dataset.switches"
                           " === 'words'")
    page.keyboard.press("Space")  # and off again
    page.wait_for_function(f"() => document.querySelector('{EXPLORER}')?.dataset.switches === ''")
    tokens_group(page).locator("button[tabindex='0']").focus()  # the strip's one tab stop
    start = int(explorer(page, "focus"))
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => document.querySelector('{EXPLORER}')?.dataset.focus"
                           f" === '{start + 1}'")
    page.keyboard.press("Shift+ArrowRight")
    page.wait_for_function(f"() => document.querySelector('{EXPLORER}')?.dataset.focus"
                           f" === '{start + 1},{start + 2}'")
    status = page.locator(".st-key-ex_view").get_by_role("status")
    assert status.text_content().startswith("Layer 3 of 6, head 2, focus ")
    assert len(sent) == before  # every view change above stayed in the browser
    page.get_by_role("switch", name="Whole words").focus()
    for _ in range(3):  # Hide, By norm, Copy link
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.locator(".st-key-ex_view .hs-ex-link").first.wait_for(timeout=10_000)
    assert no_exception(page)


@pytest.mark.slow
def test_a_long_text_is_local_up_to_the_limit_and_asks_for_a_layer_beyond_it(app_url, page,
                                                                               bundled):
    short = " ".join(["the cat sat on the mat."] * 17)  # 121 tokens: every layer sent
    long = " ".join(["the cat sat on the mat."] * 21)  # 149 tokens: one layer at a time
    assert len(bundled.encode(short).tokens) <= LOCAL_TOKENS < len(bundled.encode(long).tokens)
    sent = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(payload)))
    for text, local in ((short, True), (long, False)):
        page.goto(f"{app_url}/?text={quote(text)}&layer=2")
        wait_for_explorer(page, bundled.encode(text).tokens, bundled.config.num_attention_heads)
        page.wait_for_function("() => document.querySelector('[data-testid=\"stApp\"]')"
                               "?.dataset.testScriptState === 'notRunning'", timeout=60_000)
        before = len(sent)
        first = page.get_by_role("slider", name="First token shown")
        first.focus()
        first.press("ArrowRight")  # the token window: local in both
        layer = page.get_by_role("slider", name="Layer")
        layer.focus()
        layer.press("ArrowRight")
        if local:
            tag_is(page, "ex_grid", "layer 3")
            assert len(sent) == before
        else:  # the wait is said, then layer 3 comes from the server
            said = page.wait_for_function(  # the status while waiting (it may come fast)
                f"() => {{ const h = document.querySelector('{EXPLORER}');"
                " return h?.dataset.waiting === 'true'"
                " && h.shadowRoot.querySelector('[role=status]').textContent; }",
                timeout=10_000).json_value()
            assert said.startswith("Loading layer 3 from the server")
            page.wait_for_function(PART_TAG, arg=["ex_grid", "layer 3"], timeout=60_000)
            assert len(sent) > before
    assert no_exception(page)


@pytest.mark.parametrize("width,height", [(1280, 720), (1920, 1080)])
def test_on_a_projector_the_enlarged_head_and_its_labels_fill_no_more_than_the_first_screen(
        app_url, browser, bundled, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        page.goto(f"{app_url}/?text={quote('I saw the man with a telescope.')}&present=1")
        grid = page.locator(".st-key-ex_grid [data-drawn]")
        grid.wait_for(timeout=90_000)
        page.wait_for_function(f"() => !!{FIND}('.st-key-ex_grid [data-drawn]')?.dataset.layout")
        layout = json.loads(grid.get_attribute("data-layout"))
        room = float(grid.get_attribute("data-room"))
        box = page.locator(".st-key-ex_grid canvas.hs-main").bounding_box()
        selected = int(grid.get_attribute("data-selected")) - 1
        big = next(m for m in layout if m["i"] == selected and not m["thumb"])
        assert box["x"] + big["x"] - room >= 0
        assert box["y"] + big["y"] >= 0
        assert box["y"] + big["y"] + big["size"] + room <= height  # its key labels too
        assert float(grid.get_attribute("data-label-px")) >= 18 * width / 1280 - 0.5
    finally:
        page.close()
