"""Clark et al. 2019, "What Does BERT Look At? An Analysis of BERT's Attention": where each
head's attention goes, on average, and which heads track syntax.

Per head (L, H arrays), averaged over sentences and, within a sentence, over every query
position i (special tokens included, as the paper does):
    cls, sep, period, comma   sum over j of that type of a_ij
    prev, next                a_{i,i-1} over i >= 1; a_{i,i+1} over i <= T-2
    entropy                   -sum_j a_ij ln a_ij, in nats
    cls_entropy               the [CLS] row's entropy (row 0 of an encoder)
A decoder has no [CLS]/[SEP] and cannot see the next token: those are null. With a CoNLL-U
corpus, the dependency part reuses mha_core.syntax (their protocol, batched).
"""

import numpy as np

from ..syntax import score_treebank
from .common import Paper, Published, heads_where, listed, pct, rounded, token_types
from .corpus import MAX_TOKENS, encode_corpus

PAPER = Paper("clark2019", "Clark et al. 2019, What Does BERT Look At?",
              "arXiv:1906.04341, BlackboxNLP 2019", "bert-base-uncased",
              "1,000 Wikipedia segments of ≤ 128 tokens, [CLS] p1 [SEP] p2 [SEP]")
PANELS = 2  # the figure's panels side by side
PUBLISHED = (
    Published("layers where > 50 % of attention goes to [SEP]", "layers 6–10 of 12"),
    Published("heads with > 50 % on the previous token", "4 (layers 2, 4, 7, 8)"),
    Published("heads with > 50 % on the next token", "5 (layers 1, 2, 2, 3, 6)"),
    Published("[CLS] row entropy, last layer", "3.89 nats"),
)
TYPES = ("cls", "sep", "period", "comma")
POSITIONAL = 0.5  # their threshold for a previous/next-token head
MIN_ARCS = 20  # relations reported from the small sample (the paper: 100 on WSJ)
# their Table 1 (best head, accuracy %, fixed-offset baseline %), under the UD relation that
# matches theirs (dobj is obj, nn is compound); prep/pobj/poss have no one-to-one UD relation
SYNTAX = {"all": ("all", "7-6", 34.5, 26.3), "det": ("det", "8-11", 94.3, 51.7),
          "obj": ("dobj", "8-10", 86.8, 40.0), "nsubj": ("nsubj", "8-2", 58.5, 45.5),
          "amod": ("amod", "4-10", 75.6, 68.3), "advmod": ("advmod", "7-6", 48.8, 40.2),
          "aux": ("aux", "4-10", 81.1, 71.5), "mark": ("mark", "8-2", 50.7, 14.5),
          "ccomp": ("ccomp", "8-1", 48.8, 12.4), "compound": ("nn", "4-10", 70.4, 70.2)}


def entropy(att: np.ndarray) -> np.ndarray:
    """Each row's entropy in nats: (..., T, T) -> (..., T)."""
    p = np.clip(att, 0, None)
    return -(p * np.log(np.where(p > 0, p, 1.0))).sum(-1)


def sentence_stats(att: np.ndarray, enc, decoder: bool) -> dict:
    """One sentence's maps (L, H, T, T) -> {statistic: (L, H)} (NaN where it does not apply)."""
    types = token_types(enc)
    nan = np.full(att.shape[:2], np.nan)
    out = {t: att @ types[t].astype(np.float64) for t in TYPES}  # (L, H, T) each
    out = {t: v.mean(-1) for t, v in out.items()}
    if decoder:
        out["cls"] = out["sep"] = nan
    out["prev"] = np.diagonal(att, offset=-1, axis1=-2, axis2=-1).mean(-1)
    out["next"] = nan if decoder else np.diagonal(att, offset=1, axis1=-2, axis2=-1).mean(-1)
    rows = entropy(att)  # (L, H, T)
    out["entropy"] = rows.mean(-1)
    out["cls_entropy"] = rows[..., 0] if types["cls"].any() and not decoder else nan
    return out


def run(model, corpus, progress=None) -> dict:
    """The statistics of every head of `model` over the corpus's sentences."""
    kept, skipped = encode_corpus(model, corpus.texts, MAX_TOKENS)
    decoder = model.is_decoder
    sums, n, log_t = None, 0, 0.0
    for k, (_, enc) in enumerate(kept):
        att = model.attend_encoded(enc).attentions.double().numpy()  # (L, H, T, T)
        stats = sentence_stats(att, enc, decoder)
        sums = stats if sums is None else {s: sums[s] + stats[s] for s in stats}
        n += 1
        log_t += np.log(att.shape[-1])
        if progress:
            progress(k + 1, len(kept))
    if not n:
        raise ValueError("no sentence of the corpus fits (all too long or empty)")
    heads = {s: v / n for s, v in sums.items()}  # (L, H) each
    out = {"sentences": n, "skipped": skipped, "mean_log_T": log_t / n,
           "heads": {s: rounded(v) for s, v in heads.items()},
           "by_layer": {s: rounded(np.nanmean(v, axis=1)) if not np.isnan(v).all() else None
                        for s, v in heads.items()},
           "prev_heads": heads_where(heads["prev"] > POSITIONAL),
           "next_heads": [] if decoder else heads_where(heads["next"] > POSITIONAL),
           "cls_entropy_last": None if decoder else rounded(heads["cls_entropy"][-1].mean())}
    out["sep_layers"] = [] if decoder else [
        i + 1 for i, v in enumerate(heads["sep"].mean(1)) if v > 0.5]
    if corpus.treebank is not None:
        out["syntax"] = syntax(model, [corpus.treebank[i] for i, _ in kept])
    return out


