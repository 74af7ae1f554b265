"""Where one focus token attends: its top key in every head of every layer (a grid; Two
readings). The Explorer draws its focus grid and bars in the browser (attention/explore.js).

Shape letters: L layers, H heads, T tokens.
"""

import numpy as np

from mha_core.heads import head_labels, layer_names

from ..labels import label
from ..labels import labels as labels_of
from ..style import FONT, PALETTE, SPECIAL_COLOR, SPECIAL_COLORS
from .base import centred_title, figure


def token_colors(labels, special, words: dict | None = None) -> list:
    """One colour per token of a focus grid (the browser's tokenColors follows the same rule,
    tests/unit/test_explore_js.py): the same word (any case) gets the
    same colour wherever it occurs; [CLS] and [SEP] get two distinct greys. words: a colour
    index per lower-cased word shared by several figures (two sentences: a word keeps its
    colour in both); words it lacks are added in order of first occurrence."""
    words = dict(words or {})  # word -> its colour index, in order of first occurrence
    out = []
    for t, s in zip(labels, special):
        if s:
            out.append(SPECIAL_COLORS.get(t, SPECIAL_COLOR))
        else:
            out.append(PALETTE[words.setdefault(str(t).lower(), len(words)) % len(PALETTE)])
    return out


def focus_grid(top, weight, labels, special, focus_label, height=None, title=None,
               words: dict | None = None, max_chars: int = 8):
    """Where one query token attends in every head of every layer: an (L, H) grid whose cell is
    coloured by the top key (the argmax of that head's row) and labelled with it. Rows and
    columns are labelled L1.., H1.. (numbered from 1).
    top: (L, H) key indices; weight: (L, H) the weight on that key; words: see token_colors;
    max_chars: the longest cell text (narrow cells: fewer, so no label runs into the next)."""
    top, weight = np.asarray(top), np.asarray(weight, dtype=np.float32)
    L, H = top.shape
    keys = sorted(set(top.ravel().tolist()))  # the distinct targets, in sentence order
    k_of = {t: k for k, t in enumerate(keys)}
    z = np.vectorize(k_of.get)(top).astype(np.float32)  # (L, H) colour index
    colors = token_colors(labels, special, words)
    n = len(keys)
    scale = []  # a stepwise colour scale: colour k fills [k/n, (k+1)/n]
    for k, t in enumerate(keys):
        scale += [[k / n, colors[t]], [(k + 1) / n, colors[t]]]
    short = labels_of(labels, max_chars=max_chars)  # cell text; the hover shows the whole token
    text = [[short[t] for t in row] for row in top.tolist()]
    full = np.array(labels_of(labels), dtype=object)[top]  # (L, H)
    focus = label(focus_label)
    trace = dict(
        type="heatmap", z=z, zmin=-0.5, zmax=n - 0.5, colorscale=scale, showscale=False,
        x=head_labels(H), y=layer_names(L),  # numbered from 1
        text=text, texttemplate="%{text}", textfont=dict(size=12),  # colour: plotly's contrast
        customdata=np.stack([full, weight.round(3)], axis=-1), xgap=2, ygap=2,
        # user text goes in as data, never into the template itself
        hovertemplate="%{y} %{x} → %{customdata[0]}: %{customdata[1]:.3f}<extra></extra>")
    layout = dict(
        title=centred_title(f"{label(title) + ': ' if title else ''}Top key of “{focus}” in "
                            "every head"),
        font=FONT,
        height=height or 90 + 36 * L, margin=dict(l=40, r=10, t=50, b=30),
        xaxis=dict(type="category", fixedrange=True),
        yaxis=dict(autorange="reversed", type="category", fixedrange=True))
    return figure([trace], layout)
