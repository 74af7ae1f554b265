"""ModernBERT's attention: one fused Q/K/V projection without biases, rotary positions on the
queries and keys (theta per layer kind), and in local layers a band: token i sees only the keys
with |i - j| <= w. Everything depends on the layer input alone (positions are 0..T-1), so the
module is callable on a layer's attention input like BERT's.

Shape letters: B batch, T tokens, D hidden size, H heads, K head size.
"""

import math
from functools import lru_cache

import torch
import torch.nn as nn

from .attention import MultiHeadSelfAttention, split_heads
from .config import EncoderConfig


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)  # (..., K/2) each
    return torch.cat((-b, a), dim=-1)  # (..., K)


@lru_cache(maxsize=8)
def rotary(T: int, K: int, theta: float, device=None, llama3: tuple = ()):
    """cos, sin (T, K): position t turns dimension pair (d, d + K/2) by t * theta^(-2d/K).
    Built once per (T, K, theta, device), not once per layer: every layer of a kind reads the
    same table. Cached tensors are ordinary ones (made outside inference mode, no grad) and are
    never written to, so any forward, in any thread, may read them. llama3: Llama 3.1's
    schedule (factor, low_freq_factor, high_freq_factor, original context), or ()."""
    with torch.inference_mode(False), torch.no_grad():
        return _rotary(T, K, theta, device, llama3)


def llama3_frequencies(inv_freq, factor, low, high, context):
    """Llama 3.1's RoPE: long wavelengths (> context / low) slowed by `factor`, short ones
    (< context / high) kept, the band between blended smoothly (Meta's reference code)."""
    wavelen = 2 * math.pi / inv_freq
    slowed = torch.where(wavelen > context / low, inv_freq / factor, inv_freq)
    smooth = (context / wavelen - low) / (high - low)
    blended = (1 - smooth) * slowed / factor + smooth * slowed
    medium = (wavelen >= context / high) & (wavelen <= context / low)
    return torch.where(medium, blended, slowed)


def _rotary(T: int, K: int, theta: float, device, llama3=()):
    inv_freq = 1.0 / (theta ** (torch.arange(0, K, 2, dtype=torch.float, device=device) / K))
    if llama3:
        inv_freq = llama3_frequencies(inv_freq, *llama3)
    angles = torch.arange(T, dtype=torch.float, device=device)[:, None] * inv_freq  # (T, K/2)
    angles = torch.cat((angles, angles), dim=-1)  # (T, K)
    return angles.cos(), angles.sin()


class RotaryAttention(MultiHeadSelfAttention):
    def __init__(self, cfg: EncoderConfig, i: int):
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

    def projections(self) -> dict:
        """The fused Wqkv cut into query, key and value (no biases: zeros), and Wo; without
        the rotation, which is no weight."""
        zeros = self.qkv.weight.new_zeros(self.d_model)
        w_q, w_k, w_v = self.qkv.weight.chunk(3, dim=0)  # (D, D) each
        return {"query": (w_q, zeros), "key": (w_k, zeros), "value": (w_v, zeros),
                "out": (self.out.weight, zeros if self.out.bias is None else self.out.bias)}

    def full_mask(self, attention_mask, x):
        mask = super().full_mask(attention_mask, x)
        if self.window is None:
            return mask
        band = band_mask(x.size(1), self.window, x.dtype, x.device)[None, None]  # (1, 1, T, T)
        low = torch.finfo(x.dtype).min
        return band if mask is None else (mask + band).clamp_min(low)  # (B | 1, 1, T, T)


@lru_cache(maxsize=8)
def band_mask(T: int, window: int, dtype, device):
    """Additive (T, T): 0 where |i - j| <= window, the dtype's lowest value elsewhere.
    Cached like rotary(): once per (T, window), shared by every local layer."""
    with torch.inference_mode(False), torch.no_grad():
        pos = torch.arange(T, device=device)
        return ((pos[:, None] - pos[None, :]).abs() > window).to(dtype) * torch.finfo(dtype).min
