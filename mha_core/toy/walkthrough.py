"""The toy walkthrough of Inside MHA: "money bank", d_model 4, 2 heads, every matrix of one
multi-head self-attention in the textbook orientation.

Shape letters: T words, D d_model, H heads, K d_k = D / H.
"""

import hashlib
import math
import re
from dataclasses import dataclass

import numpy as np
import torch

from ..attention import MultiHeadSelfAttention

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

