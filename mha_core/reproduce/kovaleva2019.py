"""Kovaleva et al. 2019, "Revealing the Dark Secrets of BERT": every head's map on every sentence
sorted into five kinds, and each kind's share per layer.

The paper sorted maps with a CNN trained on ~400 hand-labelled maps. Ours is a stated rule on
three numbers of a map (rows that can see at least two keys; a decoder's first row cannot):
    v  vertical: the mean weight on the VERTICAL_KEYS keys that get the most weight on average
       (the same columns in every row: [CLS], [SEP], punctuation, a decoder's first token)
    d  diagonal: the mean weight on the row's own token and its neighbours (|i - j| <= 1),
       the vertical keys left out so that no weight counts twice
    b  broad: the mean row entropy over ln(keys the row can see) (1 = uniform)
and the first rule that holds names the map:
    vertical            v >= STRONG
    diagonal            d >= STRONG
    vertical+diagonal   v + d >= STRONG, v >= WEAK and d >= WEAK
    block               b >= BROAD (attention spread over the sentence: with one sentence a
                        text, the paper's blocks are the sentence itself)
    heterogeneous       anything else
"""

import numpy as np

from .common import Paper, Published, pct, rounded, visible_keys
from .corpus import MAX_TOKENS, encode_corpus

PAPER = Paper("kovaleva2019", "Kovaleva et al. 2019, Revealing the Dark Secrets of BERT",
              "arXiv:1908.08593, EMNLP 2019", "bert-base-uncased fine-tuned per GLUE task",
              "up to 1,000 dev examples of 7 GLUE tasks")
CLASSES = ("vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous")
PANELS = 1  # the figure's panels side by side
PUBLISHED = (Published("heterogeneous maps", "32 % (MRPC) to 61 % (QQP)"),)
VERTICAL_KEYS = 2
STRONG, WEAK, BROAD = 0.7, 0.2, 0.7


def map_scores(att: np.ndarray, decoder: bool = False) -> dict:
    """v, d, b (see the module's text) of maps (..., T, T) -> {"v", "d", "b"}: (...) each."""
    T = att.shape[-1]
    seen = visible_keys(T, decoder)  # (T, T)
    rows = seen.sum(-1) >= 2  # (T,) rows with a choice
    a = att[..., rows, :]  # (..., R, T)
    mean_row = a.mean(-2)  # (..., T)
    top = np.argsort(-mean_row, axis=-1, kind="stable")[..., :VERTICAL_KEYS]  # (..., 2)
    vertical = np.zeros(mean_row.shape, dtype=bool)
    np.put_along_axis(vertical, top, True, axis=-1)
    idx = np.arange(T)
    band = (np.abs(idx[:, None] - idx[None, :]) <= 1)[rows]  # (R, T)
    v = np.take_along_axis(mean_row, top, axis=-1).sum(-1)
    d = (a * (band & ~vertical[..., None, :])).sum(-1).mean(-1)
    p = np.clip(a, 1e-12, None)
    ent = -(a * np.log(p)).sum(-1) / np.log(seen.sum(-1)[rows])  # (..., R)
    return {"v": v, "d": d, "b": ent.mean(-1)}


def classify(scores: dict) -> np.ndarray:
    """Each map's class index into CLASSES: (...) ints from map_scores' arrays."""
    v, d, b = (np.asarray(scores[k]) for k in ("v", "d", "b"))
    return np.select([v >= STRONG, d >= STRONG, (v + d >= STRONG) & (v >= WEAK) & (d >= WEAK),
                      b >= BROAD], [0, 1, 2, 3], default=4)


def run(model, corpus, progress=None) -> dict:
    kept, skipped = encode_corpus(model, corpus.texts, MAX_TOKENS, min_tokens=3)
    L, H = model.config.num_hidden_layers, model.config.num_attention_heads
    counts = np.zeros((L, H, len(CLASSES)), dtype=np.int64)
    for k, (_, enc) in enumerate(kept):
        att = model.attend_encoded(enc).attentions.double().numpy()  # (L, H, T, T)
        c = classify(map_scores(att, model.is_decoder))  # (L, H)
        counts[np.arange(L)[:, None], np.arange(H)[None, :], c] += 1
        if progress:
            progress(k + 1, len(kept))
    n = len(kept)
    if not n:
        raise ValueError("no sentence of the corpus fits (all too long, or under 3 tokens)")
    by_layer = counts.sum(1) / (H * n)  # (L, C)
    overall = counts.sum((0, 1)) / (L * H * n)  # (C,)
    return {"sentences": n, "skipped": skipped, "classes": list(CLASSES),
            "rule": {"vertical_keys": VERTICAL_KEYS, "strong": STRONG, "weak": WEAK,
                     "broad": BROAD},
            "overall": dict(zip(CLASSES, rounded(overall))),
            "by_layer": {c: rounded(by_layer[:, i]) for i, c in enumerate(CLASSES)},
            "head_class": [[CLASSES[int(i)] for i in row] for row in counts.argmax(-1)]}


def rows(res: dict, model) -> list:
    out = [(f"{PUBLISHED[0].measure} (share of all maps)", pct(res["overall"]["heterogeneous"]),
            PUBLISHED[0].value)]
    for c in CLASSES[:-1]:
        out.append((f"{c} maps", pct(res["overall"][c]), "only in their Fig. 2, not quoted"))
    return out


def differs(res: dict, model) -> str:
    return (f"The paper sorted maps of fine-tuned bert-base on GLUE sentence pairs with a CNN "
            f"trained on hand labels; ours sorts {model.name}'s maps on {res['sentences']} "
            f"single sentences by a stated threshold rule (v ≥ {STRONG}, d ≥ {STRONG}, "
            f"v + d ≥ {STRONG} with both ≥ {WEAK}, entropy ≥ {BROAD} of the maximum), so "
            f"“block” here means attention spread over the one sentence.")


def figure(res: dict, fig) -> None:
    """Stacked bars: each class's share of the maps per layer."""
    ax = fig.subplots(1, 1)
    L = len(res["by_layer"][CLASSES[0]])
    bottom = np.zeros(L)
    for c in CLASSES:
        v = np.array(res["by_layer"][c], dtype=float)
        ax.bar(range(1, L + 1), v, bottom=bottom, label=c)
        bottom += v
    ax.set(xlabel="layer", ylabel="share of maps", ylim=(0, 1),
           title="Kinds of attention map per layer (threshold rule)")
    ax.legend(fontsize="small", loc="upper right")
