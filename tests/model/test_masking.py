"""Masking a word: the masked run equals typing [MASK] in its place, the per-head change is the
total variation recomputed in numpy, the predictions are transformers' BertForMaskedLM softmax,
and the masked-word importance of a head is the probability drop transformers gives with that
head's output columns zeroed."""

import copy

import numpy as np
import pytest
import torch

from mha_core.masking import mask_importance, mask_tokens, mask_word, maskable

TEXT = "the cat sat on the mat ."


MLM_SEED = 3  # the tiny masked-LM checkpoint's weights (tests/conftest.py mlm_dir)


def tv_np(a, b):
    """Mean over rows of 0.5 * sum |a - b|, in numpy."""
    return 0.5 * np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)).sum(-1).mean(-1)


def hf_probs(hf_mlm, ids, types):
    with torch.no_grad():
        return hf_mlm(input_ids=ids[None], token_type_ids=types[None]).logits[0].softmax(-1)


def test_masking_a_token_equals_typing_mask_in_its_place(bundled):
    text = "I saw the man with a telescope."
    res = bundled.attend(text)
    pos = res.tokens.index("man")
    m = mask_word(bundled, text, None, pos)
    typed = bundled.attend("I saw the [MASK] with a telescope.")
    assert typed.tokens[pos] == "[MASK]"
    torch.testing.assert_close(m.attentions, typed.attentions, atol=1e-6, rtol=0)
    np.testing.assert_allclose(m.change, tv_np(res.attentions, typed.attentions), atol=1e-6)
    assert m.token == "man" and m.predictions == [] and m.p_original is None  # no MLM head
    assert m.change.max() > 0.01  # masking moved some head: the comparison can fail


def test_mask_word_predictions_match_transformers(mlm, hf_mlm):
    enc = mlm.encode(TEXT)
    pos = enc.tokens.index("mat")
    m = mask_word(mlm, TEXT, None, pos, top_k=5)
    ids = enc.input_ids.clone()
    ids[pos] = mlm.tokenizer.mask_token_id
    probs = hf_probs(hf_mlm, ids, enc.token_type_ids)[pos]  # (V,)
    top = probs.topk(5)
    assert [t for t, _ in m.predictions] == mlm.tokenizer.convert_ids_to_tokens(top.indices)
    np.testing.assert_allclose([p for _, p in m.predictions], top.values.numpy(), atol=1e-5)
    target = mlm.tokenizer.convert_tokens_to_ids("mat")
    assert m.p_original == pytest.approx(float(probs[target]), abs=1e-5)
    assert m.rank_original == int((probs > probs[target]).sum()) + 1


def test_mask_word_in_a_pair_keeps_the_segments(mlm):
    enc = mlm.encode("the cat sat .", "on the mat .")
    pos = len(enc.tokens) - 3  # "mat", in sentence B
    masked = mask_tokens(enc, [pos], mlm.tokenizer.mask_token_id)
    assert masked.token_type_ids.tolist() == enc.token_type_ids.tolist()
    assert masked.tokens[pos] == "[MASK]" and masked.masks == (pos,)
    assert mlm.fill_mask("the cat sat .", text_pair="on the [MASK] .") == [
        list(p) for p in [mask_word(mlm, "the cat sat .", "on the mat .", pos).predictions]]


def test_special_tokens_cannot_be_masked(mlm):
    enc = mlm.encode(TEXT)
    assert 0 not in maskable(enc) and len(enc.tokens) - 1 not in maskable(enc)
    with pytest.raises(ValueError, match="cannot be masked"):
        mask_tokens(enc, [0], mlm.tokenizer.mask_token_id)


def without_head(hf_mlm, layer, head):
    ref = copy.deepcopy(hf_mlm)
    dk = ref.config.hidden_size // ref.config.num_attention_heads
    with torch.no_grad():
        out = ref.bert.encoder.layer[layer].attention.output.dense
        out.weight[:, head * dk:(head + 1) * dk] = 0
    return ref


@pytest.mark.parametrize("typed", [False, True])
def test_mask_importance_is_transformers_probability_drop(mlm, hf_mlm, typed):
    L, H = mlm.config.num_hidden_layers, mlm.config.num_attention_heads
    enc = mlm.encode(TEXT)
    pos = enc.tokens.index("sat")
    ids = enc.input_ids.clone()
    ids[pos] = mlm.tokenizer.mask_token_id
    intact = hf_probs(hf_mlm, ids, enc.token_type_ids)[pos]
    if typed:  # the first [MASK] typed; the target is the intact model's top prediction
        got = mask_importance(mlm, "the cat [MASK] on the mat .")
        target = int(intact.argmax())
    else:
        got = mask_importance(mlm, TEXT, None, pos)
        target = mlm.tokenizer.convert_tokens_to_ids("sat")
    assert got.position == pos and got.importance.shape == (L, H)
    assert got.target == mlm.tokenizer.convert_ids_to_tokens(target)
    assert got.p_intact == pytest.approx(float(intact[target]), abs=1e-5)
    want = np.array([[float(intact[target] - hf_probs(without_head(hf_mlm, la, h), ids,
                                                      enc.token_type_ids)[pos, target])
                      for h in range(H)] for la in range(L)])
    np.testing.assert_allclose(got.importance, want, atol=1e-5)
    assert np.abs(want).max() > 1e-4  # some head matters: the comparison can fail


def test_mask_importance_needs_a_head_and_a_mask(bundled, mlm):
    with pytest.raises(ValueError, match="masked-LM head"):
        mask_importance(bundled, "I saw the [MASK].")
    with pytest.raises(ValueError, match="no \\[MASK\\]"):
        mask_importance(mlm, TEXT)
