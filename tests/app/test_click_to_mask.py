"""Click-to-mask and the per-head difference grid through AppTest, on a tiny random
masked-LM BERT the test builds: a click on a label of the Explorer's maps (the component's
trigger "mask" with the token position, which the browser reads from its shown view: run here
by node, testkit.explore_js) or on a token of the Head view (trigger "token"), fired through
Streamlit's own widget machinery by testkit.apptest.click, masks the token behind it, mapped
back by hand from the tokenizer's word ids through word-level views and hidden [CLS]/[SEP];
the predictions and the difference grid against transformers' BertForMaskedLM."""

import numpy as np

from headscope.ui import style
from testkit.apptest import (
    array,
    axis_tokens,
    chart,
    click,
    component,
    messages,
    open_app,
    selectbox,
    survives,
)
from testkit.explore_js import NODE, run_js
from testkit.models import hf_mlm_run
from testkit.payloads import unpack
from tests.conftest import require

A, B = "the zebra sat on the mat .", "i saw the man ."


MLM_SEED = 11  # the tiny masked-LM checkpoint's weights (tests/conftest.py mlm_dir)


def shown_words_by_hand(mlm, text, pair):
    """The labels of the word-level view with [CLS]/[SEP] hidden, as token positions: the
    tokenizer's own (sequence, word) ids group the pieces; special tokens have none."""
    enc = mlm.tokenizer(text, pair)
    groups, seen = [], {}
    for t, (s, w) in enumerate(zip(enc.sequence_ids(), enc.word_ids())):
        if w is None:
            continue  # a special token: hidden
        if (s, w) not in seen:
            seen[(s, w)] = len(groups)
            groups.append([])
        groups[seen[(s, w)]].append(t)
    return groups


def masked_by_hand(mlm, hf_mlm, text, pair, pos):
    """transformers' top-5 at `pos` with that token masked, and (masked - original) maps."""
    enc = mlm.encode(text, pair)
    ids = enc.input_ids.clone()
    ids[pos] = mlm.tokenizer.mask_token_id
    probs, after = hf_mlm_run(hf_mlm, ids, enc.token_type_ids)
    _, before = hf_mlm_run(hf_mlm, enc.input_ids, enc.token_type_ids)
    top = probs[pos].topk(5)
    return mlm.tokenizer.convert_ids_to_tokens(top.indices), top.values.numpy(), after - before


def test_a_click_on_a_word_label_masks_its_first_piece(offered_mlm, mlm, hf_mlm):
    require(NODE is not None, "node is not installed (apt-get install nodejs; .ci/run does)")
    at = open_app("explorer", model=offered_mlm, text=A, pair=B, words="1", nospecial="1")
    survives(at)
    groups = shown_words_by_hand(mlm, A, B)
    d = component(at, "ex_view")
    assert (d["impose"]["words"], d["impose"]["hide"]) == (True, True)
    # the view the browser shows for this link, and what a click on each label sends
    sv = run_js(d, "out(shownView(d, true, true));")
    assert len(sv["labels"]) == len(groups) and sv["labels"][1] == "zebra"
    assert sv["maskable"] == [g[0] for g in groups]  # no special token is shown
    assert selectbox(at, "Word to mask").value is None
    pos = groups[1][0]
    click(at, "ex_view", "mask", [sv["maskable"][1], "zebra"])  # "zebra": z ##e ##b ##r ##a
    survives(at)
    assert len(groups[1]) > 1 and mlm.encode(A, B).tokens[pos] == "z"
    assert selectbox(at, "Word to mask").value == pos
    tokens, probs, diff = masked_by_hand(mlm, hf_mlm, A, B, pos)
    bars = chart(at, "ex_mask_predictions")["data"][0]
    assert axis_tokens(bars["y"]) == tokens
    np.testing.assert_allclose(array(bars["x"]), probs, atol=1e-5)

    # the difference grid: every head of the chosen head's layer, masked minus original
    tv = 0.5 * np.abs(diff).sum(-1).mean(-1)  # (L, H), by hand
    L, H = tv.shape
    layer, head = divmod(int(tv.argmax()), H)  # the head that moved most is compared first
    assert at.selectbox(key="ex_mask_head").value == f"L{layer + 1} H{head + 1}"
    d = component(at, "ex_mask_diff")
    np.testing.assert_allclose(unpack(d["maps"]), diff[layer], atol=1e-5)
    assert d["range"] == [-1.0, 1.0] and d["colorscale"] == style.DIVERGING
    assert d["legend"] == "masked − original" and d["heads"] == H and d["selected"] == head
    assert d["tokens"] == mlm.encode(A, B).tokens
    assert [t.split("moved ")[1] for t in d["titles"]] == [f"{x:.2f}" for x in tv[layer]]


