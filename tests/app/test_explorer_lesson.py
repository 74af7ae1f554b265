"""The Explorer as a lesson uses it: captions computed from the map shown, the enlarged head
chosen by a stated rule, examples that open the view they are about, a window of tokens for
long texts, and a focus grid that marks the layer and head shown."""

import numpy as np
import pytest

from headscope.ui.presets import PRESETS
from testkit.apptest import component, open_app, survives

TELESCOPE = "I saw the man with a telescope."


def caption(at) -> str:
    return next(c.value for c in at.caption if "The **summed head**" in c.value)


def by_hand(single: np.ndarray) -> dict:
    """The single-head map's shares, computed here with numpy."""
    per_key = single.mean(0)
    prev = np.mean([single[i, i - 1] for i in range(1, len(single))])
    return dict(top=int(per_key.argmax()), top_share=float(per_key.max()), prev=float(prev))


def test_the_single_head_caption_says_what_this_map_does(bundled):
    res = bundled.attend(TELESCOPE)
    at = open_app("explorer", text=TELESCOPE, layer="2")
    two = by_hand(res.single_head[1].numpy())
    assert res.tokens[two["top"]] == "[CLS]" and two["top_share"] > 0.5
    assert (f"collapses onto “\\[CLS\\]”**: the rows put {two['top_share']:.2f} of their "
            "weight on it") in caption(at)
    assert "not a **trained one-head model**" in caption(at)
    assert any("Training lab" in str(p.proto.label) for p in at.get("page_link"))

    at.slider(key="ex_layer").set_value(1).run()  # layer 1: a diagonal, not a collapse
    one = by_hand(res.single_head[0].numpy())
    assert one["prev"] > 0.5 > one["top_share"]
    assert "does not collapse" in caption(at) and "the previous token" in caption(at)
    assert f"({one['prev']:.2f} on average" in caption(at)

    at.text_area(key="text").set_value("The cat sat on the mat.").run()  # another sentence
    other = by_hand(bundled.attend("The cat sat on the mat.").single_head[0].numpy())
    assert f"({other['prev']:.2f} on average" in caption(at)


def word_focus_by_hand(att: np.ndarray, tokens) -> np.ndarray:
    """Per head: the mean over word queries of the largest weight on another word."""
    words = [i for i, t in enumerate(tokens) if t.isalpha()]
    best = [[max(att[h, q, k] for k in words if k != q) for q in words] for h in range(len(att))]
    return np.mean(best, axis=1)


def test_the_enlarged_head_follows_the_stated_rule_until_the_reader_picks_one(bundled):
    res = bundled.attend(TELESCOPE)
    at = open_app("explorer", text=TELESCOPE)  # no head in the link
    layer = at.slider(key="ex_layer").value - 1
    want = int(np.argmax(word_focus_by_hand(res.attentions[layer].numpy(), res.tokens))) + 1
    assert at.selectbox(key="ex_head").value == want
    at.slider(key="ex_layer").set_value(4).run()  # the rule again, on layer 4
    want4 = int(np.argmax(word_focus_by_hand(res.attentions[3].numpy(), res.tokens))) + 1
    assert at.selectbox(key="ex_head").value == want4
    at.selectbox(key="ex_head").set_value(7).run()  # the reader's choice then stays
    at.slider(key="ex_layer").set_value(5).run()
    assert at.selectbox(key="ex_head").value == 7


@pytest.mark.parametrize("example, layer, head, focus", [
    ("Coreference: it", 4, 2, "it"),
    ("Telescope (astronomer)", 2, 10, "with"),
])
def test_an_example_opens_the_view_it_is_about(bundled, example, layer, head, focus):
    at = open_app("explorer", text="The cat sat on the mat.", layer="6", head="1")
    at.selectbox(key="preset").set_value(example).run()
    survives(at)
    assert at.text_area(key="text").value == PRESETS[example]
    assert (at.slider(key="ex_layer").value, at.selectbox(key="ex_head").value) == (layer, head)
    box = next(s for s in at.selectbox if s.label == "Focus token")
    assert box.format_func(box.value).endswith(f": {focus}")


def test_a_long_text_shows_a_window_of_tokens(bundled):
    text = " ".join(f"w{i}" for i in range(60))
    tokens = bundled.encode(text).tokens
    at = open_app("explorer", text=text)
    assert component(at, "ex_grid")["tokens"] == tokens[:40]
    window = next(s for s in at.slider if s.label == "Tokens shown in the maps")
    window.set_value((10, 30)).run()
    assert component(at, "ex_grid")["tokens"] == tokens[10:30]
    assert any(f"Tokens 10–29 of {len(tokens)}" in c.value for c in at.caption)
    assert component(at, "ex_focus_grid")["tokens"] == tokens  # the focus view: every token


def test_the_focus_grid_marks_the_layer_and_head_shown(bundled):
    at = open_app("explorer", text=TELESCOPE, layer="2", head="10", focus="with")
    focus = component(at, "ex_focus_grid")
    assert (focus["layer"], focus["head"]) == (1, 9)
    assert component(at, "ex_grid")["fit"] is True  # the maps fit the first screen
