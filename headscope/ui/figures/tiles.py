"""Many small maps in one heatmap trace (the atlas of every head, the rollout by layer), and two
maps side by side.

Shape letters: L layers, H heads, T tokens, R rows and C columns of tiles, n tokens per tile.
"""

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from mha_core.heads import head_labels, head_names, layer_names

from ..labels import label
from ..labels import labels as label_list
from ..style import COLORSCALE, LABEL_COLOURS
from .base import HOVER_CELLS

BLOCKED = "rgb(226,226,226)"  # a decoder's not-attendable cells, as the component draws them


def _tiles(maps, gx, gy):
    """Lay maps (R, C, n, n) out on one grid with gx empty columns between tiles and gy empty
    rows above each tile: returns the (R * (n + gy), C * (n + gx)) grid, NaN in the gaps."""
    R, C, n, _ = maps.shape
    grid = np.full((R, n + gy, C, n + gx), np.nan, dtype=np.float32)
    grid[:, gy:, :, :n] = maps.transpose(0, 2, 1, 3)  # (R, n, C, n)
    return grid.reshape(R * (n + gy), C * (n + gx))


def _tile_hover(maps, tokens, names, gx, gy, raw=None):
    """Hover text for _tiles: "name  query→key  weight" per cell (and "‖αf‖ raw" when raw maps
    are given), "" in the gaps, or None when the grid is too big to label every cell."""
    R, C, n, _ = maps.shape
    if R * C * (n + gy) * (n + gx) > HOVER_CELLS:
        return None
    tok = np.array(label_list(tokens[:n]), dtype=object)
    pair = tok[:, None] + "→" + tok[None, :]  # (n, n)
    hover = np.full((R, n + gy, C, n + gx), "", dtype=object)
    for r in range(R):
        for c in range(C):
            vals = np.char.mod("%.2f", maps[r, c]).astype(object)
            if raw is not None:
                vals = vals + " (‖αf‖ " + np.char.mod("%.3g", raw[r, c]).astype(object) + ")"
            hover[r, gy:, c, :n] = names[r][c] + " " + pair + " " + vals
    return hover.reshape(R * (n + gy), C * (n + gx))


def _tile_figure(maps, tokens, names, row_ticks, col_ticks, title, gx, gy, height, raw=None,
                 scale_title="weight"):
    R, C, n, _ = maps.shape
    fig = go.Figure(go.Heatmap(
        z=np.round(_tiles(maps, gx, gy), 3), colorscale=COLORSCALE, zmin=0, zmax=1,
        colorbar=dict(title=scale_title, thickness=12), hoverongaps=False,
        text=(hover := _tile_hover(maps, tokens, names, gx, gy, raw)),
        hoverinfo="text" if hover is not None else "skip", name="tiles"))
    fig.update_xaxes(tickvals=[c * (n + gx) + (n - 1) / 2 for c in range(C)], ticktext=col_ticks,
                     side="top", showgrid=False, zeroline=False,
                     range=[-0.5, C * (n + gx) - gx - 0.5])
    fig.update_yaxes(tickvals=[r * (n + gy) + gy + (n - 1) / 2 for r in range(R)],
                     ticktext=row_ticks, autorange="reversed", showgrid=False, zeroline=False)
    fig.update_layout(title=dict(text=label(title) if title else "", x=0, font=dict(size=14)),
                      height=height, margin=dict(l=40, r=10, t=80 if title else 40, b=10),
                      plot_bgcolor="white")  # t=40: room for the heads' ticks alone
    return fig


