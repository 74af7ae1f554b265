"""Plotly figure builders: numpy in, go.Figure out. No Streamlit, no torch.

Axes use numeric positions with tick labels (tickvals/ticktext), so repeated tokens stay
separate rows instead of being merged into one category by plotly.
Shape letters: L layers, H heads, T tokens, G words.

Figures are written as plain dicts: on a 12-head grid that is ~10 ms, where make_subplots with
add_trace(row=, col=) took ~200 ms of every rerun. The Explorer's builders also skip plotly's
validation (_figure); the tests validate their output.

Maps are (T, T) or (H, T, T) arrays: row = query, column = key. Labels are the tokens (or words)
in order. Every builder escapes its labels, so user text is drawn literally, never as markup.
"""

import html
import unicodedata

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sequential
from plotly.subplots import make_subplots

# One fixed scale, 0 to 1, shared by every map so maps can be compared: plotly.py's "Blues",
# spelled out, since the Explorer's figures skip the validation that would spell it out (and
# plotly.js's own "Blues" runs the other way: dark for 0)
COLORSCALE = [[i / (len(sequential.Blues) - 1), c] for i, c in enumerate(sequential.Blues)]
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


def _figure(data, layout) -> go.Figure:
    """The Explorer's figures, built from plain dicts WITHOUT plotly's validation: validating
    took ~35 ms of every rerun on the server (py-spy), a quarter of the script. The tests
    validate every builder's output instead (tests/unit/test_figures_valid.py)."""
    return go.Figure(dict(data=data, layout=layout), _validate=False)


def for_projector(fig, scale: float) -> go.Figure:
    """A copy of any figure for a projector: its height, margins and every font (text, titles,
    tick labels, annotations, cell text) `scale` times larger. Worked on the plain dict, not
    validated again (fast: ~2 ms for the 12-head grid)."""
    d = fig.to_dict()
    lay = d.setdefault("layout", {})
    base = lay.get("font", {}).get("size") or FONT["size"]

    def bigger(obj: dict, key: str = "font", default=base):
        font = obj.get(key) or {}  # a new dict: builders may share one font between axes
        obj[key] = {**font, "size": round((font.get("size") or default) * scale, 1)}

    bigger(lay)
    bigger(lay.setdefault("title", {}), default=16)
    if lay.get("height"):
        lay["height"] = int(lay["height"] * scale)
    m = lay.setdefault("margin", {})
    for side, default in (("l", 80), ("b", 80), ("t", 100)):
        m[side] = int((m.get(side) or default) * scale)
    for name, axis in lay.items():
        if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            bigger(axis, "tickfont")
    for note in lay.get("annotations", []):
        bigger(note)
    for trace in d.get("data", []):
        if "textfont" in trace or "texttemplate" in trace or "text" in trace:
            bigger(trace, "textfont")
    return go.Figure(d, _validate=False)


def _title(text, size=16) -> dict:
    return dict(text=text, x=0.5, xanchor="center", font=dict(size=size))


def heatmap(z, labels, title="", height=420, zmax=1.0, hover=HOVER, show_scale=True,
            zoom=True):
    """One attention map (T, T) with token labels on both axes, queries as rows (top to bottom),
    keys as columns, a fixed 0..zmax colour scale and "query → key: weight" on hover.
    zoom=False fixes the axes (no zoom or pan; fewer drag handles for the browser to draw)."""
    ticks = axis_labels(labels)
    room = _label_room(ticks, 12)
    fixed = dict(fixedrange=not zoom)
    layout = dict(
        title=_title(title), height=height, margin=dict(l=room, r=10, t=50, b=room),
        font=FONT, coloraxis=_coloraxis(zmax, show=show_scale),
        xaxis=dict(type="category", tickangle=-90, **fixed, **_ticks(ticks)),
        yaxis=dict(type="category", autorange="reversed", **fixed, **_ticks(ticks)))
    return _figure([_heatmap_trace(z, ticks, hover)], layout)


