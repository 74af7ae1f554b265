"""The maps as the pages show them: subwords merged into words, special tokens hidden, one
query token's rows, and one word compared across two sentences.

Shape letters: L layers, H heads, T tokens, G shown tokens or words.
"""

import numpy as np
import torch

from .metrics import keep_tokens


def explorer_view(att: torch.Tensor, res, word_level=False, hide_special=False):
    """att (..., T, T) of the AttentionResult res, as shown.

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


def segments_view(res, word_level=False, hide_special=False) -> list:
    """The segment (0: the text, 1: the text pair; token_type_ids) of each token or word shown
    by explorer_view with the same options: a word takes its first piece's segment."""
    segments, special = res.encoded.token_type_ids.tolist(), list(res.special)
    if word_level:
        groups = res.words()[1]
        segments = [segments[members[0]] for members in groups]
        special = [all(special[t] for t in members) for members in groups]
    if hide_special and not all(special):
        segments = [s for s, sp in zip(segments, special) if not sp]
    return segments


def focus_targets(att: torch.Tensor, query: int):
    """Where one query token attends in every head: att (L, H, T, T) -> (top (L, H) key index,
    weight (L, H) on that key, rows (L, H, T) the query's full rows)."""
    rows = att[..., query, :]  # (L, H, T)
    weight, top = rows.max(dim=-1)  # (L, H) each
    return top, weight, rows


def _norm_word(w: str) -> str:
    return w.strip().lower()


def find_word(labels, word: str):
    """Index of the first word-level label equal to word (case-insensitive), or None."""
    target = _norm_word(word)
    return next((i for i, w in enumerate(labels) if _norm_word(w) == target), None)


def by_word(rows, labels):
    """Sum a focus row's attention over identical words: rows (..., G) -> ({word: (...)}).
    '[CLS]', '[SEP]' and each word form (lower-cased) are one target each."""
    rows = np.asarray(rows)
    out = {}
    for g, w in enumerate(labels):
        key = _norm_word(w)
        out[key] = out.get(key, 0) + rows[..., g]
    return out


def reading_difference(rows_a, labels_a, rows_b, labels_b) -> np.ndarray:
    """Total variation between where the focus word attends in two sentences, with targets
    matched by word: 0.5 * sum_w |p_a(w) - p_b(w)| over the union of words. A word in only one
    sentence counts in full. rows (..., G_a) and (..., G_b) -> (...), in [0, 1]."""
    pa, pb = by_word(rows_a, labels_a), by_word(rows_b, labels_b)
    zero = np.zeros(np.shape(rows_a)[:-1])
    words = list(dict.fromkeys([*pa, *pb]))
    return 0.5 * sum(np.abs(pa.get(w, zero) - pb.get(w, zero)) for w in words)
