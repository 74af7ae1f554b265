"""What attention costs: parameters, FLOPs and map memory of three designs at the same d_model,
checked against real modules.

Shape letters: B batch, T tokens, D d_model, H heads, K d_k (the size of one head), W = H K.
"""

import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn

from ..attention import MultiHeadSelfAttention, attention, input_slices, merge_heads, split_heads

# Three designs at the same d_model D, for a batch of B sequences of T tokens. FLOPs count a
# multiply-add as 2, as torch.utils.flop_counter does; softmax, scaling and biases are left out
# (they are O(B H T^2) and O(B T D), small next to the matmuls).
#   one    1 head of size D                 Q, K, V: D -> D      output: D -> D
#   split  H heads of size D/H (standard)   Q, K, V: D -> D      output: D -> D
#   full   H heads of size D each           Q, K, V: D -> H D    output: H D -> D
# Vaswani et al. 2017 (section 3.2.2): "Due to the reduced dimension of each head, the total
# computational cost is similar to that of single-head attention with full dimensionality."

DESIGNS = {
    "one": "1 head of d_model",
    "split": "h heads of d_model/h",
    "full": "h heads of d_model each",
}


@dataclass(frozen=True)
class Cost:
    design: str
    heads: int
    d_head: int
    params: int  # weights and biases of Q, K, V and the output projection
    proj_flops: int  # the four projections
    attn_flops: int  # Q K^T and probs @ V
    map_bytes: int  # the float32 attention maps, B * H * T * T * 4

    @property
    def flops(self) -> int:
        return self.proj_flops + self.attn_flops


def attention_params(d_model: int, n_heads: int, d_head: int, mode: str = "wide") -> int:
    """Weights and biases of Q, K, V and the output projection: the one parameter count.
    wide: each head projects all D inputs to its K dims; narrow/random: each head projects only
    its own K input dims. The output projection maps the H K concatenated dims back to D."""
    D, H, K = d_model, n_heads, d_head
    reads = D if mode == "wide" else K
    return 3 * H * (reads * K + K) + (H * K * D + D)


def attention_cost(design: str, d_model: int, n_heads: int, T: int, B: int = 1) -> Cost:
    D, h = d_model, n_heads
    if design == "one":
        H, K = 1, D
    elif design == "split":
        if D % h:
            raise ValueError(f"d_model ({D}) must be divisible by h ({h})")
        H, K = h, D // h
    elif design == "full":
        H, K = h, D
    else:
        raise ValueError(f"design must be one of {list(DESIGNS)}, got {design!r}")
    W = H * K  # width of Q, K, V: D for one and split, h D for full
    proj_flops = 2 * B * T * D * W * 4  # three in-projections and one out-projection
    attn_flops = 2 * 2 * B * H * T * T * K  # scores (T x K by K x T) and probs @ V, per head
    return Cost(design, H, K, attention_params(D, H, K), proj_flops, attn_flops,
                B * H * T * T * 4)


def slice_cost(mode: str, d_model: int, n_heads: int, T: int, B: int = 1) -> Cost:
    """The standard h heads of d_model/h in the three input modes of MultiHeadSelfAttention.
    narrow/random: each head projects its own K input dims with (K x K) matrices."""
    if mode == "wide":
        return attention_cost("split", d_model, n_heads, T, B)
    D, H = d_model, n_heads
    K = D // H
    proj_flops = 2 * B * T * (3 * H * K * K + D * D)
    return Cost(mode, H, K, attention_params(D, H, K, mode), proj_flops,
                2 * 2 * B * H * T * T * K, B * H * T * T * 4)


class FullWidthHeads(nn.Module):
    """H heads that are each as wide as the model (K = D): the "8 heads of 512" design."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        W = d_model * n_heads
        self.query, self.key, self.value = (nn.Linear(d_model, W) for _ in range(3))
        self.out = nn.Linear(W, d_model)

    def forward(self, x):
        q, k, v = (split_heads(lin(x), self.n_heads)
                   for lin in (self.query, self.key, self.value))  # (B, H, T, D) each
        ctx, probs = attention(q, k, v)  # (B, H, T, D), (B, H, T, T)
        return self.out(merge_heads(ctx)), probs  # (B, T, D)


def cost_module(design: str, d_model: int, n_heads: int) -> nn.Module:
    """The real module each design describes."""
    if design == "one":
        return MultiHeadSelfAttention(d_model, 1)
    if design == "split":
        return MultiHeadSelfAttention(d_model, n_heads)
    if design == "full":
        return FullWidthHeads(d_model, n_heads)
    raise ValueError(f"design must be one of {list(DESIGNS)}, got {design!r}")


def module_params(design: str, d_model: int, n_heads: int) -> int:
    """sum(p.numel()) of the real module of a design, built on the meta device: shapes only,
    no memory (the "full" design at d_model 1024, h 16 would otherwise allocate 268 MB)."""
    with torch.device("meta"):
        return sum(p.numel() for p in cost_module(design, d_model, n_heads).parameters())


def slice_params(mode: str, d_model: int, n_heads: int) -> int:
    """sum(p.numel()) of a real MultiHeadSelfAttention in one input mode, on the meta device."""
    with torch.device("meta"):
        return sum(p.numel() for p in MultiHeadSelfAttention(d_model, n_heads, mode).parameters())


def reads(mode: str, d_model: int, n_heads: int, seed: int = 0) -> np.ndarray:
    """Which input dimension reaches which head: (H, D) of 0/1. wide: every dimension, every
    head; narrow/random: each head's own slice (attention.input_slices)."""
    if mode == "wide":
        return np.ones((n_heads, d_model))
    out = np.zeros((n_heads, d_model))
    np.put_along_axis(out, input_slices(d_model, n_heads, mode, seed).numpy(), 1.0, axis=1)
    return out  # (H, D)


def time_forward(module: nn.Module, T: int, B: int = 1, repeats: int = 5) -> float:
    """Median seconds of one forward pass on random input (B, T, D), after one warm-up."""
    D = module.out.out_features
    x = torch.randn(B, T, D, generator=torch.Generator().manual_seed(0))  # (B, T, D)
    times = []
    with torch.inference_mode():
        module(x)
        for _ in range(repeats):
            t0 = time.perf_counter()
            module(x)
            times.append(time.perf_counter() - t0)
    return float(np.median(times))