def syntax(model, sentences) -> dict:
    """Clark et al.'s dependency scores (mha_core.syntax) of the relations with MIN_ARCS arcs."""
    try:
        scores = score_treebank(model, sentences)
    except ValueError as e:  # a tokenizer that cannot read pre-split words, say
        return {"skipped": str(e)}
    return {"min_arcs": MIN_ARCS, "used": scores.used, "rows": [
        {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}
        for row in scores.rows(MIN_ARCS)]}


def rows(res: dict, model) -> list:
    """(measure, ours, published) for the markdown table."""
    L = model.config.num_hidden_layers
    sep = res["by_layer"]["sep"]
    if sep is None:
        sep_text = "n/a: a decoder has no [SEP]"
    elif res["sep_layers"]:
        sep_text = f"layers {', '.join(map(str, res['sep_layers']))} of {L}"
    else:
        top = int(np.argmax(sep))
        sep_text = f"none of {L} (most: {pct(sep[top])} in layer {top + 1})"
    out = [(PUBLISHED[0].measure, sep_text, PUBLISHED[0].value)]
    for p, key in ((PUBLISHED[1], "prev_heads"), (PUBLISHED[2], "next_heads")):
        text = ("n/a: a decoder cannot see the next token"
                if key == "next_heads" and model.is_decoder else listed(res[key]))
        out.append((p.measure, text, p.value))
    ent = res["cls_entropy_last"]
    out.append((PUBLISHED[3].measure,
                "n/a: no [CLS]" if ent is None else
                f"{ent:.2f} nats (uniform over the sentence: {res['mean_log_T']:.2f})",
                PUBLISHED[3].value))
    for row in res.get("syntax", {}).get("rows", []):
        if row["rel"] in SYNTAX:
            theirs, head, acc, base = SYNTAX[row["rel"]]
            out.append((f"syntax: {row['rel']} ({row['n']} arcs), best head",
                        f"{100 * row['acc']:.1f} % (L{row['layer']}-H{row['head']}; "
                        f"offset baseline {100 * row['baseline']:.1f} %)",
                        f"{acc} % ({theirs}, head {head}; baseline {base} %)"))
    return out


def differs(res: dict, model) -> str:
    T = np.exp(res["mean_log_T"])
    ours = ("a decoder: no [CLS] or [SEP], and no next token in view" if model.is_decoder else
            f"one [SEP] each, so chance on [SEP] is ~1/{T:.0f}, not 1/64")
    return (f"The paper read bert-base-uncased (12 × 12 heads) on 1,000 Wikipedia segment pairs "
            f"of up to 128 tokens with two [SEP]s; ours reads {model.name} on "
            f"{res['sentences']} short single sentences (~{T:.0f} tokens; {ours}); the syntax "
            f"scores use UD relations, not Stanford dependencies on WSJ.")


def figure(res: dict, fig) -> None:
    """Left: mean share per layer on [CLS], [SEP], "." and ","; right: every head's mean row
    entropy per layer, and the [CLS] row's."""
    left, right = fig.subplots(1, 2)
    for t in TYPES:
        v = res["by_layer"][t]
        if v is not None:
            left.plot(range(1, len(v) + 1), v, marker="o", label={"cls": "[CLS]", "sep": "[SEP]",
                                                                   "period": "\".\"",
                                                                   "comma": "\",\""}[t])
    left.set(xlabel="layer", ylabel="mean attention", title="Where attention goes", ylim=(0, 1))
    left.legend()
    ent = np.array(res["heads"]["entropy"], dtype=float)  # (L, H)
    L, H = ent.shape
    right.scatter(np.repeat(np.arange(1, L + 1), H), ent.ravel(), s=10, label="each head")
    cls = np.array(res["heads"]["cls_entropy"], dtype=float)
    if not np.isnan(cls).all():
        right.scatter(np.repeat(np.arange(1, L + 1), H), cls.ravel(), s=10, marker="x",
                      label="[CLS] row")
    right.set(xlabel="layer", ylabel="entropy (nats)", title="Row entropy per head")
    right.legend(loc="best")
