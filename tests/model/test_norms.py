"""Norm-weighted attention against a direct computation with transformers' own BertModel: its
value projection, its output projection's columns for each head, its attention weights, and the
norm of alpha_ij * f_h(x_j) taken vector by vector. A head switched off has zero norm."""

import numpy as np
import pytest
import torch

from mha_core import norms
from testkit.models import hf_norm_maps, hf_reference

TEXT = "I saw the man with a telescope."


@pytest.fixture(scope="module", params=["bundled", "tiny"])
def pair(request):
    bert = request.getfixturevalue(request.param)
    return bert, hf_reference(bert.path)


def direct_norms(hf, enc):
    """(L, H, T, T): ||alpha_ij f_h(x_j)||, f_h(x_j) = (x_j W_V,h + b_V,h) W_O,h, from
    transformers' modules, as vectors (not alpha times a norm): testkit.models.hf_norm_maps."""
    return hf_norm_maps(hf, enc.input_ids, enc.token_type_ids)


def test_norms_match_transformers(pair):
    bert, hf = pair
    res = bert.attend(TEXT)
    ours = norms.result_norm_maps(bert, res)
    theirs = direct_norms(hf, bert.encode(TEXT))
    assert ours.shape == res.attentions.shape
    torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5)
    assert (ours > 0).all()  # every head moves some of every token's vector


def test_a_head_switched_off_has_zero_norm(pair):
    bert, _ = pair
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    mask = torch.ones(L, H)
    mask[L - 1, H - 1] = 0
    maps = norms.result_norm_maps(bert, bert.attend(TEXT, head_mask=mask))
    assert (maps[L - 1, H - 1] == 0).all()
    assert (maps[L - 1, 0] > 0).all()
    shown = norms.row_normalised(maps)
    assert (shown[L - 1, H - 1] == 0).all()
    rows = shown.sum(-1)
    rows[L - 1, H - 1] = 1
    torch.testing.assert_close(rows, torch.ones_like(rows))


def test_batched_value_norms_equal_one_at_a_time(bundled):
    texts = ["I saw the man with a telescope.", "Time flies."]
    encs = [bundled.encode(t) for t in texts]
    T = max(len(e.tokens) for e in encs)
    ids = torch.zeros(2, T, dtype=torch.long)
    mask = torch.zeros(2, T, dtype=torch.long)
    for b, e in enumerate(encs):
        ids[b, :len(e.tokens)], mask[b, :len(e.tokens)] = e.input_ids, 1
    with torch.no_grad():
        _, cache = bundled.model.run_with_cache(ids, attention_mask=mask, names=("v",))
    batch = norms.value_norms(bundled.model, cache)  # (L, B, H, T)
    for b, text in enumerate(texts):
        _, one = bundled.run_with_cache(text, names=("v",))
        one = norms.value_norms(bundled.model, one)[:, 0]  # (L, H, T)
        n = len(encs[b].tokens)
        torch.testing.assert_close(batch[:, b, :, :n], one, rtol=1e-4, atol=1e-5)


def test_weight_and_norm_shares(bundled):
    texts = [TEXT, "The cat sat on the mat.", "\u200b"]  # the last is only [CLS] [SEP]
    seen = []
    got = norms.weight_and_norm_shares(bundled, texts, progress=lambda i, n: seen.append((i, n)))
    assert got["n"] == 2 and seen == [(1, 3), (2, 3), (3, 3)]
    # the weight shares by hand: [CLS] is column 0, [SEP] the last, "." the one before it
    want = {"cls": [], "sep": [], "punct": []}
    for text in texts[:2]:
        att = bundled.attend(text).attentions.numpy()  # (L, H, T, T)
        want["cls"].append(att[..., 0].mean(axis=(1, 2)))
        want["sep"].append(att[..., -1].mean(axis=(1, 2)))
        want["punct"].append(att[..., -2].mean(axis=(1, 2)))
    for k in norms.KINDS:
        np.testing.assert_allclose(got["weight"][k], np.mean(want[k], axis=0), rtol=1e-5)
        assert got["norm"][k].shape == (6,) and (0 <= got["norm"][k]).all()
        assert (got["norm"][k] <= 1).all()
