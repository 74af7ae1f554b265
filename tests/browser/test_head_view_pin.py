"""The Head view's click in Debian's chromium: pinning a token is drawn in the browser and sends
the server nothing (no Streamlit run: the websocket carries no message from the page); masking
is its own button, whose click does run the page. The view opens on the Explorer's layer, with
one control for [CLS]/[SEP] (the page's switch), and uses the width it has."""

import json
from urllib.parse import quote

from testkit.browser import host, no_exception, wait_for_component

TEXT = "I saw the man with a telescope."


def hooks(page):
    return page.evaluate("(sel) => Object.assign({}, document.querySelector(sel).dataset)",
                         ".st-key-hv_lines [data-drawn]")


def test_a_click_pins_without_a_run_and_masking_is_a_button(app_url, page, bundled):
    sent = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(payload)))
    page.goto(app_url + "/head_view?text=" + quote(TEXT))
    tokens = bundled.encode(TEXT).tokens
    wait_for_component(page, "hv_lines", tokens)
    assert hooks(page)["layer"] == "2"  # the Explorer's default layer (headscope.ui.layers)
    # one control for [CLS]/[SEP]: the page's switch, no second one inside the view
    assert page.get_by_text("dim [CLS]/[SEP]").count() == 0
    assert page.get_by_role("switch", name="Hide [CLS]/[SEP]").count() == 1
    mask = page.locator(".st-key-hv_lines .hs-mask")
    assert mask.is_disabled()  # nothing pinned yet
    # the view uses the width it has: its lines span more than bertviz's 300 px column gap
    g = json.loads(hooks(page)["geometry"])
    assert g["right"] - g["left"] > 400

    before = len(sent)
    box = page.locator(".st-key-hv_lines canvas.hs-lines").bounding_box()
    i = tokens.index("with")
    page.mouse.click(box["x"] + g["left"] - 15, box["y"] + g["top"] + (i + 0.5) * g["row"])
    page.wait_for_function("(sel) => document.querySelector(sel).dataset.pinned === 'q:" +
                           str(i) + "'", arg=".st-key-hv_lines [data-drawn]", timeout=15_000)
    # a second local change (hover another token) is drawn too: by now any message the pin
    # would have sent is on the wire, since the page sends from the click's own handler
    j = tokens.index("man")
    page.mouse.move(box["x"] + g["left"] - 15, box["y"] + g["top"] + (j + 0.5) * g["row"])
    page.wait_for_function("(sel) => document.querySelector(sel).dataset.hover === 'q:" +
                           str(j) + "'", arg=".st-key-hv_lines [data-drawn]", timeout=15_000)
    assert len(sent) == before, "pinning a token ran the script"
    assert host(page, "hv_lines").get_attribute("data-pinned") == f"q:{i}"

    assert mask.inner_text() == "Mask “with”" and not mask.is_disabled()
    mask.click()  # masking: its own control, which does run the page
    page.get_by_text("Masked “with”").first.wait_for(timeout=60_000)
    assert len(sent) > before
    assert no_exception(page)
