"""The cost formulas against real modules: parameters against sum(p.numel()), FLOPs against
torch's own FLOP counter, attention-map memory against the maps the module returns."""

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from mha_core import toy
from mha_core.attention import MultiHeadSelfAttention

SIZES = [(4, 2), (16, 4), (64, 8), (96, 12), (48, 1)]


def counted_flops(module, x):
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        out = module(x)
    return counter.get_total_flops(), out


@pytest.mark.parametrize("d, h", SIZES)
@pytest.mark.parametrize("design", list(toy.DESIGNS))
def test_design_cost_matches_the_real_module(design, d, h):
    B, T = 2, 7
    module = toy.cost_module(design, d, h)
    cost = toy.attention_cost(design, d, h, T, B)
    assert cost.params == sum(p.numel() for p in module.parameters())
    assert toy.module_params(design, d, h) == cost.params  # the page's count (meta device)
    flops, (_, probs) = counted_flops(module, torch.randn(B, T, d))
    assert cost.flops == flops
    assert cost.map_bytes == probs.numel() * probs.element_size()
    assert probs.shape == (B, cost.heads, T, T)


@pytest.mark.parametrize("d, h", [(16, 4), (64, 8), (96, 12)])
@pytest.mark.parametrize("mode", ["wide", "narrow", "random"])
def test_slice_cost_matches_the_real_module(mode, d, h):
    B, T = 3, 5
    module = MultiHeadSelfAttention(d, h, mode=mode, slice_seed=1)
    cost = toy.slice_cost(mode, d, h, T, B)
    assert cost.params == sum(p.numel() for p in module.parameters())
    # the textbook counts: 4 D^2 + 4 D wide; 3 D^2 / H + 3 D (per-head Q, K, V) + D^2 + D narrow
    wide, narrow = 4 * d * d + 4 * d, 3 * d * d // h + 3 * d + d * d + d
    assert cost.params == (wide if mode == "wide" else narrow)
    flops, _ = counted_flops(module, torch.randn(B, T, d))
    assert cost.flops == flops
    assert toy.slice_params(mode, d, h) == cost.params  # the page's count (meta device)
    reads = toy.reads(mode, d, h, seed=1)  # (H, D): which dims each head reads
    if mode == "wide":
        assert reads.all()
    else:
        for head in range(h):
            assert set(np.flatnonzero(reads[head])) == set(module.slices[head].tolist())


def test_the_slogan_and_where_it_breaks():
    """8 heads of 64 = 1 head of 512 in params and FLOPs; 8 heads of 512 ~ 8x;
    the attention maps grow with h in both multi-head designs."""
    one, split, full = (toy.attention_cost(k, 512, 8, T=128) for k in toy.DESIGNS)
    assert (split.params, split.flops) == (one.params, one.flops)
    assert split.map_bytes == 8 * one.map_bytes == full.map_bytes
    assert full.flops == 8 * one.flops
    assert 7.9 < full.params / one.params < 8.0  # the output bias is not multiplied


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError):
        toy.attention_cost("split", 10, 3, 4)
    with pytest.raises(ValueError):
        toy.attention_cost("huge", 8, 2, 4)
    with pytest.raises(ValueError):
        toy.cost_module("huge", 8, 2)


def test_time_forward_measures_something():
    t = toy.time_forward(toy.cost_module("split", 32, 4), T=8, repeats=2)
    assert t > 0  # a measurement, not a claim about speed
