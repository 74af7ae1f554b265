"""DeBERTa's disentangled attention (He et al. 2021), as DeBERTa-v3 runs it.

No position embeddings are added to the tokens. Instead each head's score of query i for key j
adds two position terms to the content term, all three divided by sqrt(3 K):

    c2c = q_i . k_j          c2p = q_i . pk[bucket(i - j)]       p2c = k_j . pq[bucket(j - i)]

where pk = key(LN(R)) and pq = query(LN(R)) are the layer's own key and query projections of
the shared relative-position embeddings R (2S rows: distances -S..S-1 after bucketing). Distances
are log-bucketed: exact below S/2, log-compressed beyond, clamped at +-S.

Shape letters: B batch, T tokens, D hidden size, H heads, K head size, S position buckets.
"""

import math

import torch
import torch.nn as nn

from .attention import MultiHeadSelfAttention, split_heads
from .config import BertConfig


def log_buckets(rel: torch.Tensor, buckets: int, max_position: int) -> torch.Tensor:
    """Relative distances (any shape, long) -> buckets: exact for |d| <= S/2, then log-spaced up
    to max_position (transformers' make_log_bucket_position)."""
    sign, mid = torch.sign(rel), buckets // 2
    near = (rel < mid) & (rel > -mid)
    far = torch.where(near, torch.tensor(mid - 1).type_as(rel), rel.abs())
    log_pos = torch.ceil(torch.log(far / mid) / math.log((max_position - 1) / mid)
                         * (mid - 1)) + mid
    return torch.where(far <= mid, rel.type_as(log_pos), log_pos * sign).long()


class RelativePositions(nn.Module):
    """The encoder's shared relative-position embeddings R (2S, D) and their LayerNorm."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.cfg = cfg
        self.span = cfg.position_buckets or cfg.max_relative_positions  # S
        self.embeddings = nn.Embedding(2 * self.span, cfg.hidden_size)
        self.norm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)

    def table(self):
        return self.norm(self.embeddings.weight)  # (2S, D)

    def distances(self, T: int, device=None):
        """(T, T) bucket of i - j."""
        pos = torch.arange(T, device=device)
        rel = pos[:, None] - pos[None, :]  # (T, T)
        if self.cfg.position_buckets > 0:
            rel = log_buckets(rel, self.cfg.position_buckets, self.cfg.max_relative_positions)
        return rel


class DisentangledAttention(MultiHeadSelfAttention):
    def __init__(self, cfg: BertConfig):
        super().__init__(cfg.hidden_size, cfg.num_attention_heads)
        self.terms = tuple(cfg.pos_att_type)
        self.__dict__["positions"] = None  # the encoder's, shared: not a submodule of each layer

    def use_positions(self, positions: RelativePositions):
        self.__dict__["positions"] = positions

    def scores(self, q, k):
        """c2c + c2p + p2c, each over sqrt((1 + n_terms) K): (B, H, T, T)."""
        T, K = q.size(2), q.size(-1)
        scale = math.sqrt(K * (1 + len(self.terms)))
        scores = q @ (k.transpose(-2, -1) / scale)  # (B, H, T, T): content to content
        pos = self.positions
        S = pos.span
        R = pos.table()[None]  # (1, 2S, D)
        rel = pos.distances(T, q.device)  # (T, T)
        extra = 0
        if "c2p" in self.terms:
            pk = split_heads(self.key(R), self.n_heads)  # (1, H, 2S, K)
            c2p = q @ pk.transpose(-2, -1)  # (B, H, T, 2S)
            at = (rel + S).clamp(0, 2 * S - 1).expand(*c2p.shape[:2], T, T)  # (B, H, T, T)
            extra = extra + c2p.gather(-1, at) / scale
        if "p2c" in self.terms:
            pq = split_heads(self.query(R), self.n_heads)  # (1, H, 2S, K)
            p2c = k @ pq.transpose(-2, -1)  # (B, H, T, 2S): key j against distance rows
            at = (-rel + S).clamp(0, 2 * S - 1).expand(*p2c.shape[:2], T, T)  # (B, H, T, T)
            extra = extra + p2c.gather(-1, at).transpose(-2, -1) / scale
        return scores + extra  # (B, H, T, T)
