"""The training lab: a toy task that needs two relations at once, tiny attention models, and
training runs that record what every head does.

Shape letters: B batch, T tokens, D d_model, H heads, K d_k = D / H, C classes, S snapshots.

Everything here is random only through explicit torch.Generator objects (weights, data and
attention dropout), never the global RNG: the app runs many sessions in threads, and a run must
give the same result for the same settings and seed whoever else is training.
"""

import hashlib
import math
import re
import time
from dataclasses import dataclass, field, replace

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .attention import MODES, MultiHeadSelfAttention, attention, merge_heads, split_heads

IGNORE = -100  # target of positions that have no answer (position 0 has no previous token)


# --- the task ----------------------------------------------------------------------------------
#
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

    @property
    def n_classes(self) -> int:
        return self.n_digits


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


# --- the model ---------------------------------------------------------------------------------


class LabModel(nn.Module):
    """A one-layer attention-only transformer (as in Elhage et al. 2021, "A Mathematical
    Framework for Transformer Circuits"): x = digit + mark + position embeddings;
    x = x + attn(x); logits = x W_U, two sets of M (PREV and MARKED). No MLP and no LayerNorm,
    so whatever the answer needs from other positions must come through the heads, and the
    readout is linear."""

    def __init__(self, cfg: LabConfig):
        super().__init__()
        D = cfg.d_model
        self.cfg = cfg  # frozen settings, not state
        self.digit = nn.Embedding(cfg.n_digits, D)
        self.mark = nn.Embedding(2, D)
        self.pos = nn.Embedding(cfg.seq_len, D)
        self.attn = MultiHeadSelfAttention(D, cfg.n_heads, mode=cfg.mode,
                                           slice_seed=cfg.slice_seed)
        self.head = nn.Linear(D, 2 * cfg.n_digits)

    def forward(self, digits, marked, dropout_gen=None):
        """digits, marked: (B, T). Returns logits (B, T, 2, M) and attention (B, H, T, T).
        dropout_gen: a torch.Generator; when given (training), attention dropout is applied."""
        T = digits.size(1)
        x = self.digit(digits) + self.mark(marked.long()) + self.pos.weight[:T]  # (B, T, D)
        q, k, v = self.attn.project(x)  # (B, H, T, K) each
        _, probs = attention(q, k, v)  # (B, H, T, T)
        used = probs
        p = self.cfg.attn_dropout
        if dropout_gen is not None and p > 0:
            keep = torch.rand(probs.shape, generator=dropout_gen) >= p  # (B, H, T, T)
            used = probs * keep / (1 - p)  # each head gets its own mask
        x = x + self.attn.out(merge_heads(used @ v))  # (B, T, D)
        B, T, _ = x.shape
        logits = self.head(x).view(B, T, 2, self.cfg.n_digits)  # (B, T, 2, M)
        return logits, probs


