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
    labels, special = list(res.labels), list(res.special)
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


def _groups_kept(res, word_level: bool, hide_special: bool):
    """(groups, kept): the token positions behind each label before hiding, and the indices of
    the labels explorer_view keeps (all of them unless [CLS]/[SEP] are hidden)."""
    groups = res.words()[1] if word_level else [[t] for t in range(len(res.labels))]
    special = [all(res.special[t] for t in g) for g in groups]
    if hide_special and not all(special):
        return groups, [i for i, s in enumerate(special) if not s]
    return groups, list(range(len(groups)))


def shown_groups(res, word_level=False, hide_special=False) -> list:
    """The token positions (indices into res.labels) behind each label explorer_view shows with
    the same options: [t] per token, a word's pieces at word level; [CLS]/[SEP] left out when
    hidden. A click on shown label i is a click on these tokens."""
    groups, kept = _groups_kept(res, word_level, hide_special)
    return [list(groups[i]) for i in kept]


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


def focus_targets(att, query: int):
    """Where one query token attends in every head: att (L, H, T, T), a tensor or an array ->
    (top (L, H) key index, weight (L, H) on that key, rows (L, H, T) the query's full rows)."""
    rows = torch.as_tensor(att)[..., query, :]  # (L, H, T)
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


def words_in_one_only(labels_a, labels_b) -> tuple:
    """(words of A that B lacks, words of B that A lacks), compared as by_word does (case-
    insensitive), each in its first spelling and sentence order."""
    ka, kb = {_norm_word(w) for w in labels_a}, {_norm_word(w) for w in labels_b}
    only_a = {_norm_word(w): w for w in labels_a if _norm_word(w) not in kb}
    only_b = {_norm_word(w): w for w in labels_b if _norm_word(w) not in ka}
    return list(only_a.values()), list(only_b.values())


def reading_difference(rows_a, labels_a, rows_b, labels_b, shared_only=False) -> np.ndarray:
    """Total variation between where the focus word attends in two sentences, with targets
    matched by word: 0.5 * sum_w |p_a(w) - p_b(w)|. rows (..., G_a) and (..., G_b) -> (...),
    in [0, 1].

    shared_only=False: over the union of words; a word found in one sentence only counts in
    full, so a head that looks at the swapped noun ("telescope" / "hat") ranks first.
    shared_only=True: over the words both sentences have, each side's shares renormalised to
    sum to 1 over them: where the focus word looks among the same words. A side with no weight
    on any shared word counts as uniform over them."""
    pa, pb = by_word(rows_a, labels_a), by_word(rows_b, labels_b)
    zero = np.zeros(np.shape(rows_a)[:-1])
    words = list(dict.fromkeys([*pa, *pb]))
    if shared_only:
        words = [w for w in words if w in pa and w in pb]
        if not words:
            return zero
        pa, pb = _renormalised(pa, words), _renormalised(pb, words)
    return 0.5 * sum(np.abs(pa.get(w, zero) - pb.get(w, zero)) for w in words)


def _renormalised(p: dict, words) -> dict:
    total = sum(p[w] for w in words)  # (...)
    safe = np.where(total > 0, total, 1.0)
    return {w: np.where(total > 0, p[w] / safe, 1.0 / len(words)) for w in words}
