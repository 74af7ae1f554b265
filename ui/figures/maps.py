"""The Explorer's attention maps: one head, and every head of one layer in one figure.

Maps are (T, T) or (H, T, T) arrays: row = query, column = key. Labels are the tokens (or words)
in order; axes are categorical with unique labels (labels.axis_labels), so repeated tokens stay
separate rows. Shape letters: H heads, T tokens.
"""

import numpy as np

from ..labels import axis_labels, label
from ..style import FONT
from .base import (
    HOVER,
    centred_title,
    coloraxis,
    figure,
    heatmap_trace,
    label_room,
    ticks_of,
)


def heatmap(z, labels, title="", height=420, zmax=1.0, hover=HOVER, show_scale=True,
            zoom=True, raw=None):
    """One attention map (T, T) with token labels on both axes, queries as rows (top to bottom),
    keys as columns, a fixed 0..zmax colour scale and "query → key: weight" on hover.
    zoom=False fixes the axes (no zoom or pan; fewer drag handles for the browser to draw).
    raw (T, T): a norm-weighted map's raw norms ||alpha f(x)||, z then being the row-normalised
    shares: the hover gives both and the colour bar says "share of ‖αf‖"."""
    ticks = axis_labels(labels)
    room = label_room(ticks, 12)
    fixed = dict(fixedrange=not zoom)
    extra = {}
    if raw is not None:
        extra = dict(customdata=np.asarray(raw, dtype=np.float32))
        hover = "%{y} → %{x}: %{z:.3f} (‖αf‖ %{customdata:.3g})<extra></extra>"
    layout = dict(
        title=centred_title(label(title)), height=height, margin=dict(l=room, r=10, t=50, b=room),
        font=FONT, coloraxis=coloraxis(zmax, show=show_scale,
                                       title="weight" if raw is None else "share of ‖αf‖"),
        xaxis=dict(type="category", tickangle=-90, **fixed, **ticks_of(ticks)),
        yaxis=dict(type="category", autorange="reversed", **fixed, **ticks_of(ticks)))
    return figure([heatmap_trace(z, ticks, hover, **extra)], layout)


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
    tick, room = ticks_of(ticks, size=size), label_room(ticks, size)
    axis = dict(type="category", showgrid=False, ticks="", fixedrange=True, **tick)
    layout = dict(height=height or 140 * rows + 60 + room,
                  margin=dict(l=room, r=10, t=30, b=room),
                  coloraxis=coloraxis(zmax), font=FONT, showlegend=False)

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
        data.append(heatmap_trace(maps[i], ticks, axes=(f"x{name(c)}", f"y{name(r)}"),
                                   name=f"head {i + 1}"))
        annotations.append(dict(text=label(titles[i]), x=c * (w + hs) + w / 2,
                                y=1 - r * (h + vs),
                                xref="paper", yref="paper", xanchor="center", yanchor="bottom",
                                showarrow=False, font=dict(size=13)))
    layout["annotations"] = annotations
    if selected is not None and 0 <= selected < H:
        r, c = divmod(selected, cols)
        layout["shapes"] = [dict(type="rect", xref=f"x{name(c)} domain",
                                 yref=f"y{name(r)} domain", x0=-0.02, x1=1.02, y0=-0.02,
                                 y1=1.02, line=dict(color="#d62728", width=3))]
    return figure(data, layout)