def init_weights(model: LabModel, g: torch.Generator):
    """Seeded init through g only: matrices N(0, 1/fan_in), biases 0, embeddings N(0, 1)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith(("digit", "mark", "pos")):
                p.normal_(0, 1, generator=g)
            elif name.endswith("w_qkv"):
                p.normal_(0, 1 / math.sqrt(p.size(-1)), generator=g)
            elif p.dim() >= 2:
                p.normal_(0, 1 / math.sqrt(p.size(1)), generator=g)
            else:
                p.zero_()


def make_heads_identical(attn: MultiHeadSelfAttention):
    """Copy head 0 into every head: the same rows of W_Q, W_K, W_V (and biases) and the same
    columns of W_O. Needs mode='wide'."""
    K = attn.d_model // attn.n_heads
    with torch.no_grad():
        for lin in (attn.query, attn.key, attn.value):
            w = lin.weight.view(attn.n_heads, K, attn.d_model)  # (H, K, D)
            w.copy_(w[:1].expand_as(w).clone())
            if lin.bias is not None:
                b = lin.bias.view(attn.n_heads, K)  # (H, K)
                b.copy_(b[:1].expand_as(b).clone())
        wo = attn.out.weight.view(attn.d_model, attn.n_heads, K)  # (D, H, K)
        wo.copy_(wo[:, :1].expand_as(wo).clone())


def build_model(cfg: LabConfig) -> LabModel:
    model = LabModel(cfg)
    init_weights(model, torch.Generator().manual_seed(cfg.seed))
    if cfg.init == "identical":
        make_heads_identical(model.attn)
    return model


def head_weights(attn: MultiHeadSelfAttention) -> torch.Tensor:
    """Each head's own parameters as one flat vector: (H, P).
    wide: its rows of W_Q, W_K, W_V (with biases) and its columns of W_O.
    narrow/random: its (K x K) matrices (with biases) and its columns of W_O."""
    H, D = attn.n_heads, attn.d_model
    K = D // H
    parts = []
    if attn.mode == "wide":
        for lin in (attn.query, attn.key, attn.value):
            parts.append(lin.weight.view(H, K * D))  # (H, K*D)
            if lin.bias is not None:
                parts.append(lin.bias.view(H, K))  # (H, K)
    else:
        parts.append(attn.w_qkv.transpose(0, 1).reshape(H, 3 * K * K))  # (H, 3*K*K)
        if attn.b_qkv is not None:
            parts.append(attn.b_qkv.transpose(0, 1).reshape(H, 3 * K))  # (H, 3*K)
    parts.append(attn.out.weight.view(D, H, K).transpose(0, 1).reshape(H, D * K))  # (H, D*K)
    return torch.cat(parts, dim=1).detach()  # (H, P)


# --- comparing heads ---------------------------------------------------------------------------


def pairwise_map_distance(probs: torch.Tensor) -> torch.Tensor:
    """probs (B, H, T, T) -> (H, H): mean total-variation distance between two heads' rows,
    0 (identical) .. 1 (disjoint)."""
    diff = probs[:, :, None] - probs[:, None, :]  # (B, H, H, T, T)
    return 0.5 * diff.abs().sum(-1).mean(dim=(0, 3))  # (H, H)


def cosine_matrix(vecs: torch.Tensor) -> torch.Tensor:
    """(H, P) -> (H, H) cosine similarity."""
    v = F.normalize(vecs.double(), dim=1)  # (H, P)
    return (v @ v.T).float()  # (H, H)


def diversity(dist: torch.Tensor) -> float:
    """Mean of the off-diagonal entries of an (H, H) distance matrix (0 for one head)."""
    H = dist.size(0)
    if H < 2:
        return 0.0
    return float(dist.sum() / (H * (H - 1)))


# --- training ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunResult:
    config: LabConfig
    params: int  # parameters of the whole model
    attn_params: int  # parameters of its attention module
    seconds: float
    steps: np.ndarray  # (S,) step of each snapshot (0 = before training)
    loss: np.ndarray  # (S,) training loss, smoothed over the steps since the last snapshot
    accuracy: np.ndarray  # (S,) both answers right, on a fixed held-out set
    accuracy_prev: np.ndarray  # (S,) PREV right
    accuracy_marked: np.ndarray  # (S,) MARKED right
    map_distance: np.ndarray  # (S, H, H) mean TV distance between heads' attention maps
    weight_similarity: np.ndarray  # (S, H, H) cosine similarity of heads' own weights
    max_head_gap: np.ndarray  # (S,) largest |difference| between any two heads' weights
    example_digits: np.ndarray  # (T,) one held-out sequence
    example_marked: np.ndarray  # (T,) bool
    example_maps: np.ndarray  # (H, T, T) the trained heads' attention on it
    example_pred: np.ndarray  # (T, 2) predicted (PREV, MARKED)
    example_target: np.ndarray  # (T, 2) IGNORE at position 0
    extra: dict = field(default_factory=dict)

    @property
    def final_accuracy(self) -> float:
        return float(self.accuracy[-1])

    @property
    def diversity(self) -> np.ndarray:
        """(S,) mean pairwise distance between the heads' attention maps."""
        return np.array([diversity(torch.from_numpy(d)) for d in self.map_distance])


