"""Invariants of the whole encoder and of the text layer, on the bundled model and a tiny BERT."""

import hashlib
import threading

import pytest
import torch

from mha_core.text import to_word_level

TEXT = "I saw the man with a telescope."
# Threads may run matmuls with another number of OpenMP/MKL threads, which reorders float sums
# (about 1e-6 here); switching even one head off moves the outputs by 0.1 or more.
ROUNDING = dict(rtol=1e-5, atol=1e-5)


def param_digest(model):
    h = hashlib.sha256()
    for name, p in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(p.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def test_public_api_shapes(bundled):
    res = bundled.attend(TEXT)
    T = len(res.tokens)
    assert res.tokens == ["[CLS]", "i", "saw", "the", "man", "with", "a", "telescope", ".",
                          "[SEP]"]
    assert res.attentions.shape == (6, 12, T, T) and res.attentions.dtype == torch.float32
    assert res.single_head.shape == (6, T, T)
    assert res.hidden_states.shape == (7, T, 384)
    assert res.truncated is False


@pytest.mark.parametrize("text", [TEXT, "a", "Time flies like an arrow; fruit flies like a "
                                  "banana.", "héllo wörld 😀 東京 שלום مرحبا"])
def test_rows_sum_to_one(bundled, text):
    res = bundled.attend(text)
    torch.testing.assert_close(res.attentions.sum(-1), torch.ones(res.attentions.shape[:-1]))
    torch.testing.assert_close(res.single_head.sum(-1), torch.ones(res.single_head.shape[:-1]))


def test_masking_a_head_leaves_lower_layers_bit_identical(bundled):
    L, H = 6, 12
    intact = bundled.attend(TEXT)
    layer, head = 3, 5
    mask = torch.ones(L, H)
    mask[layer, head] = 0
    ablated = bundled.attend(TEXT, head_mask=mask)
    for i in range(layer + 1):  # hidden_states[i] is the input of layer i
        assert torch.equal(ablated.hidden_states[i], intact.hidden_states[i])
    for i in range(layer):
        assert torch.equal(ablated.attentions[i], intact.attentions[i])
    assert not torch.allclose(ablated.hidden_states[layer + 1], intact.hidden_states[layer + 1])
    assert torch.all(ablated.attentions[layer, head] == 0)


def test_head_mask_shape_is_checked(bundled):
    with pytest.raises(ValueError, match=r"head_mask must have shape \(L, H\) = \(6, 12\)"):
        bundled.attend(TEXT, head_mask=torch.ones(12))


def test_no_parameter_changes_after_any_call(tiny):
    before = param_digest(tiny.model)
    mask = torch.ones(2, 4)
    mask[1, 2] = 0
    tiny.attend("the cat sat on the mat.")
    tiny.attend("the cat", text_pair="sat on the mat", head_mask=mask)
    tiny.attend("")
    assert param_digest(tiny.model) == before
    assert all(not p.requires_grad for p in tiny.model.parameters())


def test_concurrent_calls_get_their_own_results(bundled):
    """The model is shared by every session thread: an ablating call must not leak into an
    intact one running at the same time."""
    expected = bundled.attend(TEXT)
    mask = torch.zeros(6, 12)
    results, errors = [], []

    def intact():
        try:
            for _ in range(5):
                results.append(bundled.attend(TEXT).hidden_states)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def ablating():
        try:
            for _ in range(5):
                bundled.attend("The cat sat on the mat.", head_mask=mask)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=intact), threading.Thread(target=ablating)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for r in results:  # a leaked mask moves values by 0.1 or more; threads only by rounding
        torch.testing.assert_close(r, expected.hidden_states, **ROUNDING)


def test_truncation_is_never_silent(tiny):
    long_text = "the cat sat on the mat. " * 40  # far over the tiny model's 64 positions
    res = tiny.attend(long_text)
    assert res.truncated is True
    assert len(res.tokens) == tiny.max_length == 64
    assert res.tokens[0] == "[CLS]" and res.tokens[-1] == "[SEP]"
    assert res.encoded.n_tokens_full > 64
    assert tiny.attend("the cat").truncated is False


def test_bundled_limit_is_512(bundled):
    res = bundled.attend("word " * 600)
    assert res.truncated and len(res.tokens) == 512 == res.max_length


@pytest.mark.parametrize("text", ["", "   ", "😀🎉", "東京は晴れ", "שלום עולם", "مرحبا",
                                  "a\x00b\x07c\u200bd", "<img src=x onerror=alert(1)>",
                                  "[SEP] [CLS] [MASK]"])
def test_odd_text_just_works(bundled, text):
    res = bundled.attend(text)
    assert res.tokens[0] == "[CLS]" and res.tokens[-1] == "[SEP]"
    assert torch.isfinite(res.attentions).all()
    labels, groups = res.words()
    assert sorted(t for g in groups for t in g) == list(range(len(res.tokens)))


def test_sentence_pair_has_two_segments(bundled):
    res = bundled.attend("I saw the man.", text_pair="He had a telescope.")
    types = res.encoded.token_type_ids.tolist()
    assert res.tokens.count("[SEP]") == 2
    assert types[: res.tokens.index("[SEP]") + 1] == [0] * (res.tokens.index("[SEP]") + 1)
    assert types[-1] == 1


def test_word_groups_follow_the_original_text(bundled):
    res = bundled.attend("Headscope visualises attention.")
    labels, groups = res.words()
    assert labels == ["[CLS]", "Headscope", "visualises", "attention", ".", "[SEP]"]
    assert any(len(g) > 1 for g in groups)  # at least one word really is split into pieces
    word_att = res.word_level(res.attentions)
    G = len(labels)
    assert word_att.shape == (6, 12, G, G)
    torch.testing.assert_close(word_att.sum(-1), torch.ones(6, 12, G))


def test_word_level_sums_to_and_averages_from():
    """Clark et al. 2019 on a hand-made map: tokens 1 and 2 are one word."""
    att = torch.tensor([[0.1, 0.2, 0.3, 0.4],
                        [0.4, 0.3, 0.2, 0.1],
                        [0.0, 0.5, 0.5, 0.0],
                        [0.25, 0.25, 0.25, 0.25]])
    groups = [[0], [1, 2], [3]]
    w = to_word_level(att, groups)
    expected = torch.tensor([[0.1, 0.5, 0.4],
                             [(0.4 + 0.0) / 2, (0.5 + 1.0) / 2, (0.1 + 0.0) / 2],
                             [0.25, 0.5, 0.25]])
    torch.testing.assert_close(w, expected)


def test_sentence_pair_truncation_matches_the_tokenizer(tiny):
    a, b = "the cat sat on the mat. " * 10, "we sat on the bank of the river. " * 10
    res = tiny.attend(a, text_pair=b)
    ref = tiny.tokenizer(a, b, truncation=True, max_length=64)
    assert res.truncated and res.encoded.input_ids.tolist() == ref["input_ids"]
    assert res.encoded.token_type_ids.tolist() == ref["token_type_ids"]
    assert res.tokens.count("[SEP]") == 2


def test_attend_returns_ordinary_tensors(tiny):
    res = tiny.attend("the cat")
    res.attentions[..., 0] = 0  # callers may edit their copy; no inference-mode error