def head_grid(maps, labels, titles, cols=3, height=None, selected=None, zmax=1.0):
    """Every head of one layer in one figure: (H, T, T) maps tiled `cols` to a row, one colour
    scale for all. titles: H strings. selected: a head index to outline, or None.

    Each head is its own heatmap trace. The tiles of one column share one x axis and the tiles
    of one row one y axis (cols + rows axes, not 2H), and the axes are fixed (no zoom: the
    enlarged head is for a closer look). Plotly draws zoom and pan handles for every tile of
    zoomable axes; without them and with 7 axes instead of 24, a rerun of the whole Explorer
    costs chromium 0.75-0.84 s of CPU instead of 0.95 s. Keys are labelled under the bottom
    row of tiles, queries left of the first column. (One pair of category axes for every
    tile drew the same but broke plotly's hover, which then read another head's weight.)"""
    maps = np.asarray(maps, dtype=np.float32)
    H = maps.shape[0]
    rows = -(-H // cols)
    ticks = axis_labels(labels)
    hs, vs = 0.03, 0.2 / rows  # gaps between tiles, as fractions of the plotting area
    w, h = (1 - (cols - 1) * hs) / cols, (1 - (rows - 1) * vs) / rows
    size = 10 if len(ticks) <= 16 else 8
    tick, room = _ticks(ticks, size=size), _label_room(ticks, size)
    axis = dict(type="category", showgrid=False, ticks="", fixedrange=True, **tick)
    layout = dict(height=height or 140 * rows + 60 + room,
                  margin=dict(l=room, r=10, t=30, b=room),
                  coloraxis=_coloraxis(zmax), font=FONT, showlegend=False)

    def name(i: int) -> str:  # the i-th axis (from 0) is "x", "x2", ... in plotly
        return "" if i == 0 else str(i + 1)

    for c in range(cols):  # keys: one x axis per column of tiles, labelled under the bottom row
        x0 = c * (w + hs)
        layout[f"xaxis{name(c)}"] = dict(domain=[x0, min(x0 + w, 1)], anchor=f"y{rows}",
                                         tickangle=-90, **axis)
    for r in range(rows):  # queries: one y axis per row of tiles, labelled left of the first
        y1 = 1 - r * (h + vs)
        layout[f"yaxis{name(r)}"] = dict(domain=[max(y1 - h, 0), y1], anchor="x",
                                         autorange="reversed", **axis)
    data, annotations = [], []
    for i in range(H):
        r, c = divmod(i, cols)
        data.append(_heatmap_trace(maps[i], ticks, axes=(f"x{name(c)}", f"y{name(r)}"),
                                   name=f"head {i + 1}"))
        annotations.append(dict(text=titles[i], x=c * (w + hs) + w / 2, y=1 - r * (h + vs),
                                xref="paper", yref="paper", xanchor="center", yanchor="bottom",
                                showarrow=False, font=dict(size=13)))
    layout["annotations"] = annotations
    if selected is not None and 0 <= selected < H:
        r, c = divmod(selected, cols)
        layout["shapes"] = [dict(type="rect", xref=f"x{name(c)} domain",
                                 yref=f"y{name(r)} domain", x0=-0.02, x1=1.02, y0=-0.02,
                                 y1=1.02, line=dict(color="#d62728", width=3))]
    return _figure(data, layout)


def token_colors(special) -> list:
    """One colour per token position (special tokens grey), shared by focus grid and bars."""
    return [SPECIAL_COLOR if s else PALETTE[i % len(PALETTE)] for i, s in enumerate(special)]


def focus_grid(top, weight, labels, special, focus_label, height=None, title=None):
    """Where one query token attends in every head of every layer: an (L, H) grid whose cell is
    coloured by the top key (the argmax of that head's row) and labelled with it. Rows and
    columns are labelled L1.., H1.. (numbered from 1).
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
        x=[f"H{h + 1}" for h in range(H)], y=[f"L{i + 1}" for i in range(L)],  # from 1
        text=text, texttemplate="%{text}", textfont=dict(size=12),  # colour: plotly's contrast
        customdata=np.stack([full, weight.round(3)], axis=-1), xgap=2, ygap=2,
        # user text goes in as data, never into the template itself
        hovertemplate="%{y} %{x} → %{customdata[0]}: %{customdata[1]:.3f}<extra></extra>")
    layout = dict(
        title=_title(f"{_esc(title) + ': ' if title else ''}Top key of “{focus}” in every head"),
        font=FONT,
        height=height or 90 + 36 * L, margin=dict(l=40, r=10, t=50, b=30),
        xaxis=dict(type="category", fixedrange=True),
        yaxis=dict(autorange="reversed", type="category", fixedrange=True))
    return _figure([trace], layout)


def focus_bars(rows, labels, special, focus_label, layer, min_weight=0.05, height=340):
    """One layer, one query token: for each head a stacked bar of how its attention (summing to
    1) splits over the keys. rows: (H, T); layer: its 0-based index (labels count from 1, as
    everywhere on the pages). Keys under min_weight in every head join "other"."""
    rows = np.asarray(rows, dtype=np.float32)
    H, T = rows.shape
    names = axis_labels(labels)
    colors = token_colors(special)
    heads = [f"H{h + 1}" for h in range(H)]
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
        title=_title(f"Layer {layer + 1}: where “{clean_label(focus_label)}” attends, per head"),
        xaxis=dict(fixedrange=True), yaxis=dict(range=[0, 1], title=dict(text="weight"),
                                                fixedrange=True),
        legend=dict(title=dict(text="key"), traceorder="normal"))
    return _figure(data, layout)


def _label(s) -> str:
    """Plotly reads a few HTML tags in labels; show < and > as look-alikes instead."""
    return str(s).replace("<", "‹").replace(">", "›")


def _labels(seq) -> list:
    return [_label(s) for s in seq]


# --- Inside MHA and training lab


def matrix_figure(values, rows, cols, title="", fmt=".2f", zmid=0.0, colorscale="RdBu",
                  reverse=True, height=None):
    """One matrix as a heatmap with its numbers written in the cells."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    n_rows, n_cols = values.shape
    fig = go.Figure(go.Heatmap(
        z=values, x=list(range(n_cols)), y=list(range(n_rows)),
        text=[[format(v, fmt) for v in row] for row in values], texttemplate="%{text}",
        textfont={"size": 13}, colorscale=colorscale, zmid=zmid,
        reversescale=reverse and colorscale == "RdBu", showscale=False,
        hovertemplate="row %{y}, col %{x}: %{z:.4f}<extra></extra>"))
    fig.update_xaxes(tickvals=list(range(n_cols)), ticktext=_labels(cols), side="top")
    fig.update_yaxes(tickvals=list(range(n_rows)), ticktext=_labels(rows), autorange="reversed")
    fig.update_layout(title={"text": _label(title), "y": 0.98, "x": 0.0, "font": {"size": 14}},
                      height=height or 90 + 34 * n_rows, margin={"l": 10, "r": 10, "t": 70,
                                                                "b": 10})
    return fig


def slices_figure(reads, title=""):
    """reads (H, D) of 0/1: which input dimension reaches which head."""
    reads = np.asarray(reads, dtype=float)
    H, D = reads.shape
    fig = go.Figure(go.Heatmap(
        z=reads, x=list(range(D)), y=list(range(H)), zmin=0, zmax=1, showscale=False,
        colorscale=[[0, "#f2f2f2"], [1, "#1f77b4"]], xgap=2, ygap=2,
        hovertemplate="head %{y}, input dim %{x}: %{z}<extra></extra>"))
    fig.update_xaxes(title="input dimension", tickvals=list(range(D)),
                     ticktext=[str(d) for d in range(D)])
    fig.update_yaxes(tickvals=list(range(H)), ticktext=[f"head {h + 1}" for h in range(H)],
                     autorange="reversed")
    fig.update_layout(title=_label(title), height=80 + 32 * H,
                      margin={"l": 10, "r": 10, "t": 40, "b": 40})
    return fig


def cost_figure(designs, params, flops, map_bytes, title=""):
    """Bars of params, FLOPs and attention-map memory per design, each relative to the first
    design (so 1 = the cost of one head of d_model)."""
    metrics = {"parameters": params, "FLOPs": flops, "attention-map memory": map_bytes}
    fig = go.Figure()
    for name, vals in metrics.items():
        vals = np.asarray(vals, dtype=float)
        rel = vals / vals[0]
        fig.add_bar(name=name, x=_labels(designs), y=rel, text=[f"{r:.3g}×" for r in rel],
                    textposition="outside")
    fig.update_yaxes(title="× the cost of 1 head of d_model", rangemode="tozero")
    fig.update_layout(barmode="group", title=_label(title), height=380,
                      margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig


def curves_figure(series, title="", ytitle="", xtitle="step", yrange=None, height=320):
    """series: {name: (x, y)} drawn as lines."""
    fig = go.Figure()
    for name, (x, y) in series.items():
        fig.add_scatter(x=np.asarray(x), y=np.asarray(y), mode="lines", name=_label(name))
    fig.update_xaxes(title=xtitle)
    fig.update_yaxes(title=ytitle, range=yrange)
    fig.update_layout(title=_label(title), height=height,
                      margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      legend={"orientation": "h", "y": -0.25})
    return fig


def similarity_figure(mat, title="", zmin=0.0, zmax=1.0, colorscale="Viridis", fmt=".2f"):
    """An (H, H) heads × heads matrix (similarity or distance) with its numbers."""
    mat = np.asarray(mat, dtype=float)
    H = mat.shape[0]
    names = [f"head {h + 1}" for h in range(H)]
    fig = go.Figure(go.Heatmap(
        z=mat, x=list(range(H)), y=list(range(H)), zmin=zmin, zmax=zmax, colorscale=colorscale,
        text=[[format(v, fmt) for v in row] for row in mat], texttemplate="%{text}",
        hovertemplate="%{y} vs %{x}: %{z:.4f}<extra></extra>"))
    fig.update_xaxes(tickvals=list(range(H)), ticktext=names)
    fig.update_yaxes(tickvals=list(range(H)), ticktext=names, autorange="reversed")
    fig.update_layout(title=_label(title), height=300, width=380,
                      margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig


def lab_maps_figure(maps, labels, titles=None, height=320):
    """maps (H, T, T): one heatmap per head, rows = queries, columns = keys."""
    maps = np.asarray(maps, dtype=float)
    H, T, _ = maps.shape
    titles = titles or [f"head {h + 1}" for h in range(H)]
    fig = make_subplots(rows=1, cols=H, subplot_titles=_labels(titles),
                        horizontal_spacing=0.04)
    ticks = dict(tickvals=list(range(T)), ticktext=_labels(labels))
    for h in range(H):
        fig.add_trace(go.Heatmap(
            z=maps[h], x=list(range(T)), y=list(range(T)), zmin=0, zmax=1,
            colorscale="Blues", showscale=h == H - 1,
            hovertemplate="query %{y} → key %{x}: %{z:.3f}<extra></extra>"), 1, h + 1)
        fig.update_xaxes(**ticks, row=1, col=h + 1)
        fig.update_yaxes(**ticks, autorange="reversed", row=1, col=h + 1,
                         showticklabels=h == 0)
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def neuron_figure(tokens, products, logits, probs, query_label=""):
    """The neuron view of one head and one query token: q∘k per key (T, K), the logits
    q·k/√d_k and the softmax, per key token."""
    products = np.asarray(products, dtype=float)
    T, K = products.shape
    labels = _labels(tokens)
    fig = make_subplots(rows=1, cols=3, column_widths=[0.6, 0.2, 0.2], shared_yaxes=True,
                        horizontal_spacing=0.03,
                        subplot_titles=["q ∘ k (elementwise, per key token)",
                                        "q · k / √d_k", "softmax"])
    lim = float(np.abs(products).max()) or 1.0
    fig.add_trace(go.Heatmap(z=products, x=list(range(K)), y=list(range(T)), zmid=0,
                             zmin=-lim, zmax=lim, colorscale="RdBu", reversescale=True,
                             showscale=False,
                             hovertemplate="key %{y}, dim %{x}: %{z:.3f}<extra></extra>"),
                  1, 1)
    fig.add_trace(go.Bar(x=np.asarray(logits), y=list(range(T)), orientation="h",
                         marker_color="#888", hovertemplate="%{x:.3f}<extra></extra>"), 1, 2)
    fig.add_trace(go.Bar(x=np.asarray(probs), y=list(range(T)), orientation="h",
                         marker_color="#1f77b4", hovertemplate="%{x:.3f}<extra></extra>"), 1, 3)
    fig.update_yaxes(tickvals=list(range(T)), ticktext=labels, autorange="reversed", row=1,
                     col=1)
    fig.update_xaxes(title="dimension of the head (d_k)", row=1, col=1)
    fig.update_xaxes(range=[0, 1], row=1, col=3)
    fig.update_layout(title=_label(f"query token: {query_label}"), showlegend=False,
                      height=120 + 22 * T, margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return fig
# --- All heads, head lab, two readings

LABEL_COLOURS = {  # one colour per pattern label, for the atlas overlay and the label grids
    "CLS": "#7f7f7f", "SEP": "#8c564b", "punct": "#9467bd", "prev": "#d62728",
    "next": "#ff7f0e", "self": "#2ca02c", "broad": "#1f77b4", "het": "#444444",
}
HOVER_CELLS = 60_000  # above this many cells a figure gets no per-cell hover text (page weight)


def _esc(s) -> str:
    """Plotly renders a little HTML in text; show user text as text."""
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _tiles(maps, gx, gy):
    """Lay maps (R, C, n, n) out on one grid with gx empty columns between tiles and gy empty
    rows above each tile: returns the (R * (n + gy), C * (n + gx)) grid, NaN in the gaps."""
    R, C, n, _ = maps.shape
    grid = np.full((R, n + gy, C, n + gx), np.nan, dtype=np.float32)
    grid[:, gy:, :, :n] = maps.transpose(0, 2, 1, 3)  # (R, n, C, n)
    return grid.reshape(R * (n + gy), C * (n + gx))


def _tile_hover(maps, tokens, names, gx, gy):
    """Hover text for _tiles: "name  query→key  weight" per cell, "" in the gaps, or None when
    the grid is too big to label every cell."""
    R, C, n, _ = maps.shape
    if R * C * (n + gy) * (n + gx) > HOVER_CELLS:
        return None
    tok = np.array([_esc(t) for t in tokens[:n]], dtype=object)
    pair = tok[:, None] + "→" + tok[None, :]  # (n, n)
    hover = np.full((R, n + gy, C, n + gx), "", dtype=object)
    for r in range(R):
        for c in range(C):
            vals = np.char.mod("%.2f", maps[r, c]).astype(object)
            hover[r, gy:, c, :n] = names[r][c] + " " + pair + " " + vals
    return hover.reshape(R * (n + gy), C * (n + gx))


def _tile_figure(maps, tokens, names, row_ticks, col_ticks, title, gx, gy, height):
    R, C, n, _ = maps.shape
    fig = go.Figure(go.Heatmap(
        z=np.round(_tiles(maps, gx, gy), 3), colorscale="Blues", zmin=0, zmax=1,
        colorbar=dict(title="weight", thickness=12), hoverongaps=False,
        text=(hover := _tile_hover(maps, tokens, names, gx, gy)),
        hoverinfo="text" if hover is not None else "skip", name="tiles"))
    fig.update_xaxes(tickvals=[c * (n + gx) + (n - 1) / 2 for c in range(C)], ticktext=col_ticks,
                     side="top", showgrid=False, zeroline=False,
                     range=[-0.5, C * (n + gx) - gx - 0.5])
    fig.update_yaxes(tickvals=[r * (n + gy) + gy + (n - 1) / 2 for r in range(R)],
                     ticktext=row_ticks, autorange="reversed", showgrid=False, zeroline=False)
    fig.update_layout(title=dict(text=_esc(title), x=0, font=dict(size=14)), height=height,
                      margin=dict(l=40, r=10, t=80, b=10), plot_bgcolor="white")
    return fig


def atlas_figure(att, tokens, short_labels, title="", max_tokens=48) -> go.Figure:
    """Every head as a thumbnail in ONE heatmap trace: att (L, H, T, T), short_labels (L, H).

    Tiles sit on a grid with a gap above each tile for its pattern label. Maps longer than
    max_tokens show their first max_tokens tokens (the metrics still use every token)."""
    att = np.asarray(att, dtype=np.float32)
    L, H, T, _ = att.shape
    n = min(T, max_tokens)
    gx, gy = max(1, -(-n // 8)), max(2, -(-n // 3))  # gaps: between columns, above each tile
    cw, ch = n + gx, n + gy  # one tile's cell in grid units
    names = [[f"L{i + 1} H{h + 1}" for h in range(H)] for i in range(L)]
    fig = _tile_figure(att[:, :, :n, :n], tokens, names, [f"L{i + 1}" for i in range(L)],
                       [f"H{h + 1}" for h in range(H)], title, gx, gy,
                       int(np.clip(1000 * L * ch / (H * cw), 260, 1400)) + 90)
    # the labels: one text trace (much faster than L*H layout annotations)
    hh, ll = np.meshgrid(np.arange(H), np.arange(L))  # (L, H) each
    labels = [str(short_labels[i][h]) for i, h in zip(ll.ravel(), hh.ravel())]
    fig.add_trace(go.Scatter(
        x=hh.ravel() * cw + (n - 1) / 2, y=ll.ravel() * ch + gy / 2 - 0.5, mode="text",
        text=labels, textfont=dict(size=11, color=[LABEL_COLOURS.get(t, "#000") for t in labels]),
        hoverinfo="skip", showlegend=False, name="labels"))
    return fig


def _head_grid(values, title, colorbar, text=None, zmin=None, zmax=None, colorscale="Viridis",
               selected=None, selectable=False) -> go.Figure:
    """An L x H heatmap, one cell per head, with optional cell text and a selected-cell frame.
    selectable adds invisible markers on the cells so that a click selects a head."""
    values = np.asarray(values, dtype=np.float64)
    L, H = values.shape
    hx = [f"H{h + 1}" for h in range(H)]
    ly = [f"L{i + 1}" for i in range(L)]
    names = np.array([[f"L{i + 1} H{h + 1}" for h in range(H)] for i in range(L)])  # (L, H)
    fig = go.Figure(go.Heatmap(
        z=values, x=list(range(H)), y=list(range(L)), colorscale=colorscale, zmin=zmin,
        zmax=zmax, text=None if text is None else np.asarray(text, dtype=object),
        texttemplate="%{text}" if text is not None else None, textfont=dict(size=10),
        colorbar=dict(title=colorbar, thickness=12), customdata=names,
        hovertemplate="%{customdata}: %{z:.3f}<extra></extra>",
        hoverinfo="skip" if selectable else None))
    if selectable:  # heatmaps cannot be selected by a click; invisible markers on top can
        hh, ll = np.meshgrid(np.arange(H), np.arange(L))  # (L, H) each
        fig.add_trace(go.Scatter(
            x=hh.ravel(), y=ll.ravel(), mode="markers", showlegend=False,
            marker=dict(symbol="square", size=24, color="rgba(0,0,0,0)"),
            text=[f"{n}: {v:.3f}" for n, v in zip(names.ravel(), values.ravel())],
            hovertemplate="%{text}<extra></extra>"))
    if selected is not None:
        layer, head = selected
        fig.add_shape(type="rect", x0=head - 0.5, x1=head + 0.5, y0=layer - 0.5,
                      y1=layer + 0.5, line=dict(color="red", width=3))
    fig.update_xaxes(tickvals=list(range(H)), ticktext=hx, side="top", showgrid=False)
    fig.update_yaxes(tickvals=list(range(L)), ticktext=ly, autorange="reversed", showgrid=False)
    fig.update_layout(title=dict(text=title, x=0, font=dict(size=14)),
                      height=max(260, 34 * L + 120), margin=dict(l=40, r=10, t=80, b=10),
                      clickmode="event+select")
    return fig


def metric_grid_figure(values, short_labels, title, colorbar) -> go.Figure:
    """A metric per head (L, H) with each head's pattern label written in its cell."""
    return _head_grid(values, title, colorbar, text=short_labels)


def importance_figure(importance) -> go.Figure:
    """Michel-style importance per head (L, H): mean 1 - cosine when that head alone is off."""
    imp = np.asarray(importance)
    return _head_grid(imp, "Importance: output change when this head alone is off",
                      "1 − cos", text=np.vectorize(lambda v: f"{v:.3f}")(imp), zmin=0,
                      colorscale="Reds")


def map_change_figure(change, mask) -> go.Figure:
    """How far each head's map moved under the ablation (L, H), total variation in [0, 1].
    Heads that are off (mask 0) are left blank and marked "off"."""
    off = np.asarray(mask) == 0
    change = np.where(off, np.nan, np.asarray(change, dtype=np.float64))
    text = np.where(off, "off", np.vectorize(lambda v: f"{v:.2f}")(np.nan_to_num(change)))
    return _head_grid(change, "How much each head's map changed (mean total variation)",
                      "TV", text=text, zmin=0, zmax=max(0.05, float(np.nanmax(change, initial=0))),
                      colorscale="Purples")


def diff_grid_figure(diff, selected=None) -> go.Figure:
    """Two readings: the focus word's change per head (L, H), clickable."""
    d = np.asarray(diff)
    return _head_grid(d, "Where the focus word looks: difference between the readings "
                         "(click a head)", "TV", text=np.vectorize(lambda v: f"{v:.2f}")(d),
                      zmin=0, zmax=1, colorscale="Oranges", selected=selected, selectable=True)


def pruning_curve_figure(curve) -> go.Figure:
    """Output change with the k least important heads off, k = 0 .. L*H."""
    curve = np.asarray(curve)
    n = len(curve) - 1
    fig = go.Figure(go.Scatter(
        x=np.arange(n + 1), y=curve, mode="lines+markers", marker=dict(size=4),
        hovertemplate="%{x} heads off: %{y:.3f}<extra></extra>"))
    fig.update_layout(title=dict(text="How many heads can go? (least important first)", x=0,
                                 font=dict(size=14)),
                      xaxis_title=f"heads switched off (of {n})",
                      yaxis_title="mean 1 − cos of the final layer", height=340,
                      margin=dict(l=60, r=10, t=50, b=50))
    fig.update_yaxes(rangemode="tozero")
    return fig


def token_change_figure(tokens, change) -> go.Figure:
    """Per token, 1 - cosine between the ablated and the intact final hidden state."""
    change = np.asarray(change)
    fig = go.Figure(go.Bar(x=list(range(len(change))), y=change,
                           customdata=[_esc(t) for t in tokens],
                           hovertemplate="%{customdata}: %{y:.4f}<extra></extra>"))
    fig.update_xaxes(tickvals=list(range(len(change))), ticktext=[_esc(t) for t in tokens])
    fig.update_layout(title=dict(text="Change of the final hidden state per token", x=0,
                                 font=dict(size=14)),
                      yaxis_title="1 − cos", height=300, margin=dict(l=60, r=10, t=50, b=60))
    top = float(change.max()) if change.size else 0.0
    fig.update_yaxes(range=[0, max(1e-3, 1.1 * top)])  # no heads off: a flat 0, not float noise
    return fig


def _map_trace(m, labels, coloraxis="coloraxis"):
    lab = [_esc(t) for t in labels]
    n = len(lab)
    text = None
    if m.size <= HOVER_CELLS // 4:
        text = [[f"{lab[q]} → {lab[k]}: {m[q, k]:.2f}" for k in range(n)] for q in range(n)]
    return go.Heatmap(z=np.round(m, 3), x=list(range(n)), y=list(range(n)), text=text,
                      hoverinfo="text" if text else "skip", coloraxis=coloraxis)


def _token_axes(fig, labels, row, col, show_y=True):
    ticks = list(range(len(labels)))
    lab = [_esc(t) for t in labels]
    fig.update_xaxes(tickvals=ticks, ticktext=lab, tickangle=-60, row=row, col=col)
    fig.update_yaxes(tickvals=ticks, ticktext=lab if show_y else [""] * len(ticks),
                     autorange="reversed", row=row, col=col)


def side_by_side_figure(map_a, labels_a, map_b, labels_b, title_a, title_b,
                        focus_a=None, focus_b=None, height=440, max_tokens=128) -> go.Figure:
    """Two attention maps next to each other (they may differ in size), one colour scale 0..1.
    focus_a / focus_b frame one query row (the focus word). Maps longer than max_tokens show
    their first max_tokens rows and columns."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=(_esc(title_a), _esc(title_b)),
                        horizontal_spacing=0.12)
    for col, (m, labels, focus) in enumerate(((map_a, labels_a, focus_a),
                                              (map_b, labels_b, focus_b)), start=1):
        labels = list(labels)[:max_tokens]
        m = np.asarray(m, dtype=np.float64)[:max_tokens, :max_tokens]
        fig.add_trace(_map_trace(m, labels), row=1, col=col)
        _token_axes(fig, labels, 1, col)
        if focus is not None and focus < max_tokens:
            fig.add_shape(type="rect", x0=-0.5, x1=len(labels) - 0.5, y0=focus - 0.5,
                          y1=focus + 0.5, line=dict(color="red", width=2), row=1, col=col)
    fig.update_layout(coloraxis=dict(colorscale="Blues", cmin=0, cmax=1,
                                     colorbar=dict(title="weight", thickness=12)),
                      height=height, margin=dict(l=60, r=10, t=50, b=80))
    return fig


def rollout_figure(raw, roll, tokens, layers=None, max_tokens=64) -> go.Figure:
    """Per layer: the raw mean attention over heads and the rollout. raw, roll: (L, T, T).
    Several layers: raw on the top row, rollout below, one column per layer. One layer: the two
    maps side by side, with every token labelled. Shows at most max_tokens tokens."""
    raw, roll = np.asarray(raw, dtype=np.float64), np.asarray(roll, dtype=np.float64)
    layers = list(range(raw.shape[0])) if layers is None else list(layers)
    if len(layers) == 1:
        (layer,) = layers
        return side_by_side_figure(raw[layer], tokens, roll[layer], tokens,
                                   f"L{layer + 1}: raw mean of the heads",
                                   f"L{layer + 1}: rollout (layers 1 to {layer + 1})",
                                   max_tokens=max_tokens)
    n = max_tokens
    raw, roll, tokens = raw[:, :n, :n], roll[:, :n, :n], list(tokens)[:n]  # (L, n, n)
    maps = np.stack([raw[layers], roll[layers]])  # (2, layers, n, n)
    names = [[f"L{i + 1} raw" for i in layers], [f"L{i + 1} rollout" for i in layers]]
    n = maps.shape[-1]
    return _tile_figure(maps, tokens, names, ["raw mean", "rollout"],
                        [f"L{i + 1}" for i in layers], "", max(1, -(-n // 8)), max(1, -(-n // 8)),
                        int(np.clip(1000 * 2 / len(layers), 260, 700)) + 90)