def test_a_click_on_a_head_of_the_difference_grid_compares_it(offered_mlm, mlm, hf_mlm):
    at = open_app("explorer", model=offered_mlm, text=A)
    pos = mlm.encode(A).tokens.index("mat")
    assert component(at, "ex_view")["maskable"][pos] == pos  # token level: itself
    click(at, "ex_view", "mask", [pos, "mat"])
    survives(at)
    layer = int(at.selectbox(key="ex_mask_head").value.split()[0][1:]) - 1
    other = (component(at, "ex_mask_diff")["selected"] + 1) % mlm.config.num_attention_heads
    click(at, "ex_mask_diff", "head", other)
    survives(at)
    assert at.selectbox(key="ex_mask_head").value == f"L{layer + 1} H{other + 1}"
    assert component(at, "ex_mask_diff")["selected"] == other
    titles = [a["text"] for a in chart(at, "ex_mask_maps")["layout"]["annotations"]]
    assert titles == [f"L{layer + 1} H{other + 1}, original", f"L{layer + 1} H{other + 1}, masked"]


def test_a_masked_token_of_a_long_text_compares_a_window_around_it(offered_mlm, mlm, hf_mlm):
    text = "the cat sat on the mat . " * 7  # 49 tokens and [CLS], [SEP]: a window of 40
    tokens = mlm.encode(text).tokens
    at = open_app("explorer", model=offered_mlm, text=text)
    assert component(at, "ex_view")["tokens"] == tokens  # every token: the browser's window
    click(at, "ex_view", "mask", [15, tokens[15]])
    survives(at)
    assert selectbox(at, "Word to mask").value == 15
    _, _, diff = masked_by_hand(mlm, hf_mlm, text, None, 15)
    layer = int(at.selectbox(key="ex_mask_head").value.split()[0][1:]) - 1
    d = component(at, "ex_mask_diff")  # 40 tokens around the masked one (here from 0)
    assert d["tokens"] == tokens[:40]
    np.testing.assert_allclose(unpack(d["maps"]), diff[layer][:, :40, :40], atol=1e-5)
    assert f"Tokens 0–39 of {len(tokens)}, around the masked one." in messages(at)


def test_special_tokens_and_typed_masks_cannot_be_clicked(offered_mlm, mlm):
    text = "the cat [MASK] on the mat ."
    at = open_app("explorer", model=offered_mlm, text=text)
    tokens = mlm.encode(text).tokens
    want = [None if t in ("[CLS]", "[SEP]", "[MASK]") else i for i, t in enumerate(tokens)]
    assert component(at, "ex_view")["maskable"] == want  # the browser sends no click on None
    # forged clicks: on [CLS], on the typed [MASK], no position, out of the sentence
    for value in ([0, "[CLS]"], [tokens.index("[MASK]"), "[MASK]"], [None, "[CLS]"],
                  [len(tokens) + 5, "x"], [-1, "x"], "junk"):
        click(at, "ex_view", "mask", value)
        survives(at)
        assert selectbox(at, "Word to mask").value is None, value


def test_a_click_on_a_token_of_the_head_view_masks_it(offered_mlm, mlm, hf_mlm):
    at = open_app("head_view", model=offered_mlm, text=A, pair=B, words="1", nospecial="1")
    survives(at)
    groups = shown_words_by_hand(mlm, A, B)
    p = component(at, "hv_lines")
    assert p["maskable"] == [True] * len(groups) and p["tokens"][1] == "zebra"
    click(at, "hv_lines", "token", 1)
    survives(at)
    pos = groups[1][0]
    assert selectbox(at, "Word to mask").value == pos
    tokens, probs, diff = masked_by_hand(mlm, hf_mlm, A, B, pos)
    bars = chart(at, "hv_mask_predictions")["data"][0]
    assert axis_tokens(bars["y"]) == tokens
    np.testing.assert_allclose(array(bars["x"]), probs, atol=1e-5)
    layer = int(at.selectbox(key="hv_mask_head").value.split()[0][1:]) - 1
    np.testing.assert_allclose(unpack(component(at, "hv_mask_diff")["maps"]), diff[layer],
                               atol=1e-5)
