"""Kobayashi et al. 2020, "Attention is Not Only a Weight: Analyzing Transformers with Vector
Norms": a token can get much weight and still write little, when its transformed vector is
short.

Per head (L, H), for each token type (cls, sep, period, comma; and first, token 0, a decoder's
sink), averaged over sentences and query positions i:
    weight   sum over j of that type of a_ij
    norm     sum over j of that type of ||a_ij f(x_j)||  /  sum over all j of ||a_ij f(x_j)||
with f(x) = (x W_V^h + b_V^h) W_O^h (mha_core.norms, from the run's own forward cache; b_O left
out, as the paper does). The paper compares the two per layer; so does the figure.
"""

import numpy as np
import torch

from ..norms import result_norm_maps, row_normalised
from .common import Paper, Published, pct, rounded, token_types
from .corpus import MAX_TOKENS, encode_corpus

PAPER = Paper("kobayashi2020", "Kobayashi et al. 2020, Attention is Not Only a Weight",
              "arXiv:2004.10102, EMNLP 2020", "bert-base-uncased",
              "Clark et al.'s Wikipedia segments")
PANELS = 1  # the figure's panels side by side
PUBLISHED = (
    Published("[CLS], [SEP], “.” and “,”: share by norm vs by weight",
              "much lower by norm (“BERT pays poor attention to special tokens”, abstract)"),
    Published("[SEP] in the middle layers", "much weight, little norm (their Fig. 3)"),
)
TYPES = ("cls", "sep", "period", "comma", "first")
LABELS = {"cls": "[CLS]", "sep": "[SEP]", "period": "\".\"", "comma": "\",\"", "first": "token 0"}


def sentence_shares(att: np.ndarray, norm_maps: np.ndarray, enc, decoder: bool) -> dict:
    """att and raw norm maps (L, H, T, T) of one sentence -> {"weight": {type: (L, H)},
    "norm": {type: (L, H)}}; NaN for [CLS]/[SEP] in a decoder."""
    types = token_types(enc)
    shares = row_normalised(torch.as_tensor(norm_maps)).numpy()  # (L, H, T, T) rows sum to 1
    out = {}
    for name, maps in (("weight", att), ("norm", shares)):
        out[name] = {t: (maps @ types[t].astype(np.float64)).mean(-1) for t in TYPES}
        if decoder:
            out[name]["cls"] = out[name]["sep"] = np.full(att.shape[:2], np.nan)
    return out


def run(model, corpus, progress=None) -> dict:
    kept, skipped = encode_corpus(model, corpus.texts, MAX_TOKENS)
    sums, n = None, 0
    for k, (_, enc) in enumerate(kept):
        res = model.attend_encoded(enc)
        att = res.attentions.double().numpy()  # (L, H, T, T)
        norms = result_norm_maps(model, res).double().numpy()  # (L, H, T, T) raw norms
        s = sentence_shares(att, norms, enc, model.is_decoder)
        sums = s if sums is None else {b: {t: sums[b][t] + s[b][t] for t in TYPES} for b in s}
        n += 1
        if progress:
            progress(k + 1, len(kept))
    if not n:
        raise ValueError("no sentence of the corpus fits (all too long or empty)")
    heads = {b: {t: v / n for t, v in d.items()} for b, d in sums.items()}
    return {"sentences": n, "skipped": skipped,
            "heads": {b: {t: rounded(v) for t, v in d.items()} for b, d in heads.items()},
            "by_layer": {b: {t: none_or(v, v.mean(1)) for t, v in d.items()}
                         for b, d in heads.items()},
            "overall": {b: {t: none_or(v, v.mean()) for t, v in d.items()}
                        for b, d in heads.items()}}


def none_or(heads: np.ndarray, value):
    """The value rounded, or None for a type the model does not have (all NaN)."""
    return None if np.isnan(heads).all() else rounded(value)


def rows(res: dict, model) -> list:
    out = []
    for t in TYPES:
        w, n = res["overall"]["weight"][t], res["overall"]["norm"][t]
        if w is None or (t == "first" and res["overall"]["weight"]["cls"] is not None):
            continue  # a type the model lacks; token 0 is [CLS] in an encoder
        ratio = f"; norm/weight {n / w:.2f}" if w else ""
        published = ("(not in the paper: a decoder's sink)" if t == "first" else
                     PUBLISHED[0].value if not out else "lower by norm than by weight")
        out.append((f"{LABELS[t]}: share by weight → by norm (all heads)",
                    f"{pct(w)} → {pct(n)}{ratio}", published))
    sep_w, sep_n = res["by_layer"]["weight"]["sep"], res["by_layer"]["norm"]["sep"]
    if sep_w is not None:
        top = int(np.argmax(sep_w))
        out.append(("[SEP] in the layer where it gets most weight: weight → norm",
                    f"layer {top + 1}: {pct(sep_w[top])} → {pct(sep_n[top])}",
                    PUBLISHED[1].value))
    return out


def differs(res: dict, model) -> str:
    return (f"The paper read bert-base-uncased on Wikipedia segment pairs; ours reads "
            f"{model.name} on {res['sentences']} short single sentences; the definition is "
            f"theirs (‖αf(x)‖ without b_O), with shares normalised per row so that weight and "
            f"norm compare on one scale.")


def figure(res: dict, fig) -> None:
    """Per layer, each type's share by weight (solid) and by norm (dashed)."""
    ax = fig.subplots(1, 1)
    for k, t in enumerate(TYPES):
        w, n = res["by_layer"]["weight"][t], res["by_layer"]["norm"][t]
        if w is None or (t == "first" and res["by_layer"]["weight"]["cls"] is not None):
            continue  # token 0 is [CLS] in an encoder: drawn once
        x = range(1, len(w) + 1)
        color = f"C{k}"
        ax.plot(x, w, color=color, marker="o", label=f"{LABELS[t]} weight")
        ax.plot(x, n, color=color, marker="s", linestyle="--", label=f"{LABELS[t]} norm")
    ax.set(xlabel="layer", ylabel="mean share of a row", ylim=(0, 1),
           title="Weight α vs norm ‖αf(x)‖ per token type")
    ax.legend(ncol=2, fontsize="small")
