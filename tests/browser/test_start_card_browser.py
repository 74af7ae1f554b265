"""A student's way in, in Debian's chromium: a fresh session sees the start card, whose numbers
are recomputed here from the model's own attention; each of its five links opens a view whose
heading answers the question; the presentation row's Copy link shows a QR code that decodes to
the students' link; and About's guide links stay in the tab and in presentation mode."""

import io
import math
import re
import time

import numpy as np
import pytest
import zxingcpp
from PIL import Image

from headscope.ui.presets import DEFAULT_TEXT, PRESETS
from mha_core.metrics import result_metrics
from mha_core.patterns import label_heads
from testkit.browser import no_exception

CARD = ".st-key-start_card"
# question (as the card asks it) -> the link's label, and text the opened page shows that answers it
LINKS = {
    "split across the heads": ("Inside MHA: narrow vs wide", "inside_mha",
                               "Is the input split across the heads or copied to each one?"),
    "Why do the heads differ": ("Training lab: the symmetry experiment", "training_lab",
                                "Why don't the heads learn the same thing? (symmetry)"),
    "What do the heads learn?": ("All heads: every head labelled", "all_heads",
                                 "what pattern each follows"),
    "Is one head enough?": ("Training lab: 1 head vs many", "training_lab", "1 head vs"),
    "What does it cost?": ("Inside MHA: what it costs", "inside_mha", "What does it cost?"),
}


def card_text(page) -> str:
    """What the card shows, each question's tab opened in turn (one answer shows at a time)."""
    card = page.locator(CARD)
    glossary = card.get_by_role("link", name=re.compile("^\\W*Glossary"))
    glossary.wait_for(timeout=90_000)  # the card's last element
    tabs = card.get_by_role("tab")
    shown = [card.inner_text()]
    for i in range(tabs.count()):
        shown.append(open_tab(card, tabs.nth(i)).inner_text())
    return " ".join(" ".join(shown).split())


def open_tab(card, tab):
    """Click a question's tab; its panel, once shown."""
    tab.click()
    panel = card.locator(f"[id='{tab.get_attribute('aria-controls')}']")
    panel.wait_for(state="visible", timeout=10_000)
    return panel


def expected(bert):
    """The card's numbers, recomputed from the attention maps with numpy."""
    ent = lambda a: float(np.mean(-(a * np.log(np.clip(a, 1e-12, None))).sum(-1)))  # noqa: E731
    # the Explorer's layer: whose heads disagree most over the examples (entropy of the mean
    # map - mean entropy of the heads)
    spread = [[ent(a.mean(0)) - np.mean([ent(h) for h in a])
               for a in bert.attend(text).attentions.numpy()] for text in PRESETS.values()]
    layer = int(np.argmax(np.mean(spread, axis=0)))
    res = bert.attend(DEFAULT_TEXT)
    att = res.attentions.numpy()  # (L, H, T, T)
    L, H, T, _ = att.shape
    focus = res.tokens.index("with")
    targets = len(set(att[layer, :, focus].argmax(-1).tolist()))
    single = res.single_head[layer].numpy()  # (T, T)
    top = int(single.mean(0).argmax())
    D = bert.config.hidden_size
    labels = dict(zip(*np.unique(label_heads(result_metrics(res)), return_counts=True)))
    return dict(L=L, H=H, T=T, D=D, layer=layer, targets=targets, top=res.tokens[top],
                share=single.mean(0)[top], summed=ent(single), heads=np.mean([ent(h) for h in
                                                                              att[layer]]),
                labels=labels)


def test_a_fresh_session_sees_the_start_card_with_computed_answers(app_url, page, bundled):
    page.goto(app_url)
    text, e = card_text(page), expected(bundled)
    H, D = e["H"], e["D"]
    assert f"each of the {H} heads reads all {D} numbers" in text
    assert f"({D} / {H} = {D // H} numbers)" in text
    assert (f"In layer {e['layer'] + 1} the {H} heads send “with” to {e['targets']} different"
            in text)
    for label, n in e["labels"].items():
        if label in text:
            assert f"{n} {label}" in text, label
    assert f"put {e['share']:.0%} of each row on “{e['top']}” ({e['summed']:.2f} nats" in text
    assert f"ln T = {math.log(e['T']):.2f} is uniform" in text
    assert f"its heads average {e['heads']:.2f} nats" in text
    assert f"exactly the {4 * D * D + 4 * D:,} of one head of {D}" in text
    assert f"({H * e['T'] ** 2:,} numbers for {e['T']} tokens against {e['T'] ** 2:,})" in text
    assert no_exception(page)


@pytest.mark.parametrize("question", list(LINKS))
def test_each_question_opens_the_view_that_answers_it(app_url, browser, question):
    label, path, answer = LINKS[question]
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})  # a fresh session
    page = ctx.new_page()
    page.goto(app_url)
    assert question in card_text(page)
    card, panel = page.locator(CARD), None
    tabs = card.get_by_role("tab")
    for i in range(tabs.count()):  # the question's own tab
        panel = open_tab(card, tabs.nth(i))
        if question in panel.inner_text():
            break
    panel.get_by_role("link", name=label).click()
    page.wait_for_url(re.compile(f"/{path}"), timeout=90_000)
    page.get_by_text(answer, exact=False).first.wait_for(timeout=90_000)
    page.locator(CARD).wait_for(state="detached", timeout=60_000)  # put away on another page
    assert no_exception(page)
    ctx.close()


def test_copy_link_is_one_click_from_the_row_and_its_qr_code_decodes(app_url, page):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(app_url + "/?layer=2&present=1")
    page.get_by_role("button", name="Copy link").click()  # in the row, not inside More
    image = page.locator('[data-testid="stImage"] img')
    image.wait_for(timeout=60_000)
    students = page.locator('[data-testid="stCode"] code').first.inner_text().replace("\n", "")
    assert students.startswith(app_url + "/?") and "present" not in students
    box = image.bounding_box()
    assert box["width"] >= 240 and box["y"] + box["height"] <= 720  # whole on a 720 px screen
    found = zxingcpp.read_barcodes(Image.open(io.BytesIO(image.screenshot())))
    assert [r.text for r in found] == [students]


def test_the_guide_links_stay_in_the_tab_and_in_presentation_mode(app_url, page):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(app_url + "/about?present=1")
    link = page.get_by_role("link", name="Two readings: who has the telescope?")
    link.wait_for(timeout=90_000)
    assert link.get_attribute("target") in (None, "_self")
    assert re.fullmatch(r"\./two_readings\?.*present=1", link.get_attribute("href"))
    start = time.perf_counter()
    link.click()
    page.wait_for_url(re.compile(r"/two_readings"), timeout=60_000)
    page.get_by_role("button", name="Leave presentation").wait_for(timeout=60_000)
    page.locator(".st-key-tr_heading").wait_for(timeout=60_000)
    print(f"guide link settled in {time.perf_counter() - start:.2f} s")
    assert len(page.context.pages) == 1  # the same tab
    assert page.locator('[data-testid="stSidebar"]').count() == 0 or \
        not page.locator('[data-testid="stSidebar"]').is_visible()
    assert no_exception(page)
