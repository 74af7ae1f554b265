"""The Explorer as a lesson uses it: the summed head's caption numbers and the enlarged head
chosen by a stated rule (both drawn in the browser from the data the page sends: explore.js run
here by node, testkit.explore_js), examples that open the view they are about, and the one-head
sentence of every layer. The view's drawing (captions' wording, the token window, the focus
grid's frame) is the browser's: tests/browser."""

import json

import numpy as np
import pytest

from headscope.ui.presets import PRESETS
from testkit.apptest import component, open_app, survives
from testkit.explore_js import NODE, run_js
from testkit.server import ROOT
from tests.conftest import require

TELESCOPE = "I saw the man with a telescope."
ATOL = 1e-4  # 16-bit levels, rows renormalised
ONE_HEAD = ROOT / "mha_core" / "data" / "one_head_all-MiniLM-L6-v2.json"


@pytest.fixture(autouse=True)
def node():
    require(NODE is not None, "node is not installed (apt-get install nodejs; .ci/run does)")


def by_hand(single: np.ndarray) -> dict:
    """The single-head map's shares, computed here with numpy."""
    per_key = single.mean(0)
    prev = np.mean([single[i, i - 1] for i in range(1, len(single))])
    return dict(top=int(per_key.argmax()), top_share=float(per_key.max()), prev=float(prev))


def summed_head_summaries(d) -> list:
    """Per layer, the browser's summary of the summed head's map (its caption's numbers)."""
    return run_js(d, """
      const sv = shownView(d, false, false), H = d.heads;
      out(d.sent.map((l) => { const lm = layerMaps(src, sv, l, false);
                              return mapSummary(lm.maps, H * lm.G * lm.G, lm.G); }));
    """)


def test_the_single_head_caption_numbers_are_this_map_s(bundled):
    at = open_app("explorer", text=TELESCOPE, layer="2")
    res = bundled.attend(TELESCOPE)
    got = summed_head_summaries(component(at, "ex_view"))
    two = by_hand(res.single_head[1].numpy())  # layer 2: a collapse onto [CLS]
    assert res.tokens[two["top"]] == "[CLS]" and two["top_share"] > 0.5
    assert got[1]["top"] == two["top"]
    assert got[1]["top_share"] == pytest.approx(two["top_share"], abs=ATOL)
    one = by_hand(res.single_head[0].numpy())  # layer 1: a diagonal, not a collapse
    assert one["prev"] > 0.5 > one["top_share"]
    assert got[0]["prev_share"] == pytest.approx(one["prev"], abs=ATOL)
    assert any("Training lab" in str(p.proto.label) for p in at.get("page_link"))

    other = "The cat sat on the mat."
    at.text_area(key="text").set_value(other).run()  # another sentence, its own numbers
    got = summed_head_summaries(component(at, "ex_view"))
    want = by_hand(bundled.attend(other).single_head[0].numpy())
    assert got[0]["prev_share"] == pytest.approx(want["prev"], abs=ATOL)


def word_focus_by_hand(att: np.ndarray, tokens) -> np.ndarray:
    """Per head: the mean over word queries of the largest weight on another word."""
    words = [i for i, t in enumerate(tokens) if t.isalpha()]
    best = [[max(att[h, q, k] for k in words if k != q) for q in words] for h in range(len(att))]
    return np.mean(best, axis=1)


def test_the_enlarged_head_follows_the_stated_rule(bundled):
    """With no head in the link the browser enlarges, in each layer, the head whose words
    look most sharply at other words (a reader's pick then stays: tests/browser)."""
    res = bundled.attend(TELESCOPE)
    at = open_app("explorer", text=TELESCOPE)  # no head in the link
    d = component(at, "ex_view")
    assert d["impose"] is None
    got = run_js(d, """
      const sv = shownView(d, false, false);
      out(d.sent.map((l) => wordFocus(layerMaps(src, sv, l, false), sv, d.heads)));
    """)
    for layer in range(res.attentions.shape[0]):
        want = word_focus_by_hand(res.attentions[layer].numpy(), res.tokens)
        np.testing.assert_allclose(got[layer], want, atol=ATOL)
        assert int(np.argmax(got[layer])) == int(np.argmax(want)), layer


@pytest.mark.parametrize("example, layer, head, focus", [
    ("Coreference: it", 4, 2, "it"),
    ("Telescope (astronomer)", 2, 10, "with"),
])
def test_an_example_opens_the_view_it_is_about(bundled, example, layer, head, focus):
    at = open_app("explorer", text="The cat sat on the mat.", layer="6", head="1")
    first = component(at, "ex_view")["impose"]
    at.selectbox(key="preset").set_value(example).run()
    survives(at)
    assert at.text_area(key="text").value == PRESETS[example]
    imposed = component(at, "ex_view")["impose"]
    tokens = bundled.attend(PRESETS[example]).tokens
    assert imposed | {"seq": 0} == dict(layer=layer - 1, head=head - 1,
                                        focus=[tokens.index(focus)], seq=0)
    assert imposed["seq"] != first["seq"]  # a new view: the browser adopts it once
    at.run()  # the next run imposes nothing: the reader's view stays
    assert component(at, "ex_view")["impose"] is None


def test_every_layer_has_its_one_head_sentence(bundled, tiny_dir, monkeypatch):
    at = open_app("explorer", text=TELESCOPE)
    notes = component(at, "ex_view")["notes"]
    shipped = json.loads(ONE_HEAD.read_text())  # the shipped results, read here
    assert len(notes) == bundled.config.num_hidden_layers == len(shipped["layers"])
    for note, row in zip(notes, shipped["layers"]):
        assert note.startswith("Is one head enough? ")
        one = f"{100 * row['fitted']['1']:.0f}%" if row["fitted"]["1"] >= 0 else "none"
        assert f"Layer {row['layer']}: the best-fit single head reproduces {one}" in note
        assert f"head alone (head {row['best_head']})" in note

    monkeypatch.setenv("HEADSCOPE_MODELS", f"tiny={tiny_dir}")  # no shipped results: no notes
    tiny = open_app("explorer", model="tiny", text=TELESCOPE)
    assert tiny.selectbox(key="model").value == "tiny"
    assert component(tiny, "ex_view")["notes"] is None
