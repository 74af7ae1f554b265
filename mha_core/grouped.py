"""The decoders' attention (Llama, Qwen2): H query heads and G <= H key/value heads, each key/value
head shared by a group of H / G query heads (grouped-query attention, Ainslie et al. 2023; G = H
is ordinary multi-head attention), queries and keys turned by their positions (RoPE, the same
table as ModernBERT's: mha_core.rotary), and the causal mask (mha_core.attention).

Every head is still a query head with its own map: a shared key/value head is repeated for each
query head of its group, so q, k, v, the maps and the forward cache keep the shape (B, H, T, K)
of every other family, and all analyses read them per query head.

Shape letters: B batch, T tokens, D hidden size, H query heads, G key/value heads, K head size.
"""

import torch.nn as nn

from .attention import MultiHeadSelfAttention, split_heads
from .config import EncoderConfig
from .rotary import rotary, rotate_half


class GroupedAttention(MultiHeadSelfAttention):
    def __init__(self, cfg: EncoderConfig, i: int = 0):
        qkv_bias = cfg.bias if cfg.qkv_bias is None else cfg.qkv_bias
        super().__init__(cfg.hidden_size, cfg.num_attention_heads, bias=cfg.bias,
                         causal=cfg.causal)
        D, K, G = cfg.hidden_size, cfg.head_dim, cfg.kv_heads
        self.kv_heads = G
        self.theta = cfg.rope_theta if cfg.rotary else None
        self.llama3 = tuple(cfg.rope_llama3)
        self.query = nn.Linear(D, D, bias=qkv_bias)
        self.key = nn.Linear(D, G * K, bias=qkv_bias)  # G heads of keys, not H
        self.value = nn.Linear(D, G * K, bias=qkv_bias)

    def project(self, x):
        """x (B, T, D) -> q, k, v (B, H, T, K): q and k turned by RoPE, each key/value head
        repeated for the query heads of its group (head h reads key/value head h // (H / G))."""
        B, T, D = x.shape
        q = split_heads(self.query(x), self.n_heads)  # (B, H, T, K)
        k = split_heads(self.key(x), self.kv_heads)  # (B, G, T, K)
        v = split_heads(self.value(x), self.kv_heads)  # (B, G, T, K)
        if self.theta is not None:
            cos, sin = rotary(T, q.size(-1), self.theta, x.device, self.llama3)  # (T, K)
            q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        group = self.n_heads // self.kv_heads
        if group > 1:
            k = k.repeat_interleave(group, dim=1)  # (B, H, T, K)
            v = v.repeat_interleave(group, dim=1)  # (B, H, T, K)
        return q, k, v

    def projections(self) -> dict:
        """The projections as (weight (out, in), bias (out,)) pairs, each key/value head's rows
        repeated for its query heads (so "key" and "value" are (D, D) like a plain layer's);
        without the rotation, which is no weight."""
        group = self.n_heads // self.kv_heads

        def pair(lin, repeat=1):
            w = lin.weight
            b = lin.bias if lin.bias is not None else w.new_zeros(w.size(0))
            if repeat > 1:
                K = w.size(0) // self.kv_heads
                w = w.view(self.kv_heads, K, -1).repeat_interleave(repeat, 0).flatten(0, 1)
                b = b.view(self.kv_heads, K).repeat_interleave(repeat, 0).flatten()
            return w, b  # (H K, D), (H K,)

        return {"query": pair(self.query), "key": pair(self.key, group),
                "value": pair(self.value, group), "out": pair(self.out)}
