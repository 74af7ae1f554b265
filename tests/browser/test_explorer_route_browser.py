"""Enter in chromium, answered first by the app's route (headscope/ui/explorer_route.py,
sentence.js): the maps of the new sentence are drawn once, from the route's answer, and the
page's own run then brings the rest (the address bar, the parts below) without drawing them
again. Where the route declines, the page's run alone answers, as before."""

import pytest

from headscope.ui.presets import DEFAULT_TEXT
from testkit.browser import (
    close_start_card,
    host,
    no_exception,
    sentence_box,
    submit,
    type_text,
    wait_for_explorer,
    wait_for_grid,
)

ROUTE = "/_headscope/explorer"


@pytest.fixture(scope="module")
def tokens(bundled):
    return lambda text: bundled.encode(text).tokens


def enter(page, press=None):
    """Ctrl+Enter in the sentence box (or `press()`); (the route's status, the text it was
    asked for) once it has answered."""
    with page.expect_response(lambda r: ROUTE in r.url) as done:
        (press or (lambda: submit(page)))()
    return done.value.status, done.value.request.post_data_json["text"]


def fast_mark(page):
    return host(page, "ex_view").get_attribute("data-fast")


def test_enter_draws_the_routes_maps_once_and_the_page_adopts_them(app_url, page, tokens,
                                                                    bundled):
    heads = bundled.config.num_attention_heads
    failed = []  # every request the page made that failed (the favicon once did, after a run)
    page.on("response", lambda r: failed.append((r.status, r.url)) if r.status >= 400 else None)
    page.goto(app_url)
    close_start_card(page)
    wait_for_grid(page, tokens(DEFAULT_TEXT), heads)
    for text in ("A nurse carried seven warm blankets.", "Dogs bark."):
        type_text(page, text)
        assert enter(page) == (200, text)
        wait_for_explorer(page, tokens(text), heads)  # the page's run reached the maps too
        # drawn from the route; the page's data for it, the same, adopted without a redraw
        assert fast_mark(page) == "adopted"
        page.wait_for_function("(t) => new URLSearchParams(location.search).get('text') === t",
                               arg=text)  # the page's run wrote the address bar
    page.wait_for_function("() => !!document.querySelector('link[rel~=icon]')")
    assert page.evaluate("document.querySelector('link[rel~=icon]').href").startswith(
        "data:image/png")  # the tab's icon: no file a fragment's run could drop
    assert failed == []
    assert no_exception(page)


def test_a_text_the_route_declines_is_answered_by_the_page(app_url, page, tokens, bundled):
    """Over budget.LONG_TOKENS tokens: the page draws it (a layer at a time), with no drawing
    from the route; blank: the page says what to do."""
    heads = bundled.config.num_attention_heads
    page.goto(app_url + "/?text=Hello.")
    wait_for_grid(page, tokens("Hello."), heads)
    long = "The river runs past the old mill and on to the sea. " * 12
    type_text(page, long)
    assert enter(page)[0] == 204  # declined
    wait_for_explorer(page, tokens(long), heads)
    assert fast_mark(page) == ""
    type_text(page, "   ")
    assert enter(page) == (204, "   ")
    page.get_by_text("Type a sentence in the sidebar").wait_for()
    assert no_exception(page)


def test_sentences_typed_in_quick_succession_end_on_the_last(app_url, page, tokens, bundled):
    heads = bundled.config.num_attention_heads
    page.goto(app_url + "/?text=Hello.")
    wait_for_grid(page, tokens("Hello."), heads)
    first, last = "Birds fly south in winter.", "Fish swim."
    type_text(page, first)
    submit(page)
    type_text(page, last)  # before the first is drawn
    submit(page)
    wait_for_explorer(page, tokens(last), heads)
    page.wait_for_function("(t) => new URLSearchParams(location.search).get('text') === t",
                           arg=last)
    assert sentence_box(page).input_value() == last
    assert host(page, "ex_grid").get_attribute("data-drawn") == " ".join(tokens(last))
    assert no_exception(page)


def test_presentation_modes_one_line_box_takes_the_same_path(app_url, page, tokens, bundled):
    heads = bundled.config.num_attention_heads
    page.goto(app_url + "/?present=1&text=Hello.")
    wait_for_grid(page, tokens("Hello."), heads)
    box = page.locator(".st-key-text input").first
    text = "The cat sat on the mat."
    box.click()
    box.press("Control+a")
    box.press_sequentially(text)
    assert enter(page, lambda: box.press("Enter")) == (200, text)
    wait_for_explorer(page, tokens(text), heads)
    assert fast_mark(page) == "adopted"  # drawn at presentation's scale: nothing to redraw
    assert box.input_value() == text
    assert no_exception(page)


@pytest.mark.parametrize("fails", ["answers 500", "never answers"])
def test_the_key_press_is_never_lost_when_the_route_fails(app_url, page, tokens, bundled,
                                                          fails):
    """A route that fails, or does not answer within the component's wait (1 s): the key press
    still goes on to Streamlit, whose run draws the sentence."""
    heads = bundled.config.num_attention_heads
    held = []
    page.route("**" + ROUTE, (lambda r: r.fulfill(status=500)) if fails == "answers 500"
               else (lambda r: held.append(r)))
    page.goto(app_url + "/?text=Hello.")
    wait_for_grid(page, tokens("Hello."), heads)
    text = "The ferry left before dawn."
    type_text(page, text)
    submit(page)
    wait_for_explorer(page, tokens(text), heads)  # drawn by the page's run alone
    page.wait_for_function("(t) => new URLSearchParams(location.search).get('text') === t",
                           arg=text)
    assert fast_mark(page) == ""
    assert len(held) == (fails == "never answers")
    for r in held:
        r.abort()
    assert no_exception(page)
