"""Multi-head self-attention, written out step by step.

Letters used in every shape comment:
B batch, T tokens, D d_model, H heads, K d_k = D / H (the size of one head).
"""

import math
from functools import lru_cache

import torch
import torch.nn as nn

MODES = ("wide", "narrow", "random")


def attention(q, k, v, mask=None):
    """Scaled dot-product attention. q, k, v: (B, H, T, K); mask: additive, to (B, H, T, T).

    Returns (output (B, H, T, K), probs (B, H, T, T)).
    """
    scores = (q / math.sqrt(q.size(-1))) @ k.transpose(-2, -1)  # (B, H, T, T)
    if mask is not None:
        scores = scores + mask
    probs = scores.softmax(dim=-1)  # (B, H, T, T)
    return probs @ v, probs


def additive_mask(attention_mask, dtype=torch.float32):
    """(B, T) of 1 (token) / 0 (padding) -> additive mask (B, 1, 1, T): 0 or a huge negative."""
    if attention_mask is None:
        return None
    keep = attention_mask[:, None, None, :].to(dtype)  # (B, 1, 1, T)
    return (1.0 - keep) * torch.finfo(dtype).min


def causal_mask(T: int, dtype, device):
    """Additive (T, T): 0 where j <= i, the dtype's lowest value above the diagonal (a decoder's
    token never sees a later one). Up to 1024 tokens built once per (T, dtype, device) and
    never written to; a longer one (a decoder's context runs to thousands: 268 MB at 8192) is
    built for its forward alone."""
    return _causal_mask(T, dtype, device) if T <= 1024 else _causal(T, dtype, device)


@lru_cache(maxsize=8)
def _causal_mask(T: int, dtype, device):
    with torch.inference_mode(False), torch.no_grad():
        return _causal(T, dtype, device)


def _causal(T: int, dtype, device):
    pos = torch.arange(T, device=device)
    return (pos[None, :] > pos[:, None]).to(dtype) * torch.finfo(dtype).min


