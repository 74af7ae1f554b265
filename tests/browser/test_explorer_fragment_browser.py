"""The Explorer runs as a fragment (headscope.ui.page.as_fragment): a layer move reruns the page
alone. What lives outside the page must still follow it: the address bar's link and the copy-link
box in the sidebar; the sidebar's own widgets still rerun everything."""

from urllib.parse import quote

from testkit.browser import no_exception, type_sentence, wait_for_component, wait_for_grid

TEXT = "The cat sat on the mat."


def test_a_layer_move_reaches_the_link_and_the_copy_link_box(app_url, page, bundled):
    heads = bundled.config.num_attention_heads
    page.goto(f"{app_url}/?text={quote(TEXT)}&layer=2")
    tokens = bundled.encode(TEXT).tokens
    wait_for_component(page, "ex_grid", tokens, tag="layer 2", timeout_ms=90_000)
    thumb = page.locator('.st-key-ex_layer input[type="range"]').first
    thumb.focus()
    thumb.press("ArrowRight")  # layer 3: a run of the page alone (script_finished 3)
    wait_for_component(page, "ex_grid", tokens, tag="layer 3")
    page.wait_for_function("() => new URLSearchParams(location.search).get('layer') === '3'",
                           timeout=30_000)
    has_layer_3 = ("() => [...document.querySelectorAll('[data-testid=\"stCode\"] code')]"
                   ".some(c => c.innerText.replace(/\\n/g, '').includes('layer=3'))")
    page.get_by_role("button", name="Copy link").click()
    page.wait_for_function(has_layer_3, timeout=30_000)
    page.keyboard.press("Escape")
    # a run of the page that leaves the link as it was (the one-head popover opens, built only
    # while open) keeps the box: the browser clears what a fragment run does not draw again
    page.get_by_role("button", name="Every layer: one head vs many").click()
    page.locator(".js-plotly-plot >> text=How many heads a fitted layer needs").first.wait_for(
        timeout=60_000)
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Copy link").click()
    page.wait_for_function(has_layer_3, timeout=30_000)
    page.keyboard.press("Escape")
    # the sidebar still reruns everything: a new sentence redraws the page at the same layer
    other = "A dog barked at the postman."
    type_sentence(page, other)
    wait_for_grid(page, bundled.encode(other).tokens, heads)
    wait_for_component(page, "ex_grid", bundled.encode(other).tokens, tag="layer 3")
    assert no_exception(page)
