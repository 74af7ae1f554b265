"""Pattern labels for heads: one table, checked top to bottom, with each label's short name,
colour and place among Kovaleva et al. 2019's five types defined together.

A label is given from head_metrics (metrics.py). The first rule a head passes gives its label;
a head that passes none is heterogeneous.
"""

import math
from dataclasses import dataclass

import numpy as np

# Clark et al. 2019 measured 3.8 nats on 128-token segments. log(128) = 4.85 nats, so "broad"
# there means at least 3.8 / log(128) = 0.78 of the largest possible entropy. We compare the
# entropy as a fraction of log T with that ratio, so the rule means the same for 10 tokens.
BROAD_FRACTION = 3.8 / math.log(128)
# Our choice: a heterogeneous head with at least this much on [CLS]/[SEP]/punctuation AND on
# one diagonal (previous, next or itself) is Kovaleva's "vertical+diagonal".
MIXED_SHARE = 0.3


@dataclass(frozen=True)
class Pattern:
    label: str  # as in tables: "[CLS]-sink"
    short: str  # in a thumbnail's corner: "CLS"
    colour: str  # the label's colour wherever it is drawn
    kovaleva: str  # Kovaleva et al. 2019's type
    metric: str | None  # the metric of metrics.METRICS the rule tests (None: no rule)
    threshold: float | None  # the rule: metric > threshold
    source: str  # where the number comes from


PATTERNS = (
    Pattern("[CLS]-sink", "CLS", "#7f7f7f", "vertical", "cls", 0.6,
            "Clark et al. 2019: > 0.6 on [CLS] is a special-token head"),
    Pattern("[SEP]-sink", "SEP", "#8c564b", "vertical", "sep", 0.6,
            "Clark et al. 2019: > 0.6 on [SEP] is a special-token head"),
    Pattern("punctuation", "punct", "#9467bd", "vertical", "punct", 0.6,
            "Clark et al. 2019 found deep heads on '.' and ','; we reuse their special-token "
            "threshold"),
    Pattern("first-token sink", "1st", "#17becf", "vertical", "first", 0.6,
            "Xiao et al. 2023, Gu et al. 2024: a decoder's first token gathers attention "
            "(in BERT the first token is [CLS], caught above); Clark's 0.6"),
    Pattern("previous-token", "prev", "#d62728", "diagonal", "prev", 0.5,
            "Clark et al. 2019: > 0.5 on the previous token"),
    Pattern("next-token", "next", "#ff7f0e", "diagonal", "next", 0.5,
            "Clark et al. 2019: > 0.5 on the next token"),
    Pattern("self/diagonal", "self", "#2ca02c", "diagonal", "self", 0.5,
            "Kovaleva et al. 2019 'diagonal'; we reuse Clark's 0.5"),
    Pattern("broad", "broad", "#1f77b4", "heterogeneous (broad)", "entropy_frac", BROAD_FRACTION,
            "Clark et al. 2019: entropy > 3.8 nats on 128 tokens, i.e. > 0.78 of log T"),
    Pattern("heterogeneous", "het", "#444444", "heterogeneous", None, None,
            "no rule above passed"),
)
RULES = PATTERNS[:-1]  # the ones with a rule, in the order they are checked
HETEROGENEOUS = PATTERNS[-1].label
LABELS = tuple(p.label for p in PATTERNS)
BY_LABEL = {p.label: p for p in PATTERNS}


def label_heads(metrics: dict) -> np.ndarray:
    """One label per head from RULES (first rule passed wins): (...) array of str."""
    shape = np.shape(metrics["entropy"])
    labels = np.full(shape, HETEROGENEOUS, dtype=object)
    done = np.zeros(shape, dtype=bool)
    for p in RULES:
        hit = ~done & (np.asarray(metrics[p.metric]) > p.threshold)
        labels[hit] = p.label
        done |= hit
    return labels


def short_labels(labels) -> np.ndarray:
    """Each label's short name: (...) array of str."""
    return np.vectorize(lambda x: BY_LABEL[x].short, otypes=[object])(labels)


def key_line() -> str:
    """Every short name with its label, for a figure's key: "CLS = [CLS]-sink, …"."""
    return ", ".join(f"{p.short} = {p.label}" for p in PATTERNS if p.short != p.label)


def kovaleva_types(metrics: dict, labels) -> np.ndarray:
    """Kovaleva et al. 2019's type for each head: the label's own type, plus vertical+diagonal
    for heterogeneous heads that are both (MIXED_SHARE on each side). (...) array of str."""
    types = np.vectorize(lambda x: BY_LABEL[x].kovaleva, otypes=[object])(labels)
    vertical = np.maximum(metrics["cls"] + metrics["sep"] + metrics["punct"], metrics["first"])
    diagonal = np.maximum(np.maximum(metrics["prev"], metrics["next"]), metrics["self"])
    mixed = (np.asarray(labels) == HETEROGENEOUS) & (vertical >= MIXED_SHARE) & (
        diagonal >= MIXED_SHARE)
    types[mixed] = "vertical+diagonal"
    return types
