"""Attention sinks: heads that put much of every row on one token that carries little meaning,
the first token of a decoder (Xiao et al. 2023, "Efficient Streaming Language Models with
Attention Sinks"; Gu et al. 2024, "When Attention Sink Emerges in Language Models"), [CLS] and
[SEP] in BERT (Clark et al. 2019). By norm (Kobayashi et al. 2020) the same heads often move
little: a sink's value vector is small, so high weight there writes almost nothing.

    share = sink_shares(res.attentions, positions=[0])       # (L, H): mean weight on token 0
    sink_rate(share)                                          # Gu et al.'s: share of heads > 0.3

A head's share is the mean over query rows i >= 1 of sum_{j in positions} a_ij (row 0 is left
out: in a decoder it can only look at token 0). Gu et al.'s sink rate is the share of heads
whose mean attention to the first token exceeds eps = 0.3.

Shape letters: L layers, H heads, T tokens.
"""

import torch

from .norms import result_norm_maps, row_normalised

EPS = 0.3  # Gu et al. 2024's threshold


def sink_shares(maps: torch.Tensor, positions) -> torch.Tensor:
    """maps (L, H, T, T) rows summing to 1 -> (L, H): each head's mean share, over query rows
    1..T-1, of the keys at `positions`. ValueError for a one-token text (no row to average)."""
    if maps.size(-1) < 2:
        raise ValueError("a sink needs at least two tokens: the first token's row can only "
                         "look at itself")
    cols = maps[..., 1:, :][..., list(positions)]  # (L, H, T-1, P)
    return cols.sum(-1).mean(-1)  # (L, H)


def sink_rate(shares: torch.Tensor, eps: float = EPS) -> dict:
    """Gu et al.'s sink rate: {"per_layer": (L,) share of heads over eps, "model": overall}."""
    over = (shares > eps).float()  # (L, H)
    return {"per_layer": over.mean(-1), "model": float(over.mean())}


def sink_positions(res) -> dict:
    """What a sink may be in this text: {"first": [0]} always; for an encoder also its "cls"
    and "sep" positions (special tokens at the start and elsewhere)."""
    special = list(res.special)
    out = {"first": [0]}
    if any(special):
        cls = [i for i, s in enumerate(special) if s and i == 0]
        sep = [i for i, s in enumerate(special) if s and i > 0]
        if cls:
            out["cls"] = cls
        if sep:
            out["sep"] = sep
    return out


def sinks(bert, res, eps: float = EPS) -> dict:
    """Per sink kind ("first", and "cls"/"sep" for encoders): each head's share by weight and
    by norm (the norm maps row-normalised), (L, H) each, and their sink rates."""
    by_norm = row_normalised(result_norm_maps(bert, res))  # (L, H, T, T)
    out = {}
    for kind, positions in sink_positions(res).items():
        w, n = sink_shares(res.attentions, positions), sink_shares(by_norm, positions)
        out[kind] = {"positions": positions, "weight": w, "norm": n,
                     "rate_weight": sink_rate(w, eps), "rate_norm": sink_rate(n, eps)}
    return out
