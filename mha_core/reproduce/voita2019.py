"""Voita et al. 2019, "Analyzing Multi-Head Self-Attention: Specialized Heads Do the Heavy
Lifting, the Rest Can Be Pruned": how confident each head is, and which heads are positional
or point to rare words.

Per head (L, H), pooled over every query row of every sentence (rows that can see at least two
keys: a decoder's first row cannot):
    confidence   the mean of each row's largest weight
    prev_top     the share of rows i >= 1 whose largest weight is on token i-1
    next_top     the share of rows i <= T-2 whose largest weight is on token i+1 (encoders)
    positional   prev_top or next_top >= POSITIONAL (their "90 % of the time")
    rare_top     the share of rows whose largest weight is on the sentence's least frequent
                 token in the corpus (token ids counted over the corpus's sentences, special
                 tokens left out; ties all count), among rows that can see one
    rare_chance  what a head that picks a visible key at random would score
    rare heads   rare_top >= RARE
"""

from collections import Counter

import numpy as np

from .common import (
    Paper,
    Published,
    head_label,
    heads_where,
    listed,
    pct,
    rounded,
    visible_keys,
)
from .corpus import MAX_TOKENS, encode_corpus

PAPER = Paper("voita2019", "Voita et al. 2019, Analyzing Multi-Head Self-Attention",
              "arXiv:1905.09418, ACL 2019", "6-layer × 8-head Transformer NMT encoder",
              "WMT (En–Ru, En–De, En–Fr) and OpenSubtitles")
PANELS = 3  # the figure's panels side by side
PUBLISHED = (
    Published("positional heads (max at ±1 in ≥ 90 % of tokens)",
              "present in every model; among the most confident heads (qualitative)"),
    Published("rare-word head", "a first-layer head points to the least frequent tokens "
                                "(qualitative)"),
    Published("pruning", "38 of 48 encoder heads pruned for −0.15 BLEU (see michel2019 for "
                         "pruning here)"),
)
POSITIONAL = 0.9
RARE = 0.5


def sentence_counts(att: np.ndarray, ids, special, freq: Counter, decoder: bool) -> dict:
    """One sentence's maps (L, H, T, T) -> sums and row counts (L, H) for each statistic."""
    T = att.shape[-1]
    seen = visible_keys(T, decoder)
    choice = seen.sum(-1) >= 2  # (T,)
    top = att.argmax(-1)  # (L, H, T)
    rows = np.arange(T)
    words = [i for i in range(T) if not special[i]]
    least = min(freq[ids[i]] for i in words)
    rare = np.array([not special[i] and freq[ids[i]] == least for i in range(T)])  # (T,)
    sees_rare = choice & (seen & rare).any(-1)  # (T,)
    has_next = rows <= T - 2
    return {
        "confidence": (att.max(-1)[..., choice].sum(-1), choice.sum()),
        "prev_top": ((top == rows - 1)[..., rows >= 1].sum(-1), T - 1),
        "next_top": ((top == rows + 1)[..., has_next].sum(-1), 0 if decoder else T - 1),
        "rare_top": (rare[top][..., sees_rare].sum(-1), sees_rare.sum()),
        "rare_chance": (((seen & rare).sum(-1) / seen.sum(-1))[sees_rare].sum(), sees_rare.sum()),
    }


def run(model, corpus, progress=None) -> dict:
    kept, skipped = encode_corpus(model, corpus.texts, MAX_TOKENS, min_tokens=3)
    freq = Counter(int(t) for _, enc in kept
                   for t, s in zip(enc.input_ids.tolist(), enc.special) if not s)
    sums, counts = {}, {}
    for k, (_, enc) in enumerate(kept):
        att = model.attend_encoded(enc).attentions.double().numpy()  # (L, H, T, T)
        part = sentence_counts(att, enc.input_ids.tolist(), enc.special, freq, model.is_decoder)
        for name, (total, n) in part.items():
            sums[name] = sums.get(name, 0) + total
            counts[name] = counts.get(name, 0) + n
        if progress:
            progress(k + 1, len(kept))
    if not kept:
        raise ValueError("no sentence of the corpus fits (all too long, or under 3 tokens)")
    L, H = model.config.num_hidden_layers, model.config.num_attention_heads
    heads = {name: sums[name] / counts[name] if counts[name] else np.full((L, H), np.nan)
             for name in sums}  # (L, H) each; next_top is NaN for a decoder
    chance = float(np.mean(heads.pop("rare_chance")))
    positional = np.fmax(heads["prev_top"], heads["next_top"]) >= POSITIONAL
    order = np.argsort(-heads["rare_top"], axis=None, kind="stable")[:3]
    conf = heads["confidence"]
    return {"sentences": len(kept), "skipped": skipped,
            "heads": {name: rounded(v) for name, v in heads.items()},
            "positional_heads": heads_where(positional),
            "rare_heads": heads_where(heads["rare_top"] >= RARE),
            "rare_chance": rounded(chance),
            "top_rare": [[head_label(i // H, i % H), rounded(heads["rare_top"].ravel()[i])]
                         for i in order],
            "confidence_positional": rounded(conf[positional].mean()) if positional.any()
            else None,
            "confidence_other": rounded(conf[~positional].mean()) if (~positional).any()
            else None}


def rows(res: dict, model) -> list:
    pos = res["positional_heads"]
    conf = (f"; mean confidence {res['confidence_positional']:.2f} vs "
            f"{res['confidence_other']:.2f} for the rest" if pos and res["confidence_other"]
            is not None else "")
    top = ", ".join(f"{h} {pct(v)}" for h, v in res["top_rare"])
    return [(PUBLISHED[0].measure,
             listed(pos, model.config.num_hidden_layers * model.config.num_attention_heads) + conf,
             PUBLISHED[0].value),
            (f"{PUBLISHED[1].measure} (rare_top ≥ {100 * RARE:.0f} %)",
             f"{len(res['rare_heads'])}; the top: {top} (chance {pct(res['rare_chance'])})",
             PUBLISHED[1].value),
            (PUBLISHED[2].measure, "not measured here", PUBLISHED[2].value)]


def differs(res: dict, model) -> str:
    return (f"The paper read a 6 × 8 NMT encoder trained on WMT and named rare-word heads by "
            f"relevance (LRP) and inspection; ours reads {model.name} on {res['sentences']} "
            f"sentences, with word frequency counted in that small corpus (ties count) and the "
            f"thresholds stated ({100 * POSITIONAL:.0f} % positional, {100 * RARE:.0f} % rare).")


def figure(res: dict, fig) -> None:
    """Heat maps over layers × heads: confidence, the larger of prev_top/next_top, rare_top."""
    axes = fig.subplots(1, 3)
    prev = np.array(res["heads"]["prev_top"], dtype=float)
    nxt = np.array(res["heads"]["next_top"], dtype=float)
    maps = (("confidence", np.array(res["heads"]["confidence"], dtype=float)),
            ("on ±1 (positional)", np.fmax(prev, nxt)),
            ("on the rarest token", np.array(res["heads"]["rare_top"], dtype=float)))
    for ax, (title, m) in zip(axes, maps):
        im = ax.imshow(m, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        L, H = m.shape
        ax.set(title=title, xlabel="head", ylabel="layer",
               xticks=range(0, H, max(1, H // 6)), yticks=range(0, L, max(1, L // 10)))
        ax.set_xticklabels([str(h + 1) for h in range(0, H, max(1, H // 6))])
        ax.set_yticklabels([str(i + 1) for i in range(0, L, max(1, L // 10))])
    fig.colorbar(im, ax=axes, shrink=0.8)
