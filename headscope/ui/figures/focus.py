"""Where one focus token attends: its top key in every head of every layer (a grid), and how
each head of one layer splits its attention over the keys (stacked bars).

Shape letters: L layers, H heads, T tokens.
"""

import numpy as np

from mha_core.heads import head_labels, layer_names

from ..labels import label
from ..labels import labels as labels_of
from ..style import FONT, OTHER_COLOR, PALETTE, SPECIAL_COLOR, SPECIAL_COLORS
from .base import centred_title, figure


def token_colors(labels, special, words: dict | None = None) -> list:
    """One colour per token, shared by focus grid and bars: the same word (any case) gets the
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


def key_segments(rows, labels, special, min_weight=0.05) -> list:
    """How each head of one layer splits one token's attention over the keys: a list of
    (name, colour, values (H,)), one per word (a word that occurs twice is one target, its
    weights added, in one colour), in sentence order; words under min_weight in every head join
    a last (None, OTHER_COLOR, rest): "other keys". rows: (H, T). Names are raw tokens."""
    rows = np.asarray(rows, dtype=np.float32)  # (H, T)
    colors = token_colors(labels, special)
    groups = {}  # word (any case; special tokens by name) -> its positions, in sentence order
    for t, word in enumerate(labels):
        groups.setdefault(str(word).lower(), []).append(t)
    out, shown = [], np.zeros(rows.shape[0], dtype=np.float32)
    for positions in groups.values():
        y = rows[:, positions].sum(axis=1)  # (H,)
        if y.max() < min_weight:
            continue
        shown += y
        out.append((str(labels[positions[0]]), colors[positions[0]], y))
    if len(out) < len(groups):
        out.append((None, OTHER_COLOR, rows.sum(axis=1) - shown))  # (H,)
    return out


def focus_bars(rows, labels, special, focus_label, layer, min_weight=0.05, height=340,
               value="weight"):
    """One layer, one query token: for each head a stacked bar of how its attention (summing to
    1) splits over the keys (key_segments). rows: (H, T); layer: its 0-based index (labels count
    from 1, as everywhere on the pages). Words under min_weight in every head join "other".
    value: what the rows are (the y axis title), e.g. "share of ‖αf‖" for norm-weighted rows."""
    H = np.asarray(rows).shape[0]
    heads = head_labels(H)
    data = []
    for name, color, y in key_segments(rows, labels, special, min_weight):
        other = name is None
        data.append(dict(type="bar", x=heads, y=y, name="other" if other else label(name),
                         marker_color=color,
                         hovertemplate="%{x}: other keys %{y:.3f}<extra></extra>" if other else
                         "%{x} → %{fullData.name}: %{y:.3f}<extra></extra>"))
    layout = dict(
        barmode="stack", height=height, font=FONT, margin=dict(l=60, r=10, t=50, b=30),
        title=centred_title(f"Layer {layer + 1}: where “{label(focus_label)}” attends, per "
                            "head"),
        xaxis=dict(fixedrange=True), yaxis=dict(range=[0, 1], title=dict(text=value),
                                                fixedrange=True),
        legend=dict(title=dict(text="key"), traceorder="normal"))
    return figure(data, layout)
