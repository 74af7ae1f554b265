"""Fitting attention layers of h heads to a real layer's output: (c) the best-fit single head
(h = 1, one head of full width D) and (d) h heads of width D/h. Every fitted layer is a plain
MultiHeadSelfAttention(D, h): scaled dot-product attention with W_Q, W_K, W_V, W_O of D x D and
their biases, so every h has the same parameter count (4 D² + 4 D); for h = 1 the value and
output projections make the one head's value-output map.

What "a fitted single head" means off BERT: the fitted head is always this plain head. It reads
the layer's true input X and sees the layer's own mask (padding, and ModernBERT's band in a
local layer), and is fitted to the layer's true output Y, which DeBERTa computed with its
relative-position terms and ModernBERT with rotary positions; the fitted head has neither. Its
R² therefore says how much of the family's layer one plain head can reproduce
(docs/one-head.md). The summed head (a), by contrast, is the family's own attention read as one
head.

Start rules: "layer" copies the layer's own four projections (ModernBERT's fused Wqkv cut in
three, missing biases as zeros), read as h heads (h = 1: a plain head with the summed head's
projections; h = H: the layer itself for BERT); "fresh" is a seeded random init.
Optimiser: Adam (lr, steps, full batch over the fit tokens), loss = the fit part's 1 - R².
Everything is made on the device of the layer's weights.

Shape letters: B sentences, T tokens, D hidden size.
"""

from dataclasses import dataclass

import torch

from ..attention import MultiHeadSelfAttention
from .measure import r2

FITTED = ("a plain scaled dot-product attention layer (no position terms, no rotary), reading "
          "the layer's true input with its own mask, fitted to its true output")


def fitted_meaning(config) -> str:
    """What "the best-fit single head" means on this family, in one sentence for the page and
    the command's JSON."""
    if config.attention == "disentangled":
        return ("On DeBERTa the best-fit single head is a plain dot-product head without the "
                "relative-position terms, fitted to the layer's true output (which has them); "
                "the summed head is DeBERTa's own attention, position terms included, read as "
                "one head.")
    if config.attention == "rotary":
        return ("On ModernBERT the best-fit single head is a plain dot-product head without "
                "rotary positions (a local layer's band kept as its mask), fitted to the "
                "layer's true output; the summed head is ModernBERT's own rotated attention "
                "read as one head.")
    return ("The best-fit single head is one plain dot-product head of full width, fitted to "
            "the layer's true output; the summed head is the layer's own weights read as one "
            "head.")


@dataclass(frozen=True)
class FitConfig:
    steps: int = 40
    lr: float = 1e-3
    eval_every: int = 10  # held-out R² recorded every this many steps (the convergence check)


def start_layer(attn, h: int, start: str = "layer", seed: int = 0) -> MultiHeadSelfAttention:
    """A fresh plain MultiHeadSelfAttention(D, h) on attn's device, started from the layer's
    projections (attn.projections()) or at random (seeded)."""
    device = attn.out.weight.device
    if start not in ("layer", "fresh"):
        raise ValueError(f"start must be 'layer' or 'fresh', got {start!r}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        fitted = MultiHeadSelfAttention(attn.d_model, h)  # its init is drawn on the CPU
    fitted = fitted.to(device)
    if start == "layer":
        with torch.no_grad():
            for name, (w, b) in attn.projections().items():
                lin = getattr(fitted, name)
                lin.weight.copy_(w)
                lin.bias.copy_(b)
    return fitted.requires_grad_(True)


def fit_layer(fitted, fit, held, cfg: FitConfig, progress=None):
    """Train `fitted` so that fitted(X) ≈ Y on the fit part. fit and held are (X, Y, keep, mask)
    with X, Y (B, T, D), keep (B, T), mask additive (as the layer's own). Returns the held-out
    R² curve as [(step, R²), ...] from step 0 to cfg.steps. `progress`: called with 1 after
    every step."""
    x, y, keep, mask = fit
    w = keep.to(y.dtype)[..., None]  # (B, T, 1)
    mean = (y * w).sum((0, 1)) / w.sum()  # (D,)
    total = (((y - mean) ** 2) * w).sum()  # the fit part's variance (a constant)
    opt = torch.optim.Adam(fitted.parameters(), lr=cfg.lr)
    curve = [(0, held_r2(fitted, held))]
    for step in range(1, cfg.steps + 1):
        y_hat, _ = fitted(x, mask)  # (B, T, D)
        loss = (((y_hat - y) ** 2) * w).sum() / total  # 1 - R² on the fit tokens
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % cfg.eval_every == 0 or step == cfg.steps:
            curve.append((step, held_r2(fitted, held)))
        if progress is not None:
            progress(1)
    return curve


@torch.no_grad()
def held_r2(fitted, part) -> float:
    x, y, keep, mask = part
    return r2(y, fitted(x, mask)[0], keep)


def as_replacement(fitted):
    """The fitted layer as run_replaced's callable (x, mask) -> (B, T, D)."""
    return lambda x, mask: fitted(x, mask)[0]
