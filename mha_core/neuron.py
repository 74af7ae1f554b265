"""One layer of a real model, step by step: the shapes of its attention and the neuron view of
one head and one query token (q * k per key, the logits and the softmax), every value read from
the encoder's forward cache (mha_core.hooks) of the run that made the maps.

Shape letters: B batch, T tokens, D d_model, H heads, K d_k = D / H.
"""

from dataclasses import dataclass

import numpy as np

NAMES = ("attn_in", "q", "k", "v", "scores", "mask", "weights", "z", "attn_out")


@dataclass(frozen=True)
class RealSteps:
    shapes: tuple  # (stage, shape tuple, what it is)
    head: int
    query: int
    q: np.ndarray  # (K,) the chosen head's query vector for the chosen token
    k: np.ndarray  # (T, K) the chosen head's key vectors
    products: np.ndarray  # (T, K) q * k elementwise
    logits: np.ndarray  # (T,) the scores the softmax reads: q . k / sqrt(K) (+ family terms)
    probs: np.ndarray  # (T,) softmax of the logits
    module_probs: np.ndarray  # (T,) the run's own weights for this head and token
    note: str = ""  # what the family adds to q . k / sqrt(K) (DeBERTa, ModernBERT's band)


def real_steps(bert, res, layer: int, head: int, query: int) -> RealSteps:
    """The shapes of run layer `layer`'s attention on an AttentionResult's text, and the neuron
    view of one head and query token, from a run with the result's head mask."""
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    T = len(res.labels)
    if not 0 <= layer < L or not 0 <= head < H or not 0 <= query < T:
        raise ValueError(f"layer must be in 0..{L - 1}, head in 0..{H - 1} and query in "
                         f"0..{T - 1}")
    cache = bert.trace(res, NAMES, layers=[layer])  # the run stops after this layer
    c = {n: cache[n, layer] for n in NAMES}
    q, k = c["q"], c["k"]  # (B, H, T, K) each
    B, _, _, K = q.shape
    D = H * K
    logits = c["scores"][0, head, query]  # (T,)
    mask = c["mask"]
    if mask is not None:  # ModernBERT's band (a padding mask is 0 on one text)
        rows = mask[0, 0] if mask.dim() == 4 else mask  # (1 | T, T)
        logits = logits + rows[query if rows.size(0) > 1 else 0]
    qv, kv = q[0, head, query], k[0, head]  # (K,), (T, K)
    shapes = (
        ("input x", tuple(c["attn_in"].shape), "B sequences × T tokens × d_model"),
        ("after the projections x W_Q (also K, V)", (B, T, D), "still d_model wide"),
        ("after the split into heads", tuple(q.shape), "(B, H, T, d_k): view + transpose"),
        ("scores Q Kᵀ / √d_k", tuple(c["scores"].shape), "(B, H, T, T): one T × T map per head"),
        ("softmax × V", tuple(c["z"].shape), "(B, H, T, d_k)"),
        ("after the merge", (B, T, D), "(B, T, H·d_k) = (B, T, d_model)"),
        ("after W_O", tuple(c["attn_out"].shape), "(B, T, d_model)"),
    )
    host = [t.to("cpu").numpy().copy() for t in (qv, kv, qv[None] * kv, logits,
                                                 logits.softmax(-1),
                                                 c["weights"][0, head, query])]
    return RealSteps(shapes, head, query, *host, note=family_note(bert, layer))


def family_note(bert, layer: int) -> str:
    """What the logits hold besides the products' sums, in one sentence for the page."""
    attn = bert.model.layer(layer).attn
    if getattr(attn, "terms", None):
        return ("DeBERTa: each logit also holds the two position terms (content to position "
                "and position to content, from the distance i − j), all over √(3·d_k); the "
                "products show the content term only.")
    if getattr(attn, "window", None) is not None:
        return (f"ModernBERT local layer: keys farther than {attn.window} tokens from the query "
                "are masked out (weight 0); q and k are rotated by their positions first.")
    if bert.config.attention == "rotary":
        return "ModernBERT: q and k are rotated by their positions before the products."
    return ""
