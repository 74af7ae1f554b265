"""What one attention map measures: entropy, distance, and the shares that Clark et al. 2019
and Voita et al. 2019 count. No Streamlit, no plotting.

Shape letters: L layers, H heads, T tokens. Maps are (..., T, T): row = query, column = key.
Metrics are averaged over every query row of a map (special tokens included, as Clark et al.
2019 do); outputs keep the leading dims, e.g. (L, H).
"""

import math
import unicodedata

import numpy as np
import torch

METRICS = {  # name: what it means, for tables and tooltips
    "entropy": "mean row entropy (nats)",
    "entropy_frac": "entropy / log T (1 = uniform)",
    "distance": "mean |query - key| distance in tokens",
    "cls": "share on [CLS]", "sep": "share on [SEP]", "punct": "share on punctuation",
    "first": "share on the first token, over the rows after it (a decoder's sink)",
    "prev": "share on the previous token", "next": "share on the next token",
    "self": "share on itself", "confidence": "mean of the row maximum (Voita et al. 2019)",
}
NAMES = {  # name: a short heading in words, where a table or a chart shows the metric
    "entropy": "entropy (nats)", "entropy_frac": "entropy ÷ ln T", "distance": "distance (tokens)",
    "cls": "on [CLS]", "sep": "on [SEP]", "punct": "on punctuation", "first": "on first token",
    "prev": "on previous token",
    "next": "on next token", "self": "on itself", "confidence": "largest weight",
}


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


def is_punctuation(token: str) -> bool:
    """A token made only of punctuation characters (Unicode category P*), e.g. '.', ',', '?!'."""
    return bool(token) and all(unicodedata.category(c).startswith("P") for c in token)


def token_kinds(tokens, special) -> dict:
    """T bools each for [CLS], [SEP] and punctuation (non-special) tokens."""
    cls = np.array([s and t == "[CLS]" for t, s in zip(tokens, special)], dtype=bool)
    sep = np.array([s and t == "[SEP]" for t, s in zip(tokens, special)], dtype=bool)
    punct = np.array([not s and is_punctuation(t) for t, s in zip(tokens, special)], dtype=bool)
    return {"cls": cls, "sep": sep, "punct": punct}


def head_metrics(att, kinds: dict, causal: bool = False) -> dict:
    """Every metric of METRICS for each map: att (..., T, T) -> {name: (...) float array}.

    Needs T >= 2 (BERT always has [CLS] and [SEP]). prev/next are averaged over the rows that
    have a previous/next token (T-1 rows each). causal (a decoder's maps): row i can reach i + 1
    keys, so entropy_frac is the mean over rows i >= 1 of H_i / log(i + 1) (1 = uniform over
    what the row can see), and self and confidence leave out row 0 (always 1 on itself)."""
    att = torch.as_tensor(att, dtype=torch.float32)
    T = att.size(-1)
    idx = torch.arange(T, dtype=torch.float32)
    dist = (idx[:, None] - idx[None, :]).abs()  # (T, T)
    diag = att.diagonal(dim1=-2, dim2=-1)  # (..., T)
    rows = slice(1, None) if causal and T > 1 else slice(None)  # the rows with a choice
    p = att.clamp_min(0)
    row_h = -(p * torch.log(p.clamp_min(1e-12))).sum(dim=-1)  # (..., T) nats
    reach = torch.log(idx + 1) if causal else torch.full((T,), math.log(T))  # (T,) largest H
    out = {
        "entropy": entropy(att),
        "entropy_frac": (row_h[..., rows] / reach[rows]).mean(-1),
        "distance": (att * dist).sum(-1).mean(-1),
        "self": diag[..., rows].mean(-1),
        "prev": att.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1),  # (..., T-1) -> (...)
        "next": att.diagonal(offset=1, dim1=-2, dim2=-1).mean(-1),
        "confidence": att.max(dim=-1).values[..., rows].mean(-1),
        # rows 1.. (row 0 of a decoder can only look at token 0): Gu et al. 2024's sink share
        "first": att[..., 1:, 0].mean(-1) if T > 1 else att[..., 0, 0],
    }
    for name in ("cls", "sep", "punct"):
        cols = torch.as_tensor(kinds[name], dtype=torch.float32)  # (T,)
        out[name] = (att @ cols).mean(-1)  # (..., T) -> (...)
    return {k: v.numpy().astype(np.float64) for k, v in out.items()}


def result_metrics(res) -> dict:
    """head_metrics of an AttentionResult: {name: (L, H)}."""
    return head_metrics(res.attentions, token_kinds(res.labels, res.special), res.causal)


def mean_metrics(per_sentence: list) -> dict:
    """Average a list of {name: (L, H)} dicts: the corpus profile of every head."""
    return {k: np.mean([m[k] for m in per_sentence], axis=0) for k in per_sentence[0]}


def head_divergence(att: torch.Tensor) -> torch.Tensor:
    """How much the heads of each layer disagree, in nats: (L, H, T, T) -> (L,).

    The generalised Jensen-Shannon divergence of the H heads' rows with equal weights,
    entropy(mean of the heads) - mean(entropy of each head), averaged over query rows. It is 0
    when every head draws the same map and grows as heads look at different keys, whatever
    those keys are; it is at most log H."""
    return entropy(att.mean(dim=1)) - entropy(att).mean(dim=1)
