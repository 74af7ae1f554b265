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
    note: str = ""  # what the family adds to q . k / sqrt(K) (DeBERTa, ModernBERT's band)


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
        note = ""
        if type(attn) is not MultiHeadSelfAttention:  # a family's own score rule
            scores = attn.scores(q, k)  # (B, H, T, T): DeBERTa adds its position terms here
            band = attn.full_mask(None, xb)  # ModernBERT's local layers: (T, T) or None
            if band is not None:
                scores = scores + band
            logits = scores[0, head, query]  # (T,)
            note = family_note(attn)
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
                     module_probs[0, head, query].numpy().copy(), note)


def family_note(attn) -> str:
    """What the logits hold besides the products' sums, in one sentence for the page."""
    if getattr(attn, "terms", None):
        return ("DeBERTa: each logit also holds the two position terms (content to position "
                "and position to content, from the distance i − j), all over √(3·d_k); the "
                "products show the content term only.")
    if getattr(attn, "window", None) is not None:
        return (f"ModernBERT local layer: keys farther than {attn.window} tokens from the query "
                "are masked out (weight 0); q and k are rotated by their positions first.")
    return "ModernBERT: q and k are rotated by their positions before the products."
