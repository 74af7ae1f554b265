"""The Training lab's model: a one-layer attention-only transformer, its seeded init, identical
heads, and each head's own weights as one vector.

Shape letters: B batch, T tokens, D d_model, H heads, K d_k = D / H, M digits, P parameters.
"""

import math

import torch
import torch.nn as nn

from ..attention import MultiHeadSelfAttention, attention, merge_heads
from .task import LabConfig


class LabModel(nn.Module):
    """A one-layer attention-only transformer (as in Elhage et al. 2021, "A Mathematical
    Framework for Transformer Circuits"): x = digit + mark + position embeddings;
    x = x + attn(x); logits = x W_U, two sets of M (PREV and MARKED). No MLP and no LayerNorm,
    so whatever the answer needs from other positions must come through the heads, and the
    readout is linear."""

    def __init__(self, cfg: LabConfig):
        super().__init__()
        D = cfg.d_model
        self.cfg = cfg  # frozen settings, not state
        self.digit = nn.Embedding(cfg.n_digits, D)
        self.mark = nn.Embedding(2, D)
        self.pos = nn.Embedding(cfg.seq_len, D)
        self.attn = MultiHeadSelfAttention(D, cfg.n_heads, mode=cfg.mode,
                                           slice_seed=cfg.slice_seed)
        self.head = nn.Linear(D, 2 * cfg.n_digits)

    def forward(self, digits, marked, dropout_gen=None):
        """digits, marked: (B, T). Returns logits (B, T, 2, M) and attention (B, H, T, T).
        dropout_gen: a torch.Generator; when given (training), attention dropout is applied."""
        T = digits.size(1)
        x = self.digit(digits) + self.mark(marked.long()) + self.pos.weight[:T]  # (B, T, D)
        q, k, v = self.attn.project(x)  # (B, H, T, K) each
        _, probs = attention(q, k, v)  # (B, H, T, T)
        used = probs
        p = self.cfg.attn_dropout
        if dropout_gen is not None and p > 0:
            keep = torch.rand(probs.shape, generator=dropout_gen) >= p  # (B, H, T, T)
            used = probs * keep / (1 - p)  # each head gets its own mask
        x = x + self.attn.out(merge_heads(used @ v))  # (B, T, D)
        B, T, _ = x.shape
        logits = self.head(x).view(B, T, 2, self.cfg.n_digits)  # (B, T, 2, M)
        return logits, probs


def init_weights(model: LabModel, g: torch.Generator):
    """Seeded init through g only: matrices N(0, 1/fan_in), biases 0, embeddings N(0, 1)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith(("digit", "mark", "pos")):
                p.normal_(0, 1, generator=g)
            elif name.endswith("w_qkv"):
                p.normal_(0, 1 / math.sqrt(p.size(-1)), generator=g)
            elif p.dim() >= 2:
                p.normal_(0, 1 / math.sqrt(p.size(1)), generator=g)
            else:
                p.zero_()


def make_heads_identical(attn: MultiHeadSelfAttention):
    """Copy head 0 into every head: the same rows of W_Q, W_K, W_V (and biases) and the same
    columns of W_O. Needs mode='wide'."""
    K = attn.d_model // attn.n_heads
    with torch.no_grad():
        for lin in (attn.query, attn.key, attn.value):
            w = lin.weight.view(attn.n_heads, K, attn.d_model)  # (H, K, D)
            w.copy_(w[:1].expand_as(w).clone())
            if lin.bias is not None:
                b = lin.bias.view(attn.n_heads, K)  # (H, K)
                b.copy_(b[:1].expand_as(b).clone())
        wo = attn.out.weight.view(attn.d_model, attn.n_heads, K)  # (D, H, K)
        wo.copy_(wo[:, :1].expand_as(wo).clone())


def build_model(cfg: LabConfig) -> LabModel:
    model = LabModel(cfg)
    init_weights(model, torch.Generator().manual_seed(cfg.seed))
    if cfg.init == "identical":
        make_heads_identical(model.attn)
    return model


def head_weights(attn: MultiHeadSelfAttention) -> torch.Tensor:
    """Each head's own parameters as one flat vector: (H, P).
    wide: its rows of W_Q, W_K, W_V (with biases) and its columns of W_O.
    narrow/random: its (K x K) matrices (with biases) and its columns of W_O."""
    H, D = attn.n_heads, attn.d_model
    K = D // H
    parts = []
    if attn.mode == "wide":
        for lin in (attn.query, attn.key, attn.value):
            parts.append(lin.weight.view(H, K * D))  # (H, K*D)
            if lin.bias is not None:
                parts.append(lin.bias.view(H, K))  # (H, K)
    else:
        parts.append(attn.w_qkv.transpose(0, 1).reshape(H, 3 * K * K))  # (H, 3*K*K)
        if attn.b_qkv is not None:
            parts.append(attn.b_qkv.transpose(0, 1).reshape(H, 3 * K))  # (H, 3*K)
    parts.append(attn.out.weight.view(D, H, K).transpose(0, 1).reshape(H, D * K))  # (H, D*K)
    return torch.cat(parts, dim=1).detach()  # (H, P)

