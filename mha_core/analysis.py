"""Numbers worth looking at, computed from attention maps. No Streamlit, no plotting.

Shape letters: L layers, H heads, T tokens. Maps are (..., T, T): row = query, column = key.
"""

import torch


def entropy(att: torch.Tensor) -> torch.Tensor:
    """Mean row entropy in nats: (..., T, T) -> (...). Uniform over T keys gives log T."""
    p = att.clamp_min(0)
    h = -(p * torch.log(p.clamp_min(1e-12))).sum(dim=-1)  # (..., T)
    return h.mean(dim=-1)


def keep_tokens(att: torch.Tensor, keep) -> torch.Tensor:
    """Drop the rows and columns not in `keep` (T bools) and renormalise each row to sum to 1.
    (..., T, T) -> (..., T', T'). A row whose kept weights are all 0 stays 0."""
    idx = torch.as_tensor([i for i, k in enumerate(keep) if k], dtype=torch.long)
    sub = att.index_select(-2, idx).index_select(-1, idx)  # (..., T', T')
    total = sub.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, sub / total.clamp_min(1e-12), sub)
