"""attend() on a list of texts: one padded batch, one result per text, each equal to the text
run alone; and AttentionResult's short repr."""

import pytest
import torch

TEXTS = ["The cat sat.", "I saw the man with a telescope.",
         "A much longer sentence, with commas, subwords like unbelievability and a few more words "
         "to pad the others by twenty tokens or so.", "Why?"]


@pytest.fixture(scope="module")
def bert():
    import mha_core
    return mha_core.load_model()


def same(a, b):
    assert a.tokens == b.tokens and a.truncated == b.truncated
    for name in ("attentions", "single_head", "hidden_states"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape, name
        torch.testing.assert_close(x, y, atol=1e-5, rtol=1e-4, msg=name)


def test_each_text_of_a_batch_equals_the_text_alone(bert):
    many = bert.attend(TEXTS)
    assert len(many) == len(TEXTS)
    assert len({len(r.tokens) for r in many}) == len(TEXTS)  # real padding happened
    for text, res in zip(TEXTS, many):
        same(res, bert.attend(text))
        # the padding is cut away: every row still sums to 1 over the text's own tokens
        torch.testing.assert_close(res.attentions.sum(-1), torch.ones(res.attentions.shape[:-1]))


def test_pairs_head_masks_and_small_batches(bert):
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    mask = torch.ones(L, H)
    mask[1, 3] = 0
    pairs = ["He had a telescope.", None, "Yes.", "Because."]
    many = bert.attend(TEXTS, text_pair=pairs, head_mask=mask, batch_size=3)  # batches 3 + 1
    for text, pair, res in zip(TEXTS, pairs, many):
        same(res, bert.attend(text, text_pair=pair, head_mask=mask))
    assert many[0].text_pair == "He had a telescope." and many[1].text_pair is None


def test_mismatched_pairs_and_non_text_are_refused(bert):
    with pytest.raises(ValueError, match="2 texts but 1 text pairs"):
        bert.attend(["a", "b"], text_pair=["c"])
    with pytest.raises(TypeError):
        bert.attend(["a", 3])
    assert bert.attend([]) == []


def test_repr_is_short_and_names_model_tokens_and_shapes(bert):
    res = bert.attend("I saw the man with a telescope.")
    text = repr(res)
    assert len(text) < 400
    assert "all-MiniLM-L6-v2" in text and "'telescope'" in text
    assert "(6, 12, 10, 10)" in text and "(7, 10, 384)" in text
    long = repr(bert.attend("word " * 300))
    assert len(long) < 400 and "T=302" in long and " ... " in long
