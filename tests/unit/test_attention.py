"""Multi-head attention against known math: shapes, invariants, single head, parameter counts."""

import math

import pytest
import torch

from mha_core.attention import (
    MultiHeadSelfAttention,
    additive_mask,
    attention,
    input_slices,
)
from mha_core.toy import attention_params


def torch_reference(mha, x, mask=None):
    """The same wide attention through torch's own scaled_dot_product_attention."""
    B, T, D = x.shape
    H = mha.n_heads
    q, k, v = (lin(x).view(B, T, H, D // H).transpose(1, 2)  # (B, H, T, K)
               for lin in (mha.query, mha.key, mha.value))
    ctx = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return mha.out(ctx.transpose(1, 2).reshape(B, T, D))  # (B, T, D)


def test_wide_matches_torch_sdpa():
    torch.manual_seed(0)
    mha = MultiHeadSelfAttention(32, 4)
    x = torch.randn(2, 7, 32)
    y, probs = mha(x)
    assert probs.shape == (2, 4, 7, 7)
    torch.testing.assert_close(y, torch_reference(mha, x), atol=1e-5, rtol=1e-5)


def test_rows_sum_to_one_and_padded_keys_get_zero():
    torch.manual_seed(1)
    mha = MultiHeadSelfAttention(16, 2)
    x = torch.randn(2, 5, 16)
    keep = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    _, probs = mha(x, attention_mask=keep)
    torch.testing.assert_close(probs.sum(-1), torch.ones(2, 2, 5))
    assert torch.all(probs[1, :, :, 3:] == 0)


def test_head_mask_zeroes_that_head_only_and_changes_no_parameter():
    torch.manual_seed(2)
    mha = MultiHeadSelfAttention(16, 4)
    before = {k: v.clone() for k, v in mha.state_dict().items()}
    x = torch.randn(1, 6, 16)
    y0, p0 = mha(x)
    y1, p1 = mha(x, head_mask=torch.tensor([1.0, 0.0, 1.0, 1.0]))
    assert torch.all(p1[:, 1] == 0)
    torch.testing.assert_close(p1[:, [0, 2, 3]], p0[:, [0, 2, 3]], atol=0, rtol=0)
    assert not torch.allclose(y0, y1)
    # the output equals the intact one minus head 1's share of the output projection
    _, _, (q, k, v) = mha(x, return_qkv=True)
    ctx1 = p0[:, 1] @ v[:, 1]  # (B, T, K)
    share = ctx1 @ mha.out.weight[:, 4:8].T  # (B, T, D)
    torch.testing.assert_close(y1, y0 - share, atol=1e-5, rtol=1e-5)
    for k_, v_ in mha.state_dict().items():
        assert torch.equal(v_, before[k_])


def test_batched_head_mask():
    torch.manual_seed(3)
    mha = MultiHeadSelfAttention(16, 4)
    x = torch.randn(1, 6, 16).expand(2, 6, 16)
    hm = torch.tensor([[1.0, 1, 1, 1], [0, 1, 1, 1]])
    y, p = mha(x, head_mask=hm)
    y_intact, _ = mha(x[:1])
    torch.testing.assert_close(y[0], y_intact[0], atol=0, rtol=0)
    assert torch.all(p[1, 0] == 0) and not torch.allclose(y[0], y[1])


def test_return_qkv_shapes_and_probs_from_them():
    mha = MultiHeadSelfAttention(24, 3)
    x = torch.randn(2, 4, 24)
    _, probs, (q, k, v) = mha(x, return_qkv=True)
    assert q.shape == k.shape == v.shape == (2, 3, 4, 8)
    by_hand = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), dim=-1)
    torch.testing.assert_close(probs, by_hand)


def test_single_head_is_summed_scores_through_one_softmax():
    """Q K^T = sum_h Q_h K_h^T, so the single head's logits are the heads' logits, summed."""
    torch.manual_seed(4)
    mha = MultiHeadSelfAttention(32, 4)
    x = torch.randn(1, 6, 32)
    q, k, _ = mha.project(x)  # (B, H, T, K)
    per_head = q @ k.transpose(-2, -1)  # (B, H, T, T), unscaled
    Q, K = mha.query(x), mha.key(x)  # (B, T, D)
    torch.testing.assert_close(Q @ K.transpose(-2, -1), per_head.sum(1), atol=1e-4, rtol=1e-5)
    expected = torch.softmax(per_head.sum(1) / math.sqrt(32), dim=-1)
    torch.testing.assert_close(mha.single_head(x), expected, atol=1e-6, rtol=1e-5)
    keep = torch.tensor([[1, 1, 1, 1, 0, 0]])
    masked = mha.single_head(x, additive_mask(keep))
    assert torch.all(masked[..., 4:] == 0)
    torch.testing.assert_close(masked.sum(-1), torch.ones(1, 6))


@pytest.mark.parametrize("d,h", [(8, 2), (32, 4), (384, 12), (768, 12)])
def test_parameter_counts_equal_the_formulas(d, h):
    wide = MultiHeadSelfAttention(d, h, mode="wide")
    narrow = MultiHeadSelfAttention(d, h, mode="narrow")
    rand = MultiHeadSelfAttention(d, h, mode="random")
    n = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert n(wide) == 4 * d * d + 4 * d == attention_params(d, h, d // h, "wide")
    assert n(narrow) == 3 * d * d // h + 3 * d + d * d + d == attention_params(d, h, d // h,
                                                                             "narrow")
    assert n(rand) == n(narrow)


def test_narrow_heads_read_only_their_own_slice():
    torch.manual_seed(5)
    mha = MultiHeadSelfAttention(16, 4, mode="narrow")
    x = torch.randn(1, 5, 16)
    q0, _, _ = mha.project(x)
    x2 = x.clone()
    x2[..., 4:8] += 1.0  # touch only head 1's slice
    q1, _, _ = mha.project(x2)
    changed = [not torch.allclose(q0[:, h], q1[:, h]) for h in range(4)]
    assert changed == [False, True, False, False]


def test_input_slices():
    assert input_slices(8, 2, "narrow").tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    r = input_slices(64, 8, "random", seed=0)
    assert r.shape == (8, 8)
    assert all(len(set(row.tolist())) == 8 for row in r)  # no dim twice within a head
    assert len(set(r.flatten().tolist())) < 64  # heads overlap, so some dims are unread


def test_attention_function_with_mask():
    q = k = v = torch.randn(1, 1, 3, 4)
    mask = torch.tensor([0.0, 0.0, torch.finfo(torch.float32).min])
    out, p = attention(q, k, v, mask)
    assert torch.all(p[..., 2] == 0)
    torch.testing.assert_close(out, p @ v)
