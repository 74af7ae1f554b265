"""Attention flow (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers", Sec. 3):
the layers' attention as a flow network, and the most that can flow from a token at layer l down
to each input token.

Nodes are (layer, token), layer 0 the input; an edge runs from token i at layer l to token j at
layer l-1 with capacity A_l[i, j], where A_l = 0.5 mean_h(W_l) + 0.5 I, rows renormalised (the
residual connection counted, as rollout does: mha_core.rollout.residual_attention). Where
rollout multiplies the weights along a path, flow takes the path's narrowest edge, and paths
share edge capacity. Each source's flows are normalised to sum to 1 over the input tokens, as
in the authors' code.

Cost: one max-flow per (layer, input token) on an (L+1)·T-node graph, O(L² T⁴) in all, so it
suits short texts only: MAX_TOKENS bounds it. scipy's max-flow takes integer capacities: the
weights are scaled by SCALE (a resolution of 1e-7).

Shape letters: L layers, H heads, T tokens.
"""

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

from .rollout import residual_attention

SCALE = 10**7  # capacities as int32: a node's out-capacity sums to at most SCALE
MAX_TOKENS = 48  # T limit: ~L * T max-flows on graphs of (L+1) * T nodes


def flow_graph(att) -> csr_matrix:
    """The attention graph of att (L, H, T, T): node l*T + i is token i at layer l (0 the
    input); capacities are A_l[i, j] * SCALE, rounded."""
    a = residual_attention(att).numpy()  # (L, T, T)
    L, T, _ = a.shape
    cap = np.rint(a * SCALE).astype(np.int32)  # (L, T, T)
    ll, ii, jj = np.nonzero(cap)
    rows = (ll + 1) * T + ii  # token i at layer l+1 ...
    cols = ll * T + jj  # ... sends to token j at layer l
    n = (L + 1) * T
    return csr_matrix((cap[ll, ii, jj], (rows, cols)), shape=(n, n), dtype=np.int32)


def attention_flow(att, source: int) -> np.ndarray:
    """att (L, H, T, T) -> (L, T): row l, the maximum flow from token `source` at the output of
    layer l+1 to each input token, normalised to sum to 1 (a row with no flow stays 0)."""
    att = np.asarray(att, dtype=np.float64)
    L, T = att.shape[0], att.shape[-1]
    if T > MAX_TOKENS:
        raise ValueError(f"attention flow is limited to {MAX_TOKENS} tokens (it runs one "
                         f"max-flow per layer and token, O(L² T⁴)); this text has {T}")
    if not 0 <= source < T:
        raise ValueError(f"source {source} is not a token position (0..{T - 1})")
    graph = flow_graph(att)
    out = np.zeros((L, T))
    for layer in range(1, L + 1):
        for j in range(T):
            out[layer - 1, j] = maximum_flow(graph, layer * T + source, j).flow_value
        total = out[layer - 1].sum()
        if total > 0:
            out[layer - 1] /= total
    return out  # (L, T)
