"""Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers")."""

import torch


def residual_attention(att) -> torch.Tensor:
    """att (L, H, T, T) -> (L, T, T) float64: A_l = 0.5 mean_h(W_l) + 0.5 I, rows renormalised.
    The residual connection as an edge from each token to itself: the graph rollout and
    attention flow (mha_core.flow) both walk."""
    att = torch.as_tensor(att, dtype=torch.float64)
    T = att.size(-1)
    a = 0.5 * att.mean(dim=1) + 0.5 * torch.eye(T, dtype=att.dtype)  # (L, T, T)
    return a / a.sum(dim=-1, keepdim=True)


def rollout(att) -> torch.Tensor:
    """att (L, H, T, T) -> (L, T, T).

    A_l = 0.5 mean_h(W_l) + 0.5 I, rows renormalised; R_1 = A_1, R_l = A_l R_{l-1}.
    Row i of R_l: how much token i at layer l draws from each input token; rows sum to 1."""
    a = residual_attention(att)  # (L, T, T)
    out, r = [], torch.eye(a.size(-1), dtype=a.dtype)
    for layer in a:
        r = layer @ r  # (T, T)
        out.append(r)
    return torch.stack(out).float()  # (L, T, T)
