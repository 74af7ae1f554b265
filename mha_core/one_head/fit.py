"""Fitting attention layers of h heads to a real layer's output: (c) the best-fit single head
(h = 1, one head of full width D) and (d) h heads of width D/h. Every fitted layer is a
MultiHeadSelfAttention(D, h): W_Q, W_K, W_V, W_O of D x D and their biases, so every h has the
same parameter count (4 D² + 4 D); for h = 1 the value and output projections make the one
head's value-output map.

Start rules: "layer" copies the layer's own four projections, read as h heads (h = 1: the
summed head (a); h = H: the layer itself); "fresh" is a seeded random init.
Optimiser: Adam (lr, steps, full batch over the fit tokens), loss = the fit part's 1 - R².

Shape letters: B sentences, T tokens, D hidden size.
"""

from dataclasses import dataclass

import torch

from ..attention import MultiHeadSelfAttention
from .measure import r2


@dataclass(frozen=True)
class FitConfig:
    steps: int = 40
    lr: float = 1e-3
    eval_every: int = 10  # held-out R² recorded every this many steps (the convergence check)


def start_layer(attn, h: int, start: str = "layer", seed: int = 0) -> MultiHeadSelfAttention:
    """A fresh MultiHeadSelfAttention(D, h) started from the layer's weights or at random."""
    torch.manual_seed(seed)
    fitted = MultiHeadSelfAttention(attn.d_model, h)
    if start == "layer":
        fitted.load_state_dict(attn.state_dict())
    elif start != "fresh":
        raise ValueError(f"start must be 'layer' or 'fresh', got {start!r}")
    return fitted


def fit_layer(fitted, fit, held, cfg: FitConfig, progress=None):
    """Train `fitted` so that fitted(X) ≈ Y on the fit part. fit and held are (X, Y, keep, mask)
    with X, Y (B, T, D), keep (B, T), mask (B, 1, 1, T). Returns the held-out R² curve as
    [(step, R²), ...] from step 0 to cfg.steps. `progress`: called with 1 after every step."""
    x, y, keep, mask = fit
    sel = keep.bool()
    total = ((y[sel] - y[sel].mean(0)) ** 2).sum()  # the fit part's variance (a constant)
    opt = torch.optim.Adam(fitted.parameters(), lr=cfg.lr)
    curve = [(0, held_r2(fitted, held))]
    for step in range(1, cfg.steps + 1):
        y_hat, _ = fitted(x, mask)  # (B, T, D)
        loss = ((y_hat[sel] - y[sel]) ** 2).sum() / total  # 1 - R² on the fit tokens
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
