"""Ablation through head_mask: importance, the pruning curve, and the shared model under two
threads. The tiny random BERT shows the mechanism; the bundled model checks the real thing."""

import threading

import numpy as np
import pytest
import torch

import mha_core
from mha_core import ablation as ab

TEXT = "i saw the man with a telescope."
# Threads may run matmuls with another number of OpenMP/MKL threads, which reorders float sums
# (about 1e-6 here); switching even one head off moves the outputs by 0.1 or more.
ROUNDING = dict(rtol=1e-5, atol=1e-5)


def attend_change(bert, mask) -> torch.Tensor:
    """Per token, 1 - cosine of the final hidden states, intact against head_mask, through two
    plain Model.attend calls (not the batched path under test). (T,)"""
    intact = bert.attend(TEXT).hidden_states[-1]  # (T, D)
    ablated = bert.attend(TEXT, head_mask=mask).hidden_states[-1]
    return 1 - torch.nn.functional.cosine_similarity(intact, ablated, dim=-1)


def test_no_head_off_changes_nothing(tiny, bundled):
    for bert in (tiny, bundled):
        L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
        change = attend_change(bert, np.ones((L, H)))
        assert change.shape == (len(bert.encode(TEXT).tokens),)
        assert torch.all(change.abs() < 1e-6)


def test_importance_matches_one_head_at_a_time(tiny):
    """The batched ranking equals switching each head off alone through Model.attend."""
    L, H = tiny.config.num_hidden_layers, tiny.config.num_attention_heads
    imp = ab.head_importance(tiny, TEXT)
    assert imp.shape == (L, H)
    intact = tiny.attend(TEXT).hidden_states[-1]  # (T, D)
    for layer in range(L):
        for head in range(H):
            mask = torch.ones(L, H)
            mask[layer, head] = 0
            ablated = tiny.attend(TEXT, head_mask=mask).hidden_states[-1]
            expected = (1 - torch.cosine_similarity(intact, ablated, dim=-1)).mean()
            assert imp[layer, head] == pytest.approx(float(expected), abs=1e-5)
    assert np.all(imp > 1e-4)  # every random head matters a little


def test_head_with_zero_output_columns_has_importance_zero(tiny_dir):
    bert = mha_core.load_model(str(tiny_dir))  # a private copy: the shared fixture stays intact
    K = bert.config.hidden_size // bert.config.num_attention_heads
    with torch.no_grad():
        bert.model.layers[1].attn.out.weight[:, 2 * K:3 * K] = 0  # head 2 of layer 1 writes nothing
    imp = ab.head_importance(bert, TEXT)
    assert imp[1, 2] == pytest.approx(0.0, abs=1e-6)
    others = np.delete(imp.ravel(), 1 * bert.config.num_attention_heads + 2)
    assert np.all(others > 1e-4)


def test_pruning_curve(tiny):
    L, H = tiny.config.num_hidden_layers, tiny.config.num_attention_heads
    imp = ab.head_importance(tiny, TEXT)
    curve = ab.pruning_curve(tiny, TEXT, imp)
    assert curve.shape == (L * H + 1,)
    assert curve[0] == pytest.approx(0.0, abs=1e-6)
    # entry k: the k least important heads off, checked against a direct call
    order = np.argsort(imp.ravel())
    for k in (1, 3, L * H):
        mask = np.ones(L * H)
        mask[order[:k]] = 0
        direct = attend_change(tiny, mask.reshape(L, H)).clamp_min(0).mean()
        assert curve[k] == pytest.approx(float(direct), abs=1e-5)
    assert curve[1] == pytest.approx(imp.min(), abs=1e-5)


def test_importance_chunks_give_the_same_numbers(tiny):
    L, H = tiny.config.num_hidden_layers, tiny.config.num_attention_heads
    enc = tiny.encode(TEXT)
    masks = torch.ones(5, L, H)
    masks[1:, 0, :4] -= torch.eye(4)
    whole = ab.batched_last_hidden(tiny, enc, masks)
    chunked = ab.batched_last_hidden(tiny, enc, masks, max_tokens=len(enc.tokens) * 2)
    torch.testing.assert_close(whole, chunked)
    one_by_one = ab.batched_last_hidden(tiny, enc, masks, max_map_bytes=1)  # by map bytes
    torch.testing.assert_close(whole, one_by_one)
    for m, last in zip(masks, whole):  # against the plain forward that keeps every map
        full = tiny.model(enc.input_ids[None], token_type_ids=enc.token_type_ids[None],
                          head_mask=m)
        torch.testing.assert_close(last, full.last_hidden_state[0])


def test_forward_without_maps_keeps_none_and_changes_nothing(tiny):
    enc = tiny.encode(TEXT)
    ids = enc.input_ids[None]  # (1, T)
    full = tiny.model(ids)
    bare = tiny.model(ids, output_attentions=False)
    assert bare.attentions == () and len(full.attentions) == tiny.config.num_hidden_layers
    for a, b in zip(full.hidden_states, bare.hidden_states):
        assert torch.equal(a, b)


def test_two_threads_one_ablating_one_intact(bundled):
    """The cached model is shared: a thread switching heads off must not leak into another."""
    L, H = bundled.config.num_hidden_layers, bundled.config.num_attention_heads
    reference = bundled.attend(TEXT)
    mask = torch.ones(L, H)
    mask[:, ::2] = 0
    results, errors, start = [], [], threading.Barrier(2)

    def ablate():
        try:
            start.wait()
            for _ in range(15):
                bundled.attend(TEXT, head_mask=mask)
                ab.head_importance(bundled, "a b")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def intact():
        try:
            start.wait()
            for _ in range(30):
                results.append(bundled.attend(TEXT))
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=ablate), threading.Thread(target=intact)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 30
    for r in results:  # a leaked mask moves values by 0.1 or more; threads only by rounding
        torch.testing.assert_close(r.attentions, reference.attentions, **ROUNDING)
        torch.testing.assert_close(r.hidden_states, reference.hidden_states, **ROUNDING)
    assert all(p.requires_grad is False for p in bundled.model.parameters())
