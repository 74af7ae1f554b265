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


# --- Explorer


def head_divergence(att: torch.Tensor) -> torch.Tensor:
    """How much the heads of each layer disagree, in nats: (L, H, T, T) -> (L,).

    The generalised Jensen-Shannon divergence of the H heads' rows with equal weights,
    entropy(mean of the heads) - mean(entropy of each head), averaged over query rows. It is 0
    when every head draws the same map and grows as heads look at different keys, whatever
    those keys are; it is at most log H."""
    return entropy(att.mean(dim=1)) - entropy(att).mean(dim=1)


def explorer_view(att: torch.Tensor, res, word_level=False, hide_special=False):
    """The maps as the Explorer shows them: att (..., T, T) of the AttentionResult res.

    word_level: merge subwords into words (Clark et al. 2019: attention to a word is summed over
    its pieces, attention from it averaged, so rows still sum to 1).
    hide_special: drop the [CLS]/[SEP] rows and columns and renormalise each row to sum to 1.
    Returns (maps (..., G, G), labels G, special G)."""
    labels, special = list(res.tokens), list(res.special)
    if word_level:
        labels, groups = res.words()
        att = res.word_level(att)  # (..., G, G)
        special = [all(special[t] for t in members) for members in groups]
    if hide_special and not all(special):
        keep = [not s for s in special]
        att = keep_tokens(att, keep)  # (..., G', G')
        labels = [x for x, k in zip(labels, keep) if k]
        special = [False] * len(labels)
    return att, list(labels), list(special)


def focus_targets(att: torch.Tensor, query: int):
    """Where one query token attends in every head: att (L, H, T, T) -> (top (L, H) key index,
    weight (L, H) on that key, rows (L, H, T) the query's full rows)."""
    rows = att[..., query, :]  # (L, H, T)
    weight, top = rows.max(dim=-1)  # (L, H) each
    return top, weight, rows