def split_heads(x, n_heads):
    B, T, D = x.shape
    return x.view(B, T, n_heads, D // n_heads).transpose(1, 2)  # (B, H, T, K)


def merge_heads(x):
    B, H, T, K = x.shape
    return x.transpose(1, 2).reshape(B, T, H * K)  # (B, T, D)


def input_slices(d_model, n_heads, mode, seed=0):
    """Which input dimensions each head reads in the narrow modes: (H, K) of indices.

    narrow: head h reads the h-th contiguous chunk, so the heads partition the input.
    random: head h reads its own random K dimensions; different heads may overlap.
    """
    K = d_model // n_heads
    if mode == "narrow":
        return torch.arange(d_model).view(n_heads, K)  # (H, K)
    g = torch.Generator().manual_seed(seed)
    return torch.stack([torch.randperm(d_model, generator=g)[:K].sort().values
                        for _ in range(n_heads)])  # (H, K)


class MultiHeadSelfAttention(nn.Module):
    """Self-attention with H heads of size K = D / H.

    mode="wide" (BERT, the standard): every head sees the whole D-dim input vector and projects
        it to K dims. Q/K/V are each one (D -> D) Linear whose output is cut into H heads.
    mode="narrow": the input vector is cut into H slices of K dims; head h projects only its own
        slice with its own (K -> K) matrices. Fewer parameters, and no head sees everything.
    mode="random": like narrow, but each head reads its own random K input dims (may overlap).
    The output projection (D -> D) mixes the concatenated heads in every mode.
    causal=True (decoders): token i attends to keys j <= i only.
    """

    def __init__(self, d_model, n_heads, mode="wide", bias=True, slice_seed=0, causal=False):
        super().__init__()
        self.causal = causal
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.d_model, self.n_heads, self.mode = d_model, n_heads, mode
        K = d_model // n_heads
        if mode == "wide":
            self.query = nn.Linear(d_model, d_model, bias=bias)
            self.key = nn.Linear(d_model, d_model, bias=bias)
            self.value = nn.Linear(d_model, d_model, bias=bias)
        else:
            self.register_buffer("slices", input_slices(d_model, n_heads, mode, slice_seed),
                                 persistent=False)
            # per-head (K -> K) projections, stored (H, out, in) like nn.Linear's (out, in)
            self.w_qkv = nn.Parameter(torch.randn(3, n_heads, K, K) / math.sqrt(K))
            self.b_qkv = nn.Parameter(torch.zeros(3, n_heads, K)) if bias else None
        self.out = nn.Linear(d_model, d_model, bias=bias)

    def project(self, x):
        """x (B, T, D) -> q, k, v, each (B, H, T, K)."""
        if self.mode == "wide":
            return tuple(split_heads(lin(x), self.n_heads)
                         for lin in (self.query, self.key, self.value))
        xs = x[..., self.slices]  # (B, T, H, K): each head's own input slice
        qkv = torch.einsum("bthi,shoi->sbhto", xs, self.w_qkv)  # (3, B, H, T, K)
        if self.b_qkv is not None:
            qkv = qkv + self.b_qkv[:, None, :, None, :]
        return qkv[0], qkv[1], qkv[2]

    def scores(self, q, k, tap=None):
        """Each head's scaled scores before the mask: q, k (B, H, T, K) -> (B, H, T, T).
        Families with position terms (DeBERTa) add them here (and tap each term)."""
        return (q / math.sqrt(q.size(-1))) @ k.transpose(-2, -1)  # (B, H, T, T)

    @staticmethod
    def padding_mask(attention_mask, dtype=torch.float32):
        """The encoder's additive mask from (B, T) of 1/0: (B, 1, 1, T) on the keys."""
        return additive_mask(attention_mask, dtype)

    def full_mask(self, attention_mask, x):
        """The additive mask this layer applies: the caller's (B, 1, 1|T, T) or (B, T) of 1/0,
        in a decoder also the causal triangle, and in a local layer (ModernBERT) also its band;
        always 4-D. None when nothing is masked."""
        mask = attention_mask
        if mask is not None and mask.dim() == 2:
            mask = additive_mask(mask, x.dtype)  # (B, 1, 1, T)
        if self.causal:
            tri = causal_mask(x.size(1), x.dtype, x.device)[None, None]  # (1, 1, T, T)
            low = torch.finfo(x.dtype).min
            mask = tri if mask is None else (mask + tri).clamp_min(low)  # (B | 1, 1, T, T)
        return mask

    def projections(self) -> dict:
        """The four projections as plain (weight (out, in), bias (out,)) pairs, a missing bias
        as zeros: {"query", "key", "value", "out"} (wide mode only). A plain head of width D
        can start from them (mha_core.one_head)."""
        def pair(lin):
            b = lin.bias if lin.bias is not None else lin.weight.new_zeros(lin.weight.size(0))
            return lin.weight, b
        return {name: pair(getattr(self, name)) for name in ("query", "key", "value", "out")}

    def head_outputs(self, z):
        """Each head's share of the output projection: z (B, H, T, K) -> (B, H, T, D),
        z_h W_O,h without b_O; their sum plus b_O is the layer's attention output."""
        H, K = z.size(1), z.size(-1)
        w_o = self.out.weight.view(-1, H, K)  # (D, H, K): column block h is W_O,h transposed
        return torch.einsum("bhtk,dhk->bhtd", z, w_o)  # (B, H, T, D)

    def forward(self, x, attention_mask=None, head_mask=None, return_qkv=False, tap=None):
        """x: (B, T, D). attention_mask: (B, T) of 1/0 or an additive (B, 1, 1, T).
        head_mask: (H,) or (B, H) of 0/1, for this call only; 0 zeroes that head's weights and
        so its context vector. Nothing is stored on self. tap: the run's hook points
        (mha_core.hooks), or None.

        Returns (output (B, T, D), probs (B, H, T, T)) and, if return_qkv, also (q, k, v).
        """
        q, k, v = self.project(x)  # (B, H, T, K) each
        mask = self.full_mask(attention_mask, x)
        if tap is not None:
            if mask is not None and tap.wants("mask"):
                mask = mask.clone()  # the band table and the padding mask are shared: no hook
                # or caller may write into them
            q, k, v, mask = tap("q", q), tap("k", k), tap("v", v), tap("mask", mask)
        scores = self.scores(q, k, tap)  # (B, H, T, T)
        if tap is not None:
            scores = tap("scores", scores)
            if tap.wants("single_head"):
                tap("single_head", summed_head(scores, mask))
        if mask is not None:  # in place when nothing else holds the scores: one (B, H, T, T)
            scores = scores.add_(mask) if tap is None else scores + mask  # buffer fewer
        probs = scores.softmax(dim=-1)  # (B, H, T, T)
        if head_mask is not None:
            hm = head_mask.to(probs.device, probs.dtype)
            hm = hm.view(1, -1, 1, 1) if hm.dim() == 1 else hm.view(hm.size(0), -1, 1, 1)
            probs = probs * hm  # (B, H, T, T): a switched-off head contributes nothing
        if tap is not None:
            probs = tap("weights", probs)
        z = probs @ v  # (B, H, T, K)
        if tap is not None:
            z = tap("z", z)
            if tap.wants("head_out"):
                shares = tap("head_out", self.head_outputs(z))  # (B, H, T, D)
                if tap.hooked("head_out"):  # a hook may have changed them: the output is their sum
                    y = shares.sum(1) if self.out.bias is None else shares.sum(1) + self.out.bias
                    return self._returned(tap("attn_out", y), probs, (q, k, v), return_qkv)
        y = self.out(merge_heads(z))  # (B, T, D)
        if tap is not None:
            y = tap("attn_out", y)
        return self._returned(y, probs, (q, k, v), return_qkv)

    @staticmethod
    def _returned(y, probs, qkv, return_qkv):
        return (y, probs, qkv) if return_qkv else (y, probs)

    def single_head(self, x, attention_mask=None):
        """The same projections read as ONE head of width D:
        softmax((x W_Q + b_Q)(x W_K + b_K)^T / sqrt(D) + mask), returned as (B, T, T).

        Its scores are the sum of the heads' unscaled scores, since Q K^T = sum_h Q_h K_h^T
        (with position terms, DeBERTa's and ModernBERT's rotations included, the same holds:
        the summed head is the heads' scores summed, scaled by 1 / sqrt(H) more, one softmax).
        The encoder's forward gives it as the hook point "single_head" (mha_core.hooks).
        """
        q, k, _ = self.project(x)  # (B, H, T, K)
        return summed_head(self.scores(q, k), self.full_mask(attention_mask, x))


def summed_head(scores, mask=None):
    """The heads' scaled scores (B, H, T, T) read as one head of width D = H K: summed, over
    sqrt(H) more (so over sqrt(D) in all), the mask added, one softmax -> (B, T, T)."""
    s = scores.sum(1) / math.sqrt(scores.size(1))  # (B, T, T)
    if mask is not None:
        s = s + mask[:, 0]  # (B | 1, 1 | T, T)
    return s.softmax(dim=-1)  # (B, T, T)
