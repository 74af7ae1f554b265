"""Is one head enough? (docs/one-head.md) in a real browser: the Explorer (beside the summed head)
and the Training lab show the per-layer answer with the numbers of the shipped results."""

import json

from headscope.ui.models import BUNDLED
from headscope.ui.one_head_results import SHIPPED
from mha_core.one_head import sentence
from testkit.browser import no_exception

PLOT = ".js-plotly-plot"


def shipped() -> dict:
    return json.loads(SHIPPED[BUNDLED].read_text())


def test_explorer_says_how_much_of_the_layer_one_head_reproduces(app_url, page):
    result = shipped()
    page.goto(app_url + "/?layer=2")
    row = result["layers"][1]
    page.get_by_text(sentence(row, result["heads"])).first.wait_for(timeout=90_000)
    page.get_by_role("button", name="Every layer: one head vs many").click()
    for r in result["layers"]:
        page.get_by_text(sentence(r, result["heads"]), exact=True).first.wait_for(timeout=30_000)
    page.locator(f"{PLOT} >> text=How many heads a fitted layer needs").first.wait_for(
        timeout=30_000)
    assert no_exception(page)


def test_training_lab_shows_every_layers_answer(app_url, page):
    result = shipped()
    page.goto(f"{app_url}/training_lab")
    page.get_by_text("On the real model: is one head enough?").first.wait_for(timeout=90_000)
    for r in result["layers"]:
        page.get_by_text(sentence(r, result["heads"]), exact=True).first.wait_for(timeout=30_000)
    w = result["whole_model"]
    page.get_by_text(f"a cosine of {w['best_original_heads']['cosine']:.2f}").first.wait_for(
        timeout=30_000)
    bars = page.locator(f"{PLOT} >> text=How much of each layer one head reproduces").first
    bars.wait_for(timeout=30_000)
    assert no_exception(page)
