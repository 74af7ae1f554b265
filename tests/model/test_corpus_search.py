"""Corpus search: the padded-batch index holds each sentence's own (unpadded) hidden states and
attention targets, the search returns what a brute-force cosine ranking in float64 returns, and
every match's characters are the token's characters in its line (pairs included)."""

import numpy as np
import pytest
import torch

from mha_core.corpus_search import build_index, index_bytes, matches, search

LINES = ["I saw the man with a telescope.",
         "The astronomer saw the man with a telescope.",
         "We sat on the bank of the river.",
         "I went to the bank to deposit money. [SEP] It was closed.",
         "",
         "\u200b\u200d",
         "Time flies like an arrow; fruit flies like a banana.",
         "unbelievably " * 200]


def dequantised(index) -> np.ndarray:
    """The int8 index's vectors in float32 (M, D): each row's levels times its scale."""
    return index.vectors.astype(np.float32) * index.scales[:, None]


@pytest.fixture(scope="module")
def index(bundled):
    return build_index(bundled, LINES, layer=2, max_length=64, max_batch_tokens=256)


@pytest.fixture(scope="module")
def exact(bundled):
    """The same index with float32 vectors."""
    return build_index(bundled, LINES, layer=2, max_length=64, max_batch_tokens=256,
                       dtype=np.float32)


def test_int8_vectors_are_the_float32_ones_within_half_a_step(index, exact):
    assert index.vectors.dtype == np.int8 and exact.vectors.dtype == np.float32
    step = np.abs(exact.vectors).max(axis=1, keepdims=True) / 127  # (N, 1)
    assert (np.abs(dequantised(index) - exact.vectors) <= step / 2 + 1e-6).all()
    assert index.nbytes < exact.nbytes / 2
    assert index_bytes(len(index), 384, 12) == index.nbytes


def test_index_holds_each_sentences_own_hidden_states_and_targets(bundled, exact):
    index = exact
    assert index.skipped == 2  # the blank line and the zero-width one
    for line, text in enumerate(LINES):
        rows = np.flatnonzero(index.sentence == line)
        res = bundled.attend(text, max_length=64)
        keep = [t for t, s in enumerate(res.special) if not s]
        assert index.position[rows].tolist() == (keep if text.strip("\u200b\u200d") else [])
        if not keep or not len(rows):
            continue
        h = res.hidden_states[3][keep].numpy().astype(np.float64)  # the output of layer 3
        h /= np.linalg.norm(h, axis=1, keepdims=True)
        np.testing.assert_allclose(index.vectors[rows], h, atol=2e-5)
        att = res.attentions[2].numpy()  # (H, T, T)
        for r, t in zip(rows, keep):
            want = np.argsort(-att[:, t], axis=-1, kind="stable")[:, :3]  # (H, 3)
            np.testing.assert_array_equal(np.sort(index.top_keys[r], -1), np.sort(want, -1))
            np.testing.assert_allclose(index.top_weights[r],
                                       np.take_along_axis(att[:, t], index.top_keys[r]
                                                          .astype(np.int64), -1), atol=1e-3)


def test_the_index_cannot_be_changed(index):
    with pytest.raises(ValueError):
        index.vectors[0, 0] = 1.0


def test_search_is_the_brute_force_cosine_ranking(bundled, index, exact):
    q = bundled.attend("She looked at the bank.").hidden_states[3][5].numpy()  # "bank"
    rows, scores = search(index, q, k=7)
    V = dequantised(index).astype(np.float64)  # what the int8 index holds: unit length
    cos = V @ q / np.linalg.norm(q)  # within half a step a component
    assert rows.tolist() == np.argsort(-cos, kind="stable")[:7].tolist()
    np.testing.assert_allclose(scores, cos[rows], atol=1e-5)
    # against float32's cosine: at most half a step a component, times |q|_1 / |q|_2
    step = np.abs(exact.vectors).max(axis=1) / 127  # (N,)
    bound = step / 2 * np.abs(q).sum() / np.linalg.norm(q) + 1e-6
    assert (np.abs(cos - exact.vectors @ q / np.linalg.norm(q)) <= bound).all()
    found = matches(index, rows, scores, head=4)
    assert found[0].token.lower() == "bank"


def test_matches_point_at_the_tokens_characters(bundled, index):
    rows = np.arange(len(index))
    for m in matches(index, rows, np.zeros(len(rows)), head=0):
        line = LINES[m.line]
        assert m.before + m.token + m.after == line
        piece = index.tokens[m.line][m.position].removeprefix("##")
        assert m.token.lower() == piece or piece == "[UNK]"
    pair = [m for m in matches(index, rows, np.zeros(len(rows)), 0) if m.line == 3]
    closed = next(m for m in pair if m.token == "closed")  # in sentence B of the line
    assert closed.before.endswith("[SEP] It was ")


def test_batching_changes_nothing_and_bad_layers_are_refused(bundled, index):
    one = build_index(bundled, LINES, layer=2, max_length=64, max_batch_tokens=1)
    np.testing.assert_array_equal(one.vectors, index.vectors)
    np.testing.assert_array_equal(one.position, index.position)
    with pytest.raises(ValueError, match="layer must be in 0..5"):
        build_index(bundled, LINES, layer=6)
    empty = build_index(bundled, ["", " "], layer=0)
    assert len(empty) == 0 and empty.skipped == 2
    assert search(empty, torch.ones(384).numpy(), 5)[0].size == 0
