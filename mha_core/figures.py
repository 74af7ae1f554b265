"""Plotly figure builders: numpy in, go.Figure out. No Streamlit, no torch.

Figures are written as plain dicts and validated once by go.Figure: on a 12-head grid that is
~10 ms, where make_subplots with add_trace(row=, col=) took ~200 ms of every rerun.

Maps are (T, T) or (H, T, T) arrays: row = query, column = key. Labels are the tokens (or words)
in order. Every builder escapes its labels, so user text is drawn literally, never as markup.
"""

import html
import unicodedata

import numpy as np
import plotly.graph_objects as go

COLORSCALE = "Blues"  # one fixed scale, 0 to 1, shared by every map so maps can be compared
FONT = dict(size=13)
HOVER = "%{y} → %{x}: %{z:.3f}<extra></extra>"  # query → key: weight
# 24 distinguishable colours for token identities (focus token views); they repeat after 24
# (no greys: grey means a special token or "other")
PALETTE = ("#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #bcbd22 #17becf #393b79 "
           "#e7ba52 #637939 #ad494a #7b4173 #3182bd #e6550d #31a354 #756bb1 #9c9ede #fdae6b "
           "#a1d99b #ce6dbd #8ca252 #843c39").split()
SPECIAL_COLOR = "#c8c8c8"  # [CLS]/[SEP]: neutral, so heads that point at words stand out
ZWSP = "\u200b"


def visible(s: str) -> str:
    """A token as plain text a reader can see: control characters made visible (NUL -> ␀) and
    format characters such as right-to-left overrides shown as <U+202E>."""
    out = []
    for ch in s:
        if ch < " ":
            ch = chr(0x2400 + ord(ch))  # the Control Pictures block: ␀ ␁ ... ␟
        elif ch == "\x7f":
            ch = "␡"
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            ch = f"<U+{ord(ch):04X}>"
        out.append(ch)
    return "".join(out) or "␣"


def clean_label(s: str) -> str:
    """A token as plotly text: visible(), then &, < and > escaped, so plotly's pseudo-HTML never
    turns user text into markup."""
    return html.escape(visible(s), quote=False)


def axis_labels(labels) -> list:
    """Clean labels made unique, so a categorical axis keeps repeated tokens ("the" twice) apart.
    Repeats get invisible zero-width spaces; tick text and hover still read as the token."""
    seen, out = {}, []
    for s in map(clean_label, labels):
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.append(s + ZWSP * n)
    return out


def plain_label(axis_label: str) -> str:
    """The inverse of axis_labels for one label (what a reader sees)."""
    return html.unescape(axis_label.replace(ZWSP, ""))


def _heatmap_trace(z, ticks, hover=HOVER, axes=("x", "y"), **kw) -> dict:
    z = np.asarray(z, dtype=np.float32)  # float32: half the bytes of float64 on the wire
    return dict(type="heatmap", z=z, x=ticks, y=ticks, xaxis=axes[0], yaxis=axes[1],
                coloraxis="coloraxis", hovertemplate=hover, **kw)


def _ticks(ticks, size=12) -> dict:
    """Every token labelled while that stays legible (plotly skips labels on its own beyond)."""
    if len(ticks) <= 48:
        return dict(tickmode="array", tickvals=ticks, tickfont=dict(size=size))
    return dict(tickfont=dict(size=size))


def _label_room(ticks, size) -> int:
    """Pixels for the longest tick label: a fixed margin instead of plotly's automargin, which
    lays a figure out again and again in the browser (slower on every rerun)."""
    longest = max((len(plain_label(t)) for t in ticks), default=1)
    return int(12 + 0.62 * size * min(longest, 24))


def _coloraxis(zmax=1.0, title="weight", show=True) -> dict:
    return dict(colorscale=COLORSCALE, cmin=0.0, cmax=zmax, showscale=show,
                colorbar=dict(title=dict(text=title), thickness=10, len=0.6))


def _title(text, size=16) -> dict:
    return dict(text=text, x=0.5, xanchor="center", font=dict(size=size))


def heatmap(z, labels, title="", height=420, zmax=1.0, hover=HOVER, show_scale=True):
    """One attention map (T, T) with token labels on both axes, queries as rows (top to bottom),
    keys as columns, a fixed 0..zmax colour scale and "query → key: weight" on hover."""
    ticks = axis_labels(labels)
    room = _label_room(ticks, 12)
    layout = dict(
        title=_title(title), height=height, margin=dict(l=room, r=10, t=50, b=room),
        font=FONT, coloraxis=_coloraxis(zmax, show=show_scale),
        xaxis=dict(type="category", tickangle=-90, **_ticks(ticks)),
        yaxis=dict(type="category", autorange="reversed", **_ticks(ticks)))
    return go.Figure(dict(data=[_heatmap_trace(z, ticks, hover)], layout=layout))