def atlas_figure(att, tokens, short_labels, title="", max_tokens=48, raw=None,
                 causal=False) -> go.Figure:
    """Every head as a thumbnail in ONE heatmap trace: att (L, H, T, T), short_labels (L, H).

    Tiles sit on a grid with a gap above each tile for its pattern label. Maps longer than
    max_tokens show their first max_tokens tokens (the metrics still use every token).
    raw (L, H, T, T): norm-weighted maps before row normalisation (att is then the normalised
    ones): the hover shows both, and the colour bar says "share of ‖αf‖". causal: a decoder's
    maps, whose cells above the diagonal are drawn grey (not attendable), not as zero weight."""
    att = np.asarray(att, dtype=np.float32)
    L, H, T, _ = att.shape
    n = min(T, max_tokens)
    gx, gy = max(1, -(-n // 8)), max(2, -(-n // 3))  # gaps: between columns, above each tile
    cw, ch = n + gx, n + gy  # one tile's cell in grid units
    names = np.array(head_names(L, H)).reshape(L, H).tolist()
    fig = _tile_figure(att[:, :, :n, :n], tokens, names, layer_names(L), head_labels(H), title,
                       gx, gy,
                       int(np.clip(1000 * L * ch / (H * cw), 260, 1400)) + 90,
                       raw=None if raw is None else np.asarray(raw)[:, :, :n, :n],
                       scale_title="weight" if raw is None else "share of ‖αf‖")
    if causal:  # one grey trace over the cells no token can attend to (NaN elsewhere)
        later = np.triu(np.ones((n, n), dtype=np.float32), k=1)  # (n, n): key after query
        blocked = np.where(later > 0, 1.0, np.nan).astype(np.float32)
        fig.add_trace(go.Heatmap(
            z=_tiles(np.broadcast_to(blocked, (L, H, n, n)), gx, gy),
            colorscale=[[0, BLOCKED], [1, BLOCKED]], showscale=False, hoverongaps=False,
            hoverinfo="skip", name="not attendable"))
    # the labels: one text trace (much faster than L*H layout annotations)
    hh, ll = np.meshgrid(np.arange(H), np.arange(L))  # (L, H) each
    labels = [str(short_labels[i][h]) for i, h in zip(ll.ravel(), hh.ravel())]
    fig.add_trace(go.Scatter(
        x=hh.ravel() * cw + (n - 1) / 2, y=ll.ravel() * ch + gy / 2 - 0.5, mode="text",
        text=label_list(labels),
        textfont=dict(size=11, color=[LABEL_COLOURS[t] for t in labels]),
        hoverinfo="skip", showlegend=False, name="labels"))
    return fig


def _map_trace(m, labels, coloraxis="coloraxis"):
    lab = label_list(labels)
    n = len(lab)
    text = None
    if m.size <= HOVER_CELLS // 4:
        text = [[f"{lab[q]} → {lab[k]}: {m[q, k]:.2f}" for k in range(n)] for q in range(n)]
    return go.Heatmap(z=np.round(m, 3), x=list(range(n)), y=list(range(n)), text=text,
                      hoverinfo="text" if text else "skip", coloraxis=coloraxis)


def _token_axes(fig, labels, row, col, show_y=True):
    ticks = list(range(len(labels)))
    lab = label_list(labels)
    fig.update_xaxes(tickvals=ticks, ticktext=lab, tickangle=-60, row=row, col=col)
    fig.update_yaxes(tickvals=ticks, ticktext=lab if show_y else [""] * len(ticks),
                     autorange="reversed", row=row, col=col)


def side_by_side_figure(map_a, labels_a, map_b, labels_b, title_a, title_b,
                        focus_a=None, focus_b=None, height=440, max_tokens=128) -> go.Figure:
    """Two attention maps next to each other (they may differ in size), one colour scale 0..1.
    focus_a / focus_b frame one query row (the focus token). Maps longer than max_tokens show
    their first max_tokens rows and columns."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=(label(title_a), label(title_b)),
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
    fig.update_layout(coloraxis=dict(colorscale=COLORSCALE, cmin=0, cmax=1,
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
    shown = [layer_names(raw.shape[0])[i] for i in layers]
    names = [[f"{x} raw" for x in shown], [f"{x} rollout" for x in shown]]
    n = maps.shape[-1]
    return _tile_figure(maps, tokens, names, ["raw mean", "rollout"],
                        shown, "", max(1, -(-n // 8)), max(1, -(-n // 8)),
                        int(np.clip(1000 * 2 / len(layers), 260, 700)) + 90)
