"""The maps in the first screen, measured in Debian's chromium:

- a first visit at 1280×720 (no link parameters: the start card shown) has the Explorer's heads on
  the first screen under the card: its grid starts there, and its first row of maps ends there;
- presentation mode (present=1) with a 16-token sentence at 1280×720 and 1920×1080 has the
  heads, the enlarged head, the summed head and the mean, their row and column labels and the
  colour scale wholly in the first screen, the labels legible (18 px at 1280, every token
  labelled), the maps spread over most of the screen's width.

Boxes are the canvas's own (getBoundingClientRect) plus where the component says it drew each
map on it (data-layout, data-room)."""

from urllib.parse import quote

import pytest

from testkit.browser import FIND, no_exception, wait_settled

SIXTEEN = "A nurse carried seven warm blankets across the snowy camp before the storm."
GRID = ".st-key-ex_grid [data-drawn]"
# the grid's canvas box (CSS px, in the viewport) and what the component says it drew on it
DRAWN = """(sel) => {
  const host = FIND(sel), r = host.querySelector('canvas.hs-main').getBoundingClientRect();
  return {x: r.x, y: r.y, w: r.width, h: r.height, layout: JSON.parse(host.dataset.layout),
          room: +host.dataset.room, labelPx: +host.dataset.labelPx,
          unlabelled: +host.dataset.unlabelled, tokens: host.dataset.drawn.split(' ')};
}""".replace("FIND", FIND)


def drawn_grid(page) -> dict:
    wait_settled(page, {"ex_grid": "component"})
    return page.evaluate(DRAWN, GRID)


def test_a_first_visit_shows_the_heads_under_the_start_card(app_url, browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})  # a fresh session
    page = ctx.new_page()
    try:
        page.goto(app_url)
        card = page.locator(".st-key-start_card")
        card.get_by_role("tab").first.wait_for(timeout=90_000)
        g = drawn_grid(page)
        card_box = card.bounding_box()
        first = g["layout"][0]["y"]
        row = [m for m in g["layout"] if m["y"] == first]
        assert len(row) >= 4, row  # a row of head maps, not one map
        bottom = g["y"] + max(m["y"] + m["size"] for m in row)
        print(f"\nstart card {card_box['y']:.0f}..{card_box['y'] + card_box['height']:.0f} px, "
              f"grid from {g['y']:.0f} px, first row of maps ends at {bottom:.0f} px")
        assert g["y"] >= card_box["y"] + card_box["height"]  # under the card, not over it
        assert 0 <= g["y"] < 720
        assert bottom <= 720
        assert no_exception(page)
    finally:
        ctx.close()


@pytest.mark.parametrize("width,height", [(1280, 720), (1920, 1080)],
                         ids=["1280x720", "1920x1080"])
def test_in_presentation_mode_the_heads_and_enlarged_head_fit_the_first_screen(
        app_url, browser, bundled, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        page.goto(f"{app_url}/?text={quote(SIXTEEN)}&present=1")
        g = drawn_grid(page)
        assert g["tokens"] == bundled.encode(SIXTEEN).tokens and len(g["tokens"]) == 16
        maps, room = g["layout"], g["room"]
        thumbs, large = [m for m in maps if m["thumb"]], [m for m in maps if not m["thumb"]]
        assert len(thumbs) == bundled.config.num_attention_heads and len(large) == 3
        for m in maps:  # every head's map, on the first screen
            assert 0 <= g["y"] + m["y"] and g["y"] + m["y"] + m["size"] <= height, m
            assert 0 <= g["x"] + m["x"] and g["x"] + m["x"] + m["size"] <= width, m
        for m in large:  # the key labels under each large map, the query labels left of them
            assert g["y"] + m["y"] + m["size"] + room <= height, m
            assert g["x"] + m["x"] - room >= 0, m
        assert g["y"] + g["h"] <= height  # the colour scale too: the whole canvas
        assert g["labelPx"] >= 18 * width / 1280 - 0.5 and g["unlabelled"] == 0
        left = min(m["x"] - (room if not m["thumb"] else 0) for m in maps)
        span = max(m["x"] + m["size"] for m in maps) - left
        big_span = max(m["x"] + m["size"] for m in large) - min(m["x"] - room for m in large)
        print(f"\n{width}x{height}: canvas {g['y']:.0f}..{g['y'] + g['h']:.0f} px high, maps over "
              f"{span / width:.0%} of the width (the large ones {big_span / width:.0%}), "
              f"enlarged head {large[0]['size']} px")
        assert span >= 0.75 * width
        assert big_span >= 0.7 * width
        assert no_exception(page)
    finally:
        page.close()
