"""Bert.activations (q, k, v, per-head outputs) against transformers' own BertModel: its
projections' outputs and its attention output, captured with forward hooks."""

import copy

import pytest
import torch

from testkit.models import hf_reference

TEXT = "I saw the man with a telescope."


@pytest.fixture(scope="module", params=["bundled", "tiny"])
def pair(request):
    bert = request.getfixturevalue(request.param)
    return bert, hf_reference(bert.path)


def without_head(hf, layer, head):
    """transformers 5 has no head_mask: zero the head's columns of the attention output
    projection in a copy, which equals zeroing its context vector (tests/model/test_parity.py)."""
    ref = copy.deepcopy(hf)
    K = ref.config.hidden_size // ref.config.num_attention_heads
    with torch.no_grad():
        ref.encoder.layer[layer].attention.output.dense.weight[:, head * K:(head + 1) * K] = 0
    return ref


def hf_captured(hf, ids, types):
    """transformers' query/key/value outputs (L, T, D), its context before the output
    projection (L, T, D) and the projection's output with b_O (L, T, D), by forward hooks."""
    seen = {"q": [], "k": [], "v": [], "ctx": [], "out": []}
    hooks = []
    for layer in hf.encoder.layer:
        self_attn, dense = layer.attention.self, layer.attention.output.dense
        for name, mod in (("q", self_attn.query), ("k", self_attn.key), ("v", self_attn.value)):
            hooks.append(mod.register_forward_hook(
                lambda m, i, o, name=name: seen[name].append(o[0])))

        def at_dense(module, inputs, output):  # returns None: the output stays as it is
            seen["ctx"].append(inputs[0][0])
            seen["out"].append(output[0])
        hooks.append(dense.register_forward_hook(at_dense))
    try:
        with torch.no_grad():
            hf(input_ids=ids[None], token_type_ids=types[None])
    finally:
        for h in hooks:
            h.remove()
    return {k: torch.stack(v) for k, v in seen.items()}


def heads_merged(x):
    """(L, H, T, K) -> (L, T, H*K), heads side by side as transformers stores them."""
    L, H, T, K = x.shape
    return x.permute(0, 2, 1, 3).reshape(L, T, H * K)


@pytest.mark.parametrize("off", [None, (1, 2)])
def test_activations_match_transformers(pair, off):
    bert, hf = pair
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    mask = None
    if off is not None:
        mask = torch.ones(L, H)
        mask[off] = 0
    res = bert.attend(TEXT, head_mask=mask)
    acts = bert.activations(res)
    enc = res.encoded
    theirs = hf_captured(hf if off is None else without_head(hf, *off), enc.input_ids,
                         enc.token_type_ids)
    for name in ("q", "k", "v"):
        torch.testing.assert_close(heads_merged(getattr(acts, name)), theirs[name], atol=1e-5,
                                   rtol=0)
    z = heads_merged(acts.z)  # (L, T, D)
    if off is not None:  # ours is 0 for the switched-off head; theirs is only never used
        K = acts.z.size(-1)
        assert z[off[0], :, off[1] * K:(off[1] + 1) * K].abs().max() == 0
        z[off[0], :, off[1] * K:(off[1] + 1) * K] = theirs["ctx"][off[0], :,
                                                                  off[1] * K:(off[1] + 1) * K]
    torch.testing.assert_close(z, theirs["ctx"], atol=1e-5, rtol=0)
    b_o = torch.stack([layer.attention.output.dense.bias for layer in hf.encoder.layer])
    torch.testing.assert_close(acts.head_out.sum(1) + b_o[:, None], theirs["out"], atol=1e-4,
                               rtol=0)
    if off is not None:
        assert acts.head_out[off].abs().max() == 0
    assert acts.hidden_states is res.hidden_states
    assert len(repr(acts)) < 200


def test_activations_of_a_text(bundled):
    acts = bundled.activations("The cat sat.")
    assert tuple(acts.q.shape) == (6, 12, 6, 32) and tuple(acts.head_out.shape) == (6, 12, 6, 384)
