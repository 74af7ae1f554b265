"""What the Explorer component is sent once per sentence: every layer's token-level maps, so that
every view change (layer, head, focus tokens, whole words, hidden [CLS]/[SEP], by norm, the
token window) is drawn in the browser without asking the server. numpy in, a plain dict out; no
Streamlit. The browser derives the shown maps (explore.js; tests/unit/test_explore_js.py
compares them with numpy on Model.attend and transformers' own projections).

Shape letters: L layers, H heads, T tokens, F focus tokens (long texts only).

Maps travel as 16-bit levels, not 8 (the colours need 8 bits, the hover's third decimal and the
CSV/JSON of the shown map more), and each row's ordinary tokens relative to their own sum
(`rows`): hiding [CLS]/[SEP] divides a row by what is left of it, which in a head that looks at
[SEP] is often a thousandth, and levels of the whole row would leave that remainder a few
levels. So a row is sent as its special tokens' weights (levels of 1), its ordinary tokens'
weights divided by their sum (levels of that sum) and the sum (float32): every view, hidden or
not, is within 1/65535 of the row it shows. Bytes per sentence: docs/limits.md.
"""

import numpy as np

from .payload import _common, pack

# Up to this many tokens every layer travels at once and every view change is local; a longer
# text gets one layer at a time (a layer or focus change asks the server, with the wait shown)
LOCAL_TOKENS = 128


def explorer_payload(att, single, labels, special, punct, words, word_punct, groups, maskable,
                     value_norms=None, layer: int = 0, focus=None, view=None, notes=None,
                     default_focus=(0, 0), names=("[CLS]", "[SEP]"), one_head=None,
                     palette=(), special_colors=None, other_color="#dddddd",
                     scale: float = 1.0, causal: bool = False) -> dict:
    """att (L, H, T, T) weights; single (L, T, T) the summed head; value_norms (L, H, T) each
    head's ||f(x_j)|| (Kobayashi et al. 2020), or None (no By norm): the browser makes the norm
    maps ||alpha_ij f(x_j)|| = alpha_ij ||f(x_j)|| (mha_core.norms.norm_maps) from the weights,
    so they travel as L*H*T numbers, not L*H*T*T. labels, special, punct:
    T tokens and flags; words: the word labels, groups: each word's token positions, word_punct:
    each word's punctuation flag (whole words). maskable: per token, the position a click on it
    masks (a word's first piece; None: cannot be masked).

    A text longer than LOCAL_TOKENS sends layer `layer` only, plus the rows of the focus tokens
    (focus: token positions) in every layer, so the focus grid and bars still show every layer.
    view: the view the server imposes (a link, an example), with its `seq`; notes: per-layer
    sentences (one_head: "Is one head enough?" per layer); default_focus: the first focus
    (token level, word level); names: this model's [CLS] and [SEP]. causal: a decoder's maps
    (token i sees only tokens j <= i): the browser draws every cell above the diagonal as not
    attendable (causal.js), told here rather than guessed from zeros (a head can put 0 on a
    token it may see)."""
    att = np.asarray(att, dtype=np.float32)  # (L, H, T, T)
    single = np.asarray(single, dtype=np.float32)  # (L, T, T)
    L, H, T, _ = att.shape
    partial = T > LOCAL_TOKENS
    sent = [int(layer)] if partial else list(range(L))
    ordinary = ~np.asarray(special, dtype=bool)  # (T,)
    maps = np.concatenate([att[sent], single[sent][:, None]], axis=1)  # (L', H + 1, T, T)
    out = dict(view="explorer", layers=L, heads=H, sent=sent,
               **rows("maps", maps, ordinary, tril=bool(causal)),
               words=[str(w) for w in words], groups=[[int(t) for t in g] for g in groups],
               punct=[bool(p) for p in punct], word_punct=[bool(p) for p in word_punct],
               maskable=[None if m is None else int(m) for m in maskable],
               default_focus=[int(f) for f in default_focus], names=[str(n) for n in names],
               impose=None if view is None else dict(view), one_head=one_head,
               notes=None if notes is None else [str(n) for n in notes], local=LOCAL_TOKENS,
               palette=list(palette), special_colors=dict(special_colors or {}),
               other_color=str(other_color), norms=value_norms is not None, causal=bool(causal),
               **_common(labels, special, scale))
    if value_norms is not None:
        out["vnorm"] = pack(np.asarray(value_norms, dtype=np.float32), "f4")  # (L, H, T)
    if partial:
        f = sorted({int(t) for t in (focus or [0]) if 0 <= int(t) < T}) or [0]
        out["frows_at"] = f
        out.update(rows("frows", att[:, :, f], ordinary))  # (L, H, F, T)
    return out


def rows(name: str, a, ordinary, tril: bool = False) -> dict:
    """Rows (..., T) as {name: levels, name_ns: the ordinary tokens' sums (...)}: the special
    tokens' weights as they are, the ordinary ones divided by their row's sum (see above).
    tril: causal maps (..., T, T), sent as their lower triangles (pack)."""
    a = np.asarray(a, dtype=np.float32)
    total = a[..., ordinary].sum(axis=-1)  # (...,)
    scaled = a.copy()
    scaled[..., ordinary] = a[..., ordinary] / np.where(total > 0, total, 1.0)[..., None]
    return {name: pack(scaled, "u2", tril), f"{name}_ns": pack(total, "f4")}
