"""One head's query/key space: the vectors against transformers' own projections, AttentionViz's
normalisation (centroids matched, mean norms equal, the softmax of every query unchanged), and
the joint 2-D projections."""

import numpy as np
import pytest
import torch

from mha_core import qk_space as qk
from testkit.models import hf_reference

TEXTS = ["I saw the man with a telescope.", "\u200b", "The cat sat on the mat."]


def test_vectors_match_transformers(bundled):
    space = qk.qk_vectors(bundled, TEXTS, layer=2, head=8)
    assert space.texts == [TEXTS[0], TEXTS[2]]  # the second is only [CLS] [SEP]
    hf = hf_reference(bundled.path)
    K = hf.config.hidden_size // hf.config.num_attention_heads
    start = 0
    for s, text in enumerate(space.texts):
        enc = bundled.encode(text)
        with torch.no_grad():
            hidden = hf(input_ids=enc.input_ids[None], output_hidden_states=True).hidden_states
            sa = hf.encoder.layer[2].attention.self
            q = sa.query(hidden[2][0])[:, 8 * K:9 * K].numpy()  # (T, K)
            k = sa.key(hidden[2][0])[:, 8 * K:9 * K].numpy()
        T = len(enc.tokens)
        np.testing.assert_allclose(space.queries[start:start + T], q, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(space.keys[start:start + T], k, rtol=1e-4, atol=1e-5)
        assert space.tokens[start:start + T] == enc.tokens
        assert (space.sentence[start:start + T] == s).all()
        assert space.position[start:start + T].tolist() == list(range(T))
        att = bundled.attend(text).attentions[2, 8].numpy()
        np.testing.assert_array_equal(space.attention[s], att)
        start += T
    assert start == len(space.tokens) and not space.truncated


def test_token_bound(bundled):
    space = qk.qk_vectors(bundled, TEXTS * 5, layer=0, head=0, max_tokens=20)
    assert len(space.tokens) == 20 and space.truncated
    assert space.queries.shape == (20, 32) and space.keys.shape == (20, 32)
    with pytest.raises(ValueError, match="besides"):
        qk.qk_vectors(bundled, ["\u200b"], layer=0, head=0)


def test_normalisation_keeps_every_softmax():
    rng = np.random.default_rng(0)
    q = rng.normal(2.0, 1.0, (30, 8))
    k = rng.normal(-1.0, 3.0, (40, 8))
    nq, nk = qk.normalise(q, k)
    np.testing.assert_allclose(nq.mean(0) / np.linalg.norm(nq.mean(0)),
                               nk.mean(0) / np.linalg.norm(nk.mean(0)), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(nq, axis=1).mean(),
                               np.linalg.norm(nk, axis=1).mean(), rtol=1e-12)

    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    np.testing.assert_allclose(softmax(nq @ nk.T / np.sqrt(8)), softmax(q @ k.T / np.sqrt(8)),
                               atol=1e-12)


def test_centroids_meet_before_scaling():
    q = np.array([[1.0, 0.0], [3.0, 0.0]])
    k = np.array([[0.0, 5.0], [0.0, 7.0]])
    nq, nk = qk.normalise(q, k)
    # keys moved to the queries' centroid (2, 0): (2, -1) and (2, 1); norms: q 1 and 3 (mean 2),
    # k sqrt(5) twice; c = sqrt(sqrt(5) / 2)
    c = np.sqrt(np.sqrt(5) / 2)
    np.testing.assert_allclose(nq, q * c)
    np.testing.assert_allclose(nk, np.array([[2.0, -1.0], [2.0, 1.0]]) / c)


@pytest.mark.parametrize("method", qk.METHODS)
def test_projection_is_joint_and_2d(method):
    rng = np.random.default_rng(1)
    q, k = rng.normal(0, 1, (25, 6)), rng.normal(5, 1, (25, 6))
    xy = qk.project(q, k, method)
    assert xy.shape == (50, 2) and np.isfinite(xy).all()
    # two well separated clouds stay apart: queries first, then keys
    gap = np.linalg.norm(xy[:25].mean(0) - xy[25:].mean(0))
    spread = max(xy[:25].std(0).max(), xy[25:].std(0).max())
    assert gap > 2 * spread
    assert np.array_equal(xy, qk.project(q, k, method))  # seeded: the same every time


def test_pca_axes_by_hand():
    q = np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])
    k = np.array([[0.0, 0.5, 0.0], [0.0, -0.5, 0.0]])
    xy = qk.project(q, k, "PCA")
    np.testing.assert_allclose(np.abs(xy), [[1, 0], [1, 0], [0, 0.5], [0, 0.5]], atol=1e-12)


def test_unknown_method():
    with pytest.raises(ValueError, match="PCA"):
        qk.project(np.zeros((3, 2)), np.zeros((3, 2)), "UMAP")
