"""The toy walkthrough: its final output is what MultiHeadSelfAttention computes on the same
input and weights, and every matrix it shows has the shape it claims."""

import numpy as np
import pytest
import torch

from mha_core import toy
from mha_core.attention import MultiHeadSelfAttention

WORD_SETS = [("money", "bank"), ("bank",), ("i", "went", "to", "the", "bank", "today")]


@pytest.mark.parametrize("words", WORD_SETS)
@pytest.mark.parametrize("seed", [0, 7])
def test_output_equals_the_module(words, seed):
    attn = toy.toy_attention(4, 2, seed)
    wt = toy.walkthrough(words, attn)
    X = toy.toy_embedding(words, 4)  # (T, D)
    with torch.no_grad():
        y, probs = attn(X[None])  # (1, T, D), (1, H, T, T)
    np.testing.assert_allclose(wt.output, y[0].double().numpy(), atol=1e-5)
    shown = {m.name: m.values for s in wt.steps for m in s.matrices}
    for i in range(2):
        np.testing.assert_allclose(shown[f"softmax_{i + 1}"], probs[0, i].double().numpy(),
                                   atol=1e-6)


def test_per_head_matrices_are_the_modules_split():
    """Q_i, K_i, V_i shown for head i are exactly what the module's own split gives head i."""
    words = ("money", "bank", "river")
    attn = toy.toy_attention(4, 2, 3)
    wt = toy.walkthrough(words, attn)
    shown = {m.name.split(" = ")[0]: m.values for s in wt.steps for m in s.matrices
             if " = " in m.name}
    with torch.no_grad():
        q, k, v = attn.project(toy.toy_embedding(words, 4)[None])  # (1, H, T, K) each
    for i in range(2):
        for letter, t in (("Q", q), ("K", k), ("V", v)):
            np.testing.assert_allclose(shown[f"{letter}_{i + 1}"], t[0, i].double().numpy(),
                                       atol=1e-6)


def expected_shape(name, T, D, K):
    if name == "X" or name.startswith(("Output", "Concat")):
        return (T, D)
    if name == "W_O":
        return (D, D)
    if name.startswith(("W_Q", "W_K", "W_V")):
        return (D, K)
    if name.startswith(("Q_", "K_", "V_", "Z_")) and "ᵀ" not in name:
        return (T, K)
    if "ᵀ" in name or name.startswith("softmax"):
        return (T, T)
    raise AssertionError(f"unexpected matrix {name}")


@pytest.mark.parametrize("words", WORD_SETS)
def test_every_shown_shape_is_right(words):
    T, D, H = len(words), 4, 2
    wt = toy.walkthrough(words, toy.toy_attention(D, H, 0))
    names = [m.name for s in wt.steps for m in s.matrices]
    for want in ("X", "W_Q_1", "W_K_2", "W_V_1", "softmax_2", "Z_1", "W_O"):
        assert want in names
    for step in wt.steps:
        for m in step.matrices:
            shape = expected_shape(m.name, T, D, D // H)
            assert m.values.shape == shape, m.name
            assert m.shape_text.endswith(str(shape)), m.name
            assert (len(m.rows), len(m.cols)) == shape, m.name


def test_softmax_rows_sum_to_one_and_concat_is_the_heads_side_by_side():
    wt = toy.walkthrough(("money", "bank"), toy.toy_attention())
    shown = {m.name: m.values for s in wt.steps for m in s.matrices}
    for i in (1, 2):
        np.testing.assert_allclose(shown[f"softmax_{i}"].sum(1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(shown["Concat(Z_1..Z_h)"],
                                  np.hstack([shown["Z_1"], shown["Z_2"]]))


def test_walkthrough_refuses_what_it_cannot_show():
    with pytest.raises(ValueError):
        toy.walkthrough(("a", "b"), MultiHeadSelfAttention(4, 2, mode="narrow", bias=False))
    with pytest.raises(ValueError):
        toy.walkthrough(("a", "b"), MultiHeadSelfAttention(4, 2, bias=True))


def test_toy_input_handling():
    assert toy.parse_toy_words("money bank") == (["money", "bank"], None)
    words, msg = toy.parse_toy_words("   ")
    assert words == ["money", "bank"] and "No words" in msg
    words, msg = toy.parse_toy_words("bank")
    assert words == ["bank"] and msg
    words, msg = toy.parse_toy_words(" ".join(f"w{i}" for i in range(40)))
    assert len(words) == toy.TOY_MAX_WORDS and "40 words" in msg
    words, _ = toy.parse_toy_words("<b>bold</b> <script>x")
    assert all("<" not in w and ">" not in w for w in words)
    assert all(len(w) <= toy.TOY_MAX_CHARS for w in toy.parse_toy_words("a" * 500)[0])


def test_toy_embedding_is_stable_per_word():
    a = toy.toy_embedding(["bank", "money", "bank"])
    torch.testing.assert_close(a[0], a[2])
    torch.testing.assert_close(toy.toy_embedding(["money"])[0], a[1])