def loss_fn(logits, targets):
    """Cross-entropy over both answers of every position that has them."""
    return F.cross_entropy(logits.flatten(0, 2), targets.flatten(), ignore_index=IGNORE)


def accuracies(logits, targets):
    """(both right, PREV right, MARKED right) over the positions that have answers."""
    keep = targets[..., 0] != IGNORE  # (B, T)
    right = logits.argmax(-1)[keep] == targets[keep]  # (N, 2)
    return (float(right.all(-1).float().mean()), float(right[:, 0].float().mean()),
            float(right[:, 1].float().mean()))


def train(cfg: LabConfig, on_step=None) -> RunResult:
    """Train a fresh LabModel on the task. on_step(step, steps, snapshot_dict) is called at
    every snapshot (for a live loss curve); it must not change anything here."""
    model = build_model(cfg)
    data_gen = torch.Generator().manual_seed(10_000 + cfg.seed)
    drop_gen = torch.Generator().manual_seed(20_000 + cfg.seed)
    # the same held-out set for every seed and model, so accuracies are comparable
    ev_digits, ev_marked, ev_targets = make_batch(cfg, cfg.eval_size,
                                                  torch.Generator().manual_seed(12345))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    snaps = {k: [] for k in ("steps", "loss", "accuracy", "accuracy_prev", "accuracy_marked",
                             "map_distance", "weight_similarity", "max_head_gap")}
    running, n_running = 0.0, 0

    def snapshot(step):
        model.eval()
        with torch.no_grad():
            logits, probs = model(ev_digits, ev_marked)  # (B, T, 2, M), (B, H, T, T)
            loss = loss_fn(logits, ev_targets)
        model.train()
        both, prev, mark = accuracies(logits, ev_targets)
        w = head_weights(model.attn)  # (H, P)
        snaps["steps"].append(step)
        snaps["loss"].append(running / n_running if n_running else float(loss))
        snaps["accuracy"].append(both)
        snaps["accuracy_prev"].append(prev)
        snaps["accuracy_marked"].append(mark)
        snaps["map_distance"].append(pairwise_map_distance(probs).numpy())
        snaps["weight_similarity"].append(cosine_matrix(w).numpy())
        snaps["max_head_gap"].append(float((w[:, None] - w[None]).abs().max()))
        if on_step is not None:
            on_step(step, cfg.steps, {k: list(v) for k, v in snaps.items()})

    t0 = time.perf_counter()
    snapshot(0)
    model.train()
    for step in range(1, cfg.steps + 1):
        digits, marked, targets = make_batch(cfg, cfg.batch, data_gen)
        logits, _ = model(digits, marked, dropout_gen=drop_gen)  # (B, T, 2, M)
        loss = loss_fn(logits, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        running, n_running = running + loss.item(), n_running + 1
        if step % cfg.eval_every == 0 or step == cfg.steps:
            snapshot(step)
            running, n_running = 0.0, 0
    seconds = time.perf_counter() - t0

    model.eval()
    with torch.no_grad():
        logits, probs = model(ev_digits[:1], ev_marked[:1])  # (1, T, 2, M), (1, H, T, T)
    return RunResult(
        config=cfg,
        params=sum(p.numel() for p in model.parameters()),
        attn_params=sum(p.numel() for p in model.attn.parameters()),
        seconds=seconds,
        steps=np.array(snaps["steps"]),
        loss=np.array(snaps["loss"]),
        accuracy=np.array(snaps["accuracy"]),
        accuracy_prev=np.array(snaps["accuracy_prev"]),
        accuracy_marked=np.array(snaps["accuracy_marked"]),
        map_distance=np.stack(snaps["map_distance"]),
        weight_similarity=np.stack(snaps["weight_similarity"]),
        max_head_gap=np.array(snaps["max_head_gap"]),
        example_digits=ev_digits[0].numpy(),
        example_marked=ev_marked[0].numpy(),
        example_maps=probs[0].numpy(),
        example_pred=logits[0].argmax(-1).numpy(),
        example_target=ev_targets[0].numpy(),
    )


def with_(cfg: LabConfig, **changes) -> LabConfig:
    return replace(cfg, **changes)


# --- what it costs -----------------------------------------------------------------------------
#
# Three designs at the same d_model D, for a batch of B sequences of T tokens. FLOPs count a
# multiply-add as 2, as torch.utils.flop_counter does; softmax, scaling and biases are left out
# (they are O(B H T^2) and O(B T D), small next to the matmuls).
#   one    1 head of size D                 Q, K, V: D -> D      output: D -> D
#   split  H heads of size D/H (standard)   Q, K, V: D -> D      output: D -> D
#   full   H heads of size D each           Q, K, V: D -> H D    output: H D -> D
# Vaswani et al. 2017 (section 3.2.2): "Due to the reduced dimension of each head, the total
# computational cost is similar to that of single-head attention with full dimensionality."

DESIGNS = {
    "one": "1 head of d_model",
    "split": "h heads of d_model/h",
    "full": "h heads of d_model each",
}


@dataclass(frozen=True)
class Cost:
    design: str
    heads: int
    d_head: int
    params: int  # weights and biases of Q, K, V and the output projection
    proj_flops: int  # the four projections
    attn_flops: int  # Q K^T and probs @ V
    map_bytes: int  # the float32 attention maps, B * H * T * T * 4

    @property
    def flops(self) -> int:
        return self.proj_flops + self.attn_flops


def attention_cost(design: str, d_model: int, n_heads: int, T: int, B: int = 1) -> Cost:
    D, h = d_model, n_heads
    if design == "one":
        H, K = 1, D
    elif design == "split":
        if D % h:
            raise ValueError(f"d_model ({D}) must be divisible by h ({h})")
        H, K = h, D // h
    elif design == "full":
        H, K = h, D
    else:
        raise ValueError(f"design must be one of {list(DESIGNS)}, got {design!r}")
    W = H * K  # width of Q, K, V: D for one and split, h D for full
    params = 3 * (D * W + W) + (W * D + D)
    proj_flops = 2 * B * T * D * W * 4  # three in-projections and one out-projection
    attn_flops = 2 * 2 * B * H * T * T * K  # scores (T x K by K x T) and probs @ V, per head
    return Cost(design, H, K, params, proj_flops, attn_flops, B * H * T * T * 4)


def slice_cost(mode: str, d_model: int, n_heads: int, T: int, B: int = 1) -> Cost:
    """The standard h heads of d_model/h in the three input modes of MultiHeadSelfAttention.
    narrow/random: each head projects its own K input dims with (K x K) matrices."""
    if mode == "wide":
        return attention_cost("split", d_model, n_heads, T, B)
    D, H = d_model, n_heads
    K = D // H
    params = 3 * H * (K * K + K) + D * D + D
    proj_flops = 2 * B * T * (3 * H * K * K + D * D)
    return Cost(mode, H, K, params, proj_flops, 2 * 2 * B * H * T * T * K, B * H * T * T * 4)


class FullWidthHeads(nn.Module):
    """H heads that are each as wide as the model (K = D): the "8 heads of 512" design."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        W = d_model * n_heads
        self.query, self.key, self.value = (nn.Linear(d_model, W) for _ in range(3))
        self.out = nn.Linear(W, d_model)

    def forward(self, x):
        q, k, v = (split_heads(lin(x), self.n_heads)
                   for lin in (self.query, self.key, self.value))  # (B, H, T, D) each
        ctx, probs = attention(q, k, v)  # (B, H, T, D), (B, H, T, T)
        return self.out(merge_heads(ctx)), probs  # (B, T, D)


def cost_module(design: str, d_model: int, n_heads: int) -> nn.Module:
    """The real module each design describes."""
    if design == "one":
        return MultiHeadSelfAttention(d_model, 1)
    if design == "split":
        return MultiHeadSelfAttention(d_model, n_heads)
    if design == "full":
        return FullWidthHeads(d_model, n_heads)
    raise ValueError(f"design must be one of {list(DESIGNS)}, got {design!r}")


def module_params(design: str, d_model: int, n_heads: int) -> int:
    """sum(p.numel()) of the real module of a design, built on the meta device: shapes only,
    no memory (the "full" design at d_model 1024, h 16 would otherwise allocate 268 MB)."""
    with torch.device("meta"):
        return sum(p.numel() for p in cost_module(design, d_model, n_heads).parameters())


def time_forward(module: nn.Module, T: int, B: int = 1, repeats: int = 5) -> float:
    """Median seconds of one forward pass on random input (B, T, D), after one warm-up."""
    D = module.out.out_features
    x = torch.randn(B, T, D, generator=torch.Generator().manual_seed(0))  # (B, T, D)
    times = []
    with torch.inference_mode():
        module(x)
        for _ in range(repeats):
            t0 = time.perf_counter()
            module(x)
            times.append(time.perf_counter() - t0)
    return float(np.median(times))


# --- the toy walkthrough ("money bank", d_model 4, 2 heads) ------------------------------------

TOY_TEXT = "money bank"
TOY_MAX_WORDS = 6
TOY_MAX_CHARS = 16


def parse_toy_words(text: str, max_words: int = TOY_MAX_WORDS):
    """(words, message). Words are runs of letters, digits, ' and -, lower-cased and cut to
    TOY_MAX_CHARS. Empty input falls back to the default; long input is cut to max_words.
    message is None when nothing had to be changed."""
    words = [w[:TOY_MAX_CHARS] for w in re.findall(r"[\w'-]+", (text or "").lower())]
    if not words:
        return TOY_TEXT.split(), f"No words found, so the walkthrough uses {TOY_TEXT!r}."
    if len(words) > max_words:
        return words[:max_words], (f"{len(words)} words are too many to show as numbers: the "
                                   f"walkthrough keeps the first {max_words}.")
    if len(words) == 1:
        return words, ("One word: each head can only attend to the word itself, so every "
                       "softmax is 1.")
    return words, None


def toy_embedding(words, d_model: int = 4) -> torch.Tensor:
    """A made-up d_model-dim vector per word, the same every time for the same word
    (seeded by the word's bytes), rounded to one decimal so it reads easily: (T, D)."""
    rows = []
    for w in words:
        seed = int.from_bytes(hashlib.sha256(w.encode()).digest()[:8], "little")
        g = torch.Generator().manual_seed(seed)
        rows.append(torch.randn(d_model, generator=g))
    return torch.stack(rows).mul(10).round().div(10)  # (T, D)


def toy_attention(d_model: int = 4, n_heads: int = 2, seed: int = 0) -> MultiHeadSelfAttention:
    """A MultiHeadSelfAttention without biases and with seeded weights rounded to one
    decimal, as in the classroom example."""
    attn = MultiHeadSelfAttention(d_model, n_heads, bias=False)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in attn.parameters():
            p.copy_(torch.randn(p.shape, generator=g).mul(0.7).mul(10).round().div(10))
    return attn


@dataclass(frozen=True)
class Matrix:
    name: str  # e.g. "Q_1"
    values: np.ndarray
    rows: tuple  # a label per row
    cols: tuple  # a label per column
    shape_text: str  # e.g. "(T, d_k) = (2, 2)"


@dataclass(frozen=True)
class Step:
    title: str
    text: str
    matrices: tuple


@dataclass(frozen=True)
class Walkthrough:
    words: tuple
    d_model: int
    n_heads: int
    steps: tuple
    output: np.ndarray  # (T, D), the final output


def walkthrough(words, attn: MultiHeadSelfAttention) -> Walkthrough:
    """Every matrix of one multi-head self-attention on the toy words, in float64 numpy,
    in the textbook orientation (x W, so each W is (in, out); nn.Linear stores (out, in))."""
    if attn.mode != "wide":
        raise ValueError("the walkthrough shows the standard (wide) attention")
    D, H = attn.d_model, attn.n_heads
    K = D // H
    words = tuple(words)
    T = len(words)
    X = toy_embedding(words, D).double().numpy()  # (T, D)
    Wq, Wk, Wv, Wo = (lin.weight.detach().double().numpy().T
                      for lin in (attn.query, attn.key, attn.value, attn.out))  # (D, D) each
    bias = [lin.bias for lin in (attn.query, attn.key, attn.value, attn.out)]
    if any(b is not None for b in bias):
        raise ValueError("the walkthrough's toy attention has no biases")
    dims = tuple(f"d{j + 1}" for j in range(D))
    kdims = tuple(f"k{j + 1}" for j in range(K))
    heads = range(H)

    def m(name, values, rows, cols, letters):
        return Matrix(name, values, tuple(rows), tuple(cols),
                      f"({', '.join(letters)}) = {values.shape}")

    def cut(W, i):
        return W[:, i * K:(i + 1) * K]  # (D, K): head i's columns

    steps = [Step("1. The input X",
                  f"Each of the {T} words is a row of d_model = {D} numbers (made up for the "
                  "toy, with no position information). The WHOLE row goes to every head.",
                  (m("X", X, words, dims, ("T", "d_model")),))]
    weights = []
    for i in heads:
        for nm, W in (("W_Q", Wq), ("W_K", Wk), ("W_V", Wv)):
            weights.append(m(f"{nm}_{i + 1}", cut(W, i), dims, kdims, ("d_model", "d_k")))
    steps.append(Step("2. Each head's weights",
                      f"Head i has its own W_Q_i, W_K_i, W_V_i, each d_model × d_k = {D} × {K} "
                      f"(d_k = d_model / h = {D} / {H}). Together they are the columns of one "
                      f"{D} × {D} matrix per letter, cut into {H} pieces.", tuple(weights)))
    Q = [X @ cut(Wq, i) for i in heads]  # (T, K) each
    Kx = [X @ cut(Wk, i) for i in heads]
    V = [X @ cut(Wv, i) for i in heads]
    qkv = []
    for i in heads:
        qkv += [m(f"Q_{i + 1} = X W_Q_{i + 1}", Q[i], words, kdims, ("T", "d_k")),
                m(f"K_{i + 1} = X W_K_{i + 1}", Kx[i], words, kdims, ("T", "d_k")),
                m(f"V_{i + 1} = X W_V_{i + 1}", V[i], words, kdims, ("T", "d_k"))]
    steps.append(Step("3. Queries, keys and values",
                      "Each head projects the same X down to d_k numbers per word: a query "
                      "(what am I looking for?), a key (what do I offer?) and a value (what I "
                      "pass on).", tuple(qkv)))
    S = [Q[i] @ Kx[i].T for i in heads]  # (T, T) each
    scaled = [s / math.sqrt(K) for s in S]
    sc = []
    for i in heads:
        sc += [m(f"Q_{i + 1} K_{i + 1}ᵀ", S[i], words, words, ("T", "T")),
               m(f"Q_{i + 1} K_{i + 1}ᵀ / √{K}", scaled[i], words, words, ("T", "T"))]
    steps.append(Step("4. Scores, then scaled",
                      "Row = the word that asks, column = the word it looks at. Each score is "
                      f"one query · one key; dividing by √d_k = √{K} keeps the scores from "
                      "growing with d_k.", tuple(sc)))
    P = []
    for s in scaled:
        e = np.exp(s - s.max(axis=1, keepdims=True))
        P.append(e / e.sum(axis=1, keepdims=True))  # (T, T), rows sum to 1
    steps.append(Step("5. Softmax",
                      "Each row becomes weights that are positive and sum to 1: how much each "
                      "word takes from every word, in this head.",
                      tuple(m(f"softmax_{i + 1}", P[i], words, words, ("T", "T"))
                            for i in heads)))
    Z = [P[i] @ V[i] for i in heads]  # (T, K) each
    steps.append(Step("6. Each head's output Z_i",
                      "Z_i = softmax_i · V_i: for each word, a weighted mix of the values.",
                      tuple(m(f"Z_{i + 1}", Z[i], words, kdims, ("T", "d_k")) for i in heads)))
    concat = np.concatenate(Z, axis=1)  # (T, D)
    steps.append(Step("7. Concatenate",
                      f"The {H} heads' outputs side by side: {H} × d_k = {D} = d_model numbers "
                      "per word again.",
                      (m("Concat(Z_1..Z_h)", concat, words,
                         tuple(f"h{i + 1}.{c}" for i in heads for c in kdims),
                         ("T", "h·d_k")),)))
    out = concat @ Wo  # (T, D)
    steps.append(Step("8. Mix the heads with W_O",
                      "W_O (d_model × d_model) mixes what the heads found into one vector per "
                      "word: the output of multi-head attention.",
                      (m("W_O", Wo, tuple(f"h{i + 1}.{c}" for i in heads for c in kdims), dims,
                         ("h·d_k", "d_model")),
                       m("Output = Concat · W_O", out, words, dims, ("T", "d_model")))))
    return Walkthrough(words, D, H, tuple(steps), out)


# --- the same steps on a real model ------------------------------------------------------------


@dataclass(frozen=True)
class RealSteps:
    shapes: tuple  # (stage, shape tuple, what it is)
    head: int
    query: int
    q: np.ndarray  # (K,) the chosen head's query vector for the chosen token
    k: np.ndarray  # (T, K) the chosen head's key vectors
    products: np.ndarray  # (T, K) q * k elementwise
    logits: np.ndarray  # (T,) q . k / sqrt(K)
    probs: np.ndarray  # (T,) softmax of the logits
    module_probs: np.ndarray  # (T,) the module's own weights for this head and token


def real_steps(attn: MultiHeadSelfAttention, x: torch.Tensor, head: int, query: int):
    """The shapes of one layer's attention on x (T, D), and the neuron view of one head and
    query token. Reads the (shared) module only; never changes it."""
    T, D = x.shape
    H = attn.n_heads
    K = D // H
    if not 0 <= head < H or not 0 <= query < T:
        raise ValueError(f"head must be in 0..{H - 1} and query in 0..{T - 1}")
    with torch.inference_mode():
        xb = x[None]  # (B, T, D) with B = 1
        q, k, v = attn.project(xb)  # (B, H, T, K) each
        flat = merge_heads(q)  # (B, T, D): the projection before the split
        scores = q @ k.transpose(-2, -1) / math.sqrt(K)  # (B, H, T, T)
        ctx, probs = attention(q, k, v)  # (B, H, T, K), (B, H, T, T)
        merged = merge_heads(ctx)  # (B, T, D)
        out = attn.out(merged)  # (B, T, D)
        _, module_probs = attn(xb)  # (B, H, T, T)
        qv, kv = q[0, head, query], k[0, head]  # (K,), (T, K)
        products = qv[None] * kv  # (T, K)
        logits = products.sum(-1) / math.sqrt(K)  # (T,)
    B = 1
    shapes = (
        ("input x", (B, T, D), "B sequences × T tokens × d_model"),
        ("after the projections x W_Q (also K, V)", tuple(flat.shape), "still d_model wide"),
        ("after the split into heads", tuple(q.shape), "(B, H, T, d_k): view + transpose"),
        ("scores Q Kᵀ / √d_k", tuple(scores.shape), "(B, H, T, T): one T × T map per head"),
        ("softmax × V", tuple(ctx.shape), "(B, H, T, d_k)"),
        ("after the merge", tuple(merged.shape), "(B, T, H·d_k) = (B, T, d_model)"),
        ("after W_O", tuple(out.shape), "(B, T, d_model)"),
    )
    return RealSteps(shapes, head, query, qv.numpy().copy(), kv.numpy().copy(),
                     products.numpy().copy(), logits.numpy().copy(),
                     logits.softmax(-1).numpy().copy(),
                     module_probs[0, head, query].numpy().copy())
