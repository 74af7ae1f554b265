"""ModernBERT's attention: one fused Q/K/V projection without biases, rotary positions on the
queries and keys (theta per layer kind), and in local layers a band: token i sees only the keys
with |i - j| <= w. Everything depends on the layer input alone (positions are 0..T-1), so the
module is callable on a layer's attention input like BERT's.

Shape letters: B batch, T tokens, D hidden size, H heads, K head size.
"""

import torch
import torch.nn as nn

from .attention import MultiHeadSelfAttention, split_heads
from .config import BertConfig


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)  # (..., K/2) each
    return torch.cat((-b, a), dim=-1)  # (..., K)


def rotary(T: int, K: int, theta: float, device=None):
    """cos, sin (T, K): position t turns dimension pair (d, d + K/2) by t * theta^(-2d/K)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, K, 2, dtype=torch.float, device=device) / K))
    angles = torch.arange(T, dtype=torch.float, device=device)[:, None] * inv_freq  # (T, K/2)
    angles = torch.cat((angles, angles), dim=-1)  # (T, K)
    return angles.cos(), angles.sin()


class RotaryAttention(MultiHeadSelfAttention):
    def __init__(self, cfg: BertConfig, i: int):
        super().__init__(cfg.hidden_size, cfg.num_attention_heads, bias=cfg.bias)
        del self.query, self.key, self.value
        D = cfg.hidden_size
        self.qkv = nn.Linear(D, 3 * D, bias=cfg.bias)
        self.local = i in cfg.local_layers
        self.window = cfg.local_window if self.local else None  # half-width w of the band
        self.theta = cfg.local_rope_theta if self.local else cfg.global_rope_theta

    def project(self, x):
        """x (B, T, D) -> q, k (rotated), v, each (B, H, T, K)."""
        B, T, D = x.shape
        q, k, v = (split_heads(t, self.n_heads)
                   for t in self.qkv(x).chunk(3, dim=-1))  # (B, H, T, K) each
        cos, sin = rotary(T, D // self.n_heads, self.theta, x.device)  # (T, K)
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin, v

    def full_mask(self, attention_mask, x):
        mask = super().full_mask(attention_mask, x)
        if self.window is None:
            return mask
        T, low = x.size(1), torch.finfo(x.dtype).min
        pos = torch.arange(T, device=x.device)
        band = ((pos[:, None] - pos[None, :]).abs() > self.window).to(x.dtype) * low  # (T, T)
        return band if mask is None else (mask + band).clamp_min(low)  # (B, 1, T, T)
