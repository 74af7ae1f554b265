"""One layer of a real model, step by step: the shapes of its attention and the neuron view of
one head and one query token (q * k per key, the logits and the softmax).

Shape letters: B batch, T tokens, D d_model, H heads, K d_k = D / H.
"""

import math
from dataclasses import dataclass

import numpy as np
import torch

from .attention import MultiHeadSelfAttention, attention, merge_heads


@dataclass(frozen=True)
class RealSteps:
    shapes: tuple  # (stage, shape tuple, what it is)
    head: int
    query: int
    q: np.ndarray  # (K,) the chosen head's query vector for the chosen token
    k: np.ndarray  # (T, K) the chosen head's key vectors
    products: np.ndarray  # (T, K) q * k elementwise
    logits: np.ndarray  # (T,) q . k / sqrt(K)
    probs: np.ndarray  # (T,) softmax of the logits
    module_probs: np.ndarray  # (T,) the module's own weights for this head and token


def real_steps(attn: MultiHeadSelfAttention, x: torch.Tensor, head: int, query: int):
    """The shapes of one layer's attention on x (T, D), and the neuron view of one head and
    query token. Reads the (shared) module only; never changes it."""
    T, D = x.shape
    H = attn.n_heads
    K = D // H
    if not 0 <= head < H or not 0 <= query < T:
        raise ValueError(f"head must be in 0..{H - 1} and query in 0..{T - 1}")
    with torch.inference_mode():
        xb = x[None]  # (B, T, D) with B = 1
        q, k, v = attn.project(xb)  # (B, H, T, K) each
        flat = merge_heads(q)  # (B, T, D): the projection before the split
        scores = q @ k.transpose(-2, -1) / math.sqrt(K)  # (B, H, T, T)
        ctx, probs = attention(q, k, v)  # (B, H, T, K), (B, H, T, T)
        merged = merge_heads(ctx)  # (B, T, D)
        out = attn.out(merged)  # (B, T, D)
        _, module_probs = attn(xb)  # (B, H, T, T)
        qv, kv = q[0, head, query], k[0, head]  # (K,), (T, K)
        products = qv[None] * kv  # (T, K)
        logits = products.sum(-1) / math.sqrt(K)  # (T,)
    B = 1
    shapes = (
        ("input x", (B, T, D), "B sequences × T tokens × d_model"),
        ("after the projections x W_Q (also K, V)", tuple(flat.shape), "still d_model wide"),
        ("after the split into heads", tuple(q.shape), "(B, H, T, d_k): view + transpose"),
        ("scores Q Kᵀ / √d_k", tuple(scores.shape), "(B, H, T, T): one T × T map per head"),
        ("softmax × V", tuple(ctx.shape), "(B, H, T, d_k)"),
        ("after the merge", tuple(merged.shape), "(B, T, H·d_k) = (B, T, d_model)"),
        ("after W_O", tuple(out.shape), "(B, T, d_model)"),
    )
    return RealSteps(shapes, head, query, qv.numpy().copy(), kv.numpy().copy(),
                     products.numpy().copy(), logits.numpy().copy(),
                     logits.softmax(-1).numpy().copy(),
                     module_probs[0, head, query].numpy().copy())
