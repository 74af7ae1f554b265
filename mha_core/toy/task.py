"""The Training lab's toy task: a sequence of digits, one of them marked, and two answers at
every position, one by position and one by content.

Shape letters: B batch, T tokens, M digits.

Everything here is random only through explicit torch.Generator objects, never the global RNG:
the app runs many sessions in threads, and a run must give the same result for the same
settings and seed whoever else is training.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..attention import MODES

IGNORE = -100  # target of positions that have no answer (position 0 has no previous token)

# A sequence of T digits 0..M-1. Exactly one position is MARKED (shown as "7*").
# At every position i >= 1 the model answers two digits:
#       PREV   = the digit just before i           (a relation by POSITION: offset -1)
#       MARKED = the marked digit                  (a relation by CONTENT: wherever the mark is)
# Two heads can each look at one place. One head must split a single softmax between both
# places, and what it reads back is ONE weighted sum of two digit vectors, from which two
# separate linear readouts must pull out two different digits: if the previous digit gets the
# larger weight, the marked one is the minority in the sum, and the other way round.


@dataclass(frozen=True)
class LabConfig:
    n_heads: int = 2
    d_model: int = 16
    mode: str = "wide"  # "wide" | "narrow" | "random" (see attention.MultiHeadSelfAttention)
    init: str = "random"  # "random" | "identical": every head starts as a copy of head 0
    attn_dropout: float = 0.0  # dropout on the attention weights while training
    seq_len: int = 8  # T
    n_digits: int = 8  # M
    steps: int = 600
    batch: int = 64
    lr: float = 3e-3
    seed: int = 0
    eval_every: int = 25
    eval_size: int = 512
    slice_seed: int = 0  # which dims the heads read in mode="random"

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads "
                             f"({self.n_heads})")
        if self.init not in ("random", "identical"):
            raise ValueError(f"init must be 'random' or 'identical', got {self.init!r}")
        if self.init == "identical" and self.mode != "wide":
            raise ValueError("identical heads need mode='wide': in the narrow modes the heads "
                             "read different inputs, so they cannot be copies of each other")
        if not 0.0 <= self.attn_dropout < 1.0:
            raise ValueError("attn_dropout must be in [0, 1)")
        if self.seq_len < 2 or self.n_digits < 2 or self.steps < 1:
            raise ValueError("seq_len and n_digits must be at least 2, steps at least 1")


def make_batch(cfg: LabConfig, n: int, g: torch.Generator):
    """n random sequences: digits (B, T) long, marked (B, T) bool with one True per row,
    targets (B, T, 2) long: [..., 0] the previous digit, [..., 1] the marked digit
    (IGNORE at position 0, which has no previous digit)."""
    T, M = cfg.seq_len, cfg.n_digits
    digits = torch.randint(0, M, (n, T), generator=g)  # (B, T)
    where = torch.randint(0, T, (n,), generator=g)  # (B,)
    marked = F.one_hot(where, T).bool()  # (B, T)
    marked_digit = digits.gather(1, where[:, None])  # (B, 1)
    targets = torch.full((n, T, 2), IGNORE, dtype=torch.long)  # (B, T, 2)
    targets[:, 1:, 0] = digits[:, :-1]  # (B, T-1)
    targets[:, 1:, 1] = marked_digit  # (B, 1) broadcast to (B, T-1)
    return digits, marked, targets


def example(cfg: LabConfig):
    """One sequence to show on the page: digits (T,), marked (T,), targets (T, 2)."""
    digits, marked, targets = make_batch(cfg, 1, torch.Generator().manual_seed(cfg.seed))
    return digits[0], marked[0], targets[0]
