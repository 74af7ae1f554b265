"""DeBERTa's disentangled attention (He et al. 2021), as DeBERTa-v3 runs it.

No position embeddings are added to the tokens. Instead each head's score of query i for key j
adds two position terms to the content term, all three divided by sqrt(3 K):

    c2c = q_i . k_j          c2p = q_i . pk[bucket(i - j)]       p2c = k_j . pq[bucket(j - i)]

where pk = key(LN(R)) and pq = query(LN(R)) are the layer's own key and query projections of
the shared relative-position embeddings R (2S rows: distances -S..S-1 after bucketing). Distances
are log-bucketed: exact below S/2, log-compressed beyond, clamped at +-S.

Since bucket(j - i) = -bucket(i - j), both terms read the same row of R for the pair (i, j):
row r(i, j) = S + bucket(i - j). So one (T, T) index serves both gathers:
c2p[i, j] = (q pkᵀ)[i, r(i, j)] and p2c[i, j] = (pq kᵀ)[r(i, j), j].

Shape letters: B batch, T tokens, D hidden size, H heads, K head size, S position buckets,
N the rows of R that T tokens use (at most min(2S, 2T - 1)).
"""

import math
from functools import lru_cache

import torch
import torch.nn as nn

from .attention import MultiHeadSelfAttention, split_heads
from .config import EncoderConfig


def log_buckets(rel: torch.Tensor, buckets: int, max_position: int) -> torch.Tensor:
    """Relative distances (any shape, long) -> buckets: exact for |d| <= S/2, then log-spaced up
    to max_position (transformers' make_log_bucket_position)."""
    sign, mid = torch.sign(rel), buckets // 2
    near = (rel < mid) & (rel > -mid)
    far = torch.where(near, torch.tensor(mid - 1).type_as(rel), rel.abs())
    log_pos = torch.ceil(torch.log(far / mid) / math.log((max_position - 1) / mid)
                         * (mid - 1)) + mid
    return torch.where(far <= mid, rel.type_as(log_pos), log_pos * sign).long()


@lru_cache(maxsize=8)
def relative_rows(T: int, span: int, buckets: int, max_position: int, device=None):
    """(rows (T, T) long, lo, N): the row of R that the pair (i, j) reads is
    r(i, j) = S + bucket(i - j), clamped to R's 2S rows; T tokens use rows lo..lo + N - 1 only,
    and rows[i, j] = r(i, j) - lo. Built once per (T, config, device), on the CPU (lo and N are
    read from it) and then moved to the device; cached like mha_core.rotary's tables: an
    ordinary tensor made outside inference mode, never written to, so any forward in any thread
    may read it."""
    with torch.inference_mode(False), torch.no_grad():
        pos = torch.arange(T)
        rel = pos[:, None] - pos[None, :]  # (T, T): i - j
        if buckets > 0:
            rel = log_buckets(rel, buckets, max_position)
        rows = (rel + span).clamp(0, 2 * span - 1)  # (T, T)
        lo, hi = int(rows.min()), int(rows.max())
        return (rows - lo).to(device), lo, hi - lo + 1


class RelativePositions(nn.Module):
    """The encoder's shared relative-position embeddings R (2S, D) and their LayerNorm."""

    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.cfg = cfg
        self.span = cfg.position_buckets or cfg.max_relative_positions  # S
        self.embeddings = nn.Embedding(2 * self.span, cfg.hidden_size)
        self.norm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)

    def rows(self, T: int, device=None):
        """(rows (T, T) into the rows T tokens use, LN(R) of those rows only (N, D)): the
        LayerNorm is per row, so normalising the used rows alone gives the same numbers."""
        rows, lo, n = relative_rows(T, self.span, self.cfg.position_buckets,
                                    self.cfg.max_relative_positions, device)
        return rows, self.norm(self.embeddings.weight[lo:lo + n])  # (T, T), (N, D)


class DisentangledAttention(MultiHeadSelfAttention):
    def __init__(self, cfg: EncoderConfig, i: int = 0):
        super().__init__(cfg.hidden_size, cfg.num_attention_heads)
        self.terms = tuple(cfg.pos_att_type)
        self.__dict__["positions"] = None  # the encoder's, shared: not a submodule of each layer

    @staticmethod
    def padding_mask(attention_mask, dtype=torch.float32):
        """DeBERTa masks query rows too: outer(mask, mask) -> additive (B, 1, T, T)."""
        keep = attention_mask[:, None, :, None] * attention_mask[:, None, None, :]
        return (1.0 - keep.to(dtype)) * torch.finfo(dtype).min  # (B, 1, T, T)

    def use_positions(self, positions: RelativePositions):
        self.__dict__["positions"] = positions

    def scores(self, q, k, tap=None):
        """c2c + c2p + p2c, each over sqrt((1 + n_terms) K): (B, H, T, T). Divided and summed in
        transformers' order (c2c + (c2p + p2c)), so the maps are bit-for-bit its maps. Without
        a tap the (T, T) terms are divided and summed in place; with one, each term is a hook
        point of its own ("score_c2c", "score_c2p", "score_p2c") and none is written over."""
        B, H, T, K = q.shape
        scale = math.sqrt(K * (1 + len(self.terms)))
        scores = q @ (k.transpose(-2, -1) / scale)  # (B, H, T, T): content to content
        rows, R = self.positions.rows(T, q.device)  # (T, T), (N, D)
        rows = rows.expand(B, H, T, T)  # a view: the same rows for every head
        terms = []
        if "c2p" in self.terms:
            pk = split_heads(self.key(R)[None], H)  # (1, H, N, K): one projection per layer
            c2p = q @ pk.transpose(-2, -1)  # (B, H, T, N): query i against each distance row
            terms.append(("score_c2p", c2p.gather(-1, rows).div_(scale)))  # [i, j] = c2p[i, r]
        if "p2c" in self.terms:
            pq = split_heads(self.query(R)[None], H)  # (1, H, N, K)
            p2c = pq @ k.transpose(-2, -1)  # (B, H, N, T): each distance row against key j
            terms.append(("score_p2c", p2c.gather(-2, rows).div_(scale)))  # [i, j] = p2c[r, j]
        if tap is None or not any(tap.wants(n) for n in ("score_c2c", "score_c2p", "score_p2c")):
            pos = None  # nothing reads the terms: divided and summed in place
            for _, term in terms:
                pos = term if pos is None else pos.add_(term)
            return scores if pos is None else scores.add_(pos)
        scores = tap("score_c2c", scores)
        terms = [tap(name, term) for name, term in terms]
        pos = terms[0] + terms[1] if len(terms) == 2 else (terms[0] if terms else None)
        return scores if pos is None else scores + pos
