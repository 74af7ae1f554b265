"""Sentence pairs and masked words in the app (AppTest, inside the real frame), on a tiny random
masked-LM BERT the test builds and the server offers through HEADSCOPE_MODELS: the second box on
every page that reads the sentence, the link and the presentation row; typed [MASK]s and a word
chosen to mask on the Explorer, against transformers' BertForMaskedLM; the Head lab's
masked-word importance; and what the bundled model (no masked-LM head) says instead."""

import copy

import numpy as np
import pytest
import torch

from headscope.ui.sidebar import EXAMPLES
from testkit.apptest import (
    array,
    axis_tokens,
    chart,
    component,
    messages,
    open_app,
    selectbox,
    survives,
)
from testkit.models import hf_mlm_run

A, B = "the cat sat on the mat .", "i saw the man with a telescope ."


MLM_SEED = 5  # the tiny masked-LM checkpoint's weights (tests/conftest.py mlm_dir)


def ticks(fig, axis="xaxis") -> list:
    return axis_tokens(fig["layout"][axis]["ticktext"])


# --- the pair on every page that reads the sentence --------------------------------------------

def shown_tokens(at, page) -> list:
    """The tokens a page shows, read from what it drew."""
    if page == "explorer":
        return component(at, "ex_view")["tokens"]
    if page == "all_heads":
        return ticks(chart(at, "ah_rollout_one"))
    if page == "head_lab":
        return ticks(chart(at, "hl_token_change"))
    if page == "inside_mha":
        query = next(s for s in at.selectbox if s.key == "im_real_query")
        return [o.split(": ", 1)[1] for o in query.options]
    if page == "corpus_search":
        token = next(s for s in at.selectbox if s.key.startswith("cs_token_"))
        return [o.split(": ", 1)[1] for o in token.options]
    raise ValueError(page)


PAIR_PAGES = ["explorer", "all_heads", "head_lab", "inside_mha", "corpus_search"]


@pytest.mark.parametrize("page", PAIR_PAGES)
@pytest.mark.parametrize("typed", [False, True], ids=["two boxes", "typed [SEP]"])
def test_every_page_reads_the_pair(offered_mlm, mlm, page, typed):
    query = dict(text=f"{A} [SEP] {B}") if typed else dict(text=A, pair=B)
    at = open_app(page, model=offered_mlm, **query)
    survives(at)
    want = mlm.encode(A, B).tokens
    if page == "corpus_search":  # the token choice lists the words, not [CLS]/[SEP]
        want = [t for t in want if t not in ("[CLS]", "[SEP]")]
    assert shown_tokens(at, page) == want
    assert ("read as the pair separator" in messages(at)) == typed


def test_the_link_and_the_presentation_row_carry_the_pair(offered_mlm):
    at = open_app("explorer", model=offered_mlm, text=A, pair=B)
    assert at.sidebar.text_area(key="pair").value == B and at.query_params["pair"] == B
    at.text_area(key="pair").set_value("the cat sat .").run()
    assert at.query_params["pair"] == "the cat sat ."
    at.text_area(key="pair").set_value("").run()
    assert "pair" not in at.query_params
    at = open_app("head_lab", model=offered_mlm, text=A, pair=B, present="1")
    survives(at)
    assert not at.sidebar.text_area and at.text_area(key="pair").value == B


def test_a_pair_example_fills_both_boxes_and_a_single_one_clears_the_second(bundled):
    at = open_app("explorer")
    pair_example = next(e for e in EXAMPLES if e.startswith("Pair:"))
    at.selectbox(key="preset").set_value(pair_example).run()
    survives(at)
    assert at.text_area(key="pair").value
    tokens = component(at, "ex_view")["tokens"]
    assert tokens.count("[SEP]") == 2
    at.selectbox(key="preset").set_value(EXAMPLES[0]).run()
    assert at.text_area(key="pair").value == ""


# --- masked words on the Explorer ----------------------------------------------------------------