def head_grid(maps, labels, titles, cols=3, height=None, selected=None, zmax=1.0):
    """Every head of one layer in one figure: (H, T, T) maps in a grid of `cols` columns, one
    colour scale for all. titles: H strings. selected: a head index to outline, or None.
    One figure (not H charts) keeps a rerun to one plotly render in the browser."""
    maps = np.asarray(maps, dtype=np.float32)
    H = maps.shape[0]
    rows = -(-H // cols)
    ticks = axis_labels(labels)
    hs, vs = 0.03, 0.2 / rows  # gaps between cells, as fractions of the plotting area
    w, h = (1 - (cols - 1) * hs) / cols, (1 - (rows - 1) * vs) / rows
    size = 10 if len(ticks) <= 16 else 8
    tick, room = _ticks(ticks, size=size), _label_room(ticks, size)
    data, annotations = [], []
    layout = dict(height=height or 140 * rows + 60 + room,
                  margin=dict(l=room, r=10, t=30, b=room),
                  coloraxis=_coloraxis(zmax), font=FONT, showlegend=False)
    for i in range(H):
        r, c = divmod(i, cols)
        x0, y1 = c * (w + hs), 1 - r * (h + vs)
        n = "" if i == 0 else str(i + 1)
        data.append(_heatmap_trace(maps[i], ticks, axes=(f"x{n}", f"y{n}"), name=f"head {i}"))
        # The heads share one token list: keys are labelled under the bottom row, queries left
        # of the first column, so the maps themselves get the room.
        xd, yd = [max(x0, 0), min(x0 + w, 1)], [max(y1 - h, 0), min(y1, 1)]  # in [0, 1]
        layout[f"xaxis{n}"] = dict(domain=xd, anchor=f"y{n}", type="category",
                                   tickangle=-90, showgrid=False, ticks="",
                                   showticklabels=i + cols >= H, **tick)
        layout[f"yaxis{n}"] = dict(domain=yd, anchor=f"x{n}", type="category",
                                   autorange="reversed", showgrid=False, ticks="",
                                   showticklabels=c == 0, **tick)
        annotations.append(dict(text=titles[i], x=x0 + w / 2, y=y1, xref="paper",
                                yref="paper", xanchor="center", yanchor="bottom",
                                showarrow=False, font=dict(size=13)))
    layout["annotations"] = annotations
    if selected is not None and 0 <= selected < H:
        n = "" if selected == 0 else str(selected + 1)
        layout["shapes"] = [dict(type="rect", xref=f"x{n} domain", yref=f"y{n} domain",
                                 x0=-0.02, x1=1.02, y0=-0.02, y1=1.02,
                                 line=dict(color="#d62728", width=3))]
    return go.Figure(dict(data=data, layout=layout))


def token_colors(special) -> list:
    """One colour per token position (special tokens grey), shared by focus grid and bars."""
    return [SPECIAL_COLOR if s else PALETTE[i % len(PALETTE)] for i, s in enumerate(special)]


def focus_grid(top, weight, labels, special, focus_label, height=None):
    """Where one query token attends in every head of every layer: an (L, H) grid whose cell is
    coloured by the top key (the argmax of that head's row) and labelled with it.
    top: (L, H) key indices; weight: (L, H) the weight on that key."""
    top, weight = np.asarray(top), np.asarray(weight, dtype=np.float32)
    L, H = top.shape
    keys = sorted(set(top.ravel().tolist()))  # the distinct targets, in sentence order
    k_of = {t: k for k, t in enumerate(keys)}
    z = np.vectorize(k_of.get)(top).astype(np.float32)  # (L, H) colour index
    colors = token_colors(special)
    n = len(keys)
    scale = []  # a stepwise colour scale: colour k fills [k/n, (k+1)/n]
    for k, t in enumerate(keys):
        scale += [[k / n, colors[t]], [(k + 1) / n, colors[t]]]
    short = [html.escape(x if len(x) <= 8 else x[:7] + "…", quote=False)
             for x in map(visible, labels)]  # cell text; the hover shows the whole token
    text = [[short[t] for t in row] for row in top.tolist()]
    full = np.array([clean_label(x) for x in labels], dtype=object)[top]  # (L, H)
    focus = clean_label(focus_label)
    trace = dict(
        type="heatmap", z=z, zmin=-0.5, zmax=n - 0.5, colorscale=scale, showscale=False,
        x=[f"h{h}" for h in range(H)], y=[f"L{i}" for i in range(L)],
        text=text, texttemplate="%{text}", textfont=dict(size=12),  # colour: plotly's contrast
        customdata=np.stack([full, weight.round(3)], axis=-1), xgap=2, ygap=2,
        # user text goes in as data, never into the template itself
        hovertemplate="%{y} %{x} → %{customdata[0]}: %{customdata[1]:.3f}<extra></extra>")
    layout = dict(
        title=_title(f"Top key of “{focus}” in every head"), font=FONT,
        height=height or 90 + 36 * L, margin=dict(l=40, r=10, t=50, b=30),
        xaxis=dict(type="category"), yaxis=dict(autorange="reversed", type="category"))
    return go.Figure(dict(data=[trace], layout=layout))


def focus_bars(rows, labels, special, focus_label, layer, min_weight=0.05, height=340):
    """One layer, one query token: for each head a stacked bar of how its attention (summing to
    1) splits over the keys. rows: (H, T). Keys under min_weight in every head join "other"."""
    rows = np.asarray(rows, dtype=np.float32)
    H, T = rows.shape
    names = axis_labels(labels)
    colors = token_colors(special)
    heads = [f"h{h}" for h in range(H)]
    shown = [t for t in range(T) if rows[:, t].max() >= min_weight]
    data = [dict(type="bar", x=heads, y=rows[:, t], name=names[t], marker_color=colors[t],
                 hovertemplate="%{x} → %{fullData.name}: %{y:.3f}<extra></extra>")
            for t in shown]
    rest = rows.sum(axis=1) - rows[:, shown].sum(axis=1)  # (H,)
    if len(shown) < T:
        data.append(dict(type="bar", x=heads, y=rest, name="other", marker_color="#dddddd",
                         hovertemplate="%{x}: other keys %{y:.3f}<extra></extra>"))
    layout = dict(
        barmode="stack", height=height, font=FONT, margin=dict(l=60, r=10, t=50, b=30),
        title=_title(f"Layer {layer}: where “{clean_label(focus_label)}” attends, per head"),
        yaxis=dict(range=[0, 1], title=dict(text="weight")),
        legend=dict(title=dict(text="key"), traceorder="normal"))
    return go.Figure(dict(data=data, layout=layout))