def test_typed_masks_show_transformers_predictions(offered_mlm, mlm, hf_mlm):
    text, pair = "the cat sat on the [MASK] .", "the [MASK] sat ."
    at = open_app("explorer", model=offered_mlm, text=text, pair=pair)
    survives(at)
    assert "typed in both sentences" in messages(at)
    enc = mlm.encode(text, pair)
    probs, _ = hf_mlm_run(hf_mlm, enc.input_ids, enc.token_type_ids)
    for i, t in enumerate(enc.masks):
        fig = chart(at, f"ex_mask_typed_{i}")
        top = probs[t].topk(5)
        assert axis_tokens(fig["data"][0]["y"]) == mlm.tokenizer.convert_ids_to_tokens(
            top.indices)
        np.testing.assert_allclose(array(fig["data"][0]["x"]), top.values.numpy(), atol=1e-5)


def test_masking_a_word_shows_predictions_and_how_every_head_moved(offered_mlm, mlm, hf_mlm):
    at = open_app("explorer", model=offered_mlm, text=A, pair=B)
    enc = mlm.encode(A, B)
    pos = enc.tokens.index("mat")
    box = selectbox(at, "Word to mask")
    assert None in box.options or "(none)" in box.options
    box.set_value(pos).run()
    survives(at)
    ids = enc.input_ids.clone()
    ids[pos] = mlm.tokenizer.mask_token_id
    probs, masked_att = hf_mlm_run(hf_mlm, ids, enc.token_type_ids)
    _, original_att = hf_mlm_run(hf_mlm, enc.input_ids, enc.token_type_ids)
    bars = chart(at, "ex_mask_predictions")["data"][0]
    top = probs[pos].topk(5)
    assert axis_tokens(bars["y"]) == mlm.tokenizer.convert_ids_to_tokens(top.indices)
    np.testing.assert_allclose(array(bars["x"]), top.values.numpy(), atol=1e-5)
    tv = 0.5 * np.abs(masked_att - original_att).sum(-1).mean(-1)  # (L, H), in numpy
    np.testing.assert_allclose(array(chart(at, "ex_mask_change")["data"][0]["z"]), tv,
                               atol=1e-5)
    maps = chart(at, "ex_mask_maps")
    assert ticks(maps, "xaxis2")[pos] == "[MASK]" and ticks(maps, "xaxis")[pos] == "mat"


def test_the_bundled_model_says_what_predictions_need(bundled):
    at = open_app("explorer", text="I saw the [MASK] with a telescope.")
    survives(at)
    said = messages(at)
    assert "need a checkpoint with a masked-LM head" in said
    assert chart(at, "ex_mask_typed_0") is None
    res = bundled.attend("I saw the [MASK] with a telescope.")
    selectbox(at, "Word to mask").set_value(res.tokens.index("telescope")).run()
    survives(at)
    assert chart(at, "ex_mask_change") is not None and chart(at, "ex_mask_predictions") is None
    at = open_app("head_lab", text="I saw the [MASK].")
    assert "need a checkpoint with a masked-LM head" in messages(at)


# --- the Head lab's masked-word importance -------------------------------------------------------

def test_head_lab_ranks_heads_by_the_masked_words_probability(offered_mlm, mlm, hf_mlm):
    text = "the cat [MASK] on the mat ."
    at = open_app("head_lab", model=offered_mlm, text=text)
    survives(at)
    fig = chart(at, "hl_mask_importance")
    enc = mlm.encode(text)
    pos = enc.masks[0]
    probs, _ = hf_mlm_run(hf_mlm, enc.input_ids, enc.token_type_ids)
    target = int(probs[pos].argmax())
    L, H = mlm.config.num_hidden_layers, mlm.config.num_attention_heads
    dk = mlm.config.hidden_size // H
    want = np.zeros((L, H))
    for la in range(L):
        for h in range(H):
            ref = copy.deepcopy(hf_mlm)
            with torch.no_grad():
                dense = ref.bert.encoder.layer[la].attention.output.dense
                dense.weight[:, h * dk:(h + 1) * dk] = 0
            want[la, h] = float(probs[pos, target] - hf_mlm_run(ref, enc.input_ids,
                                                            enc.token_type_ids)[0][pos, target])
    np.testing.assert_allclose(array(fig["data"][0]["z"]), want, atol=1e-5)
    target_token = mlm.tokenizer.convert_ids_to_tokens(target)
    assert target_token in fig["layout"]["title"]["text"]
