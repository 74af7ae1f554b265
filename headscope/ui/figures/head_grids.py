"""Layers x heads grids, one cell per head: a metric with each head's pattern label, the
importance ranking, how far each map moved, and the two readings' difference.

Shape letters: L layers, H heads.
"""

import numpy as np
import plotly.graph_objects as go

from mha_core.heads import head_labels, head_names, layer_names

from ..labels import label
from ..labels import labels as label_list


def _head_grid(values, title, colorbar, text=None, zmin=None, zmax=None, colorscale="Viridis",
               selected=None, selectable=False) -> go.Figure:
    """An L x H heatmap, one cell per head, with optional cell text and a selected-cell frame.
    selectable adds invisible markers on the cells so that a click selects a head."""
    values = np.asarray(values, dtype=np.float64)
    L, H = values.shape
    hx, ly = head_labels(H), layer_names(L)
    names = np.array(head_names(L, H)).reshape(L, H)  # (L, H)
    fig = go.Figure(go.Heatmap(
        z=values, x=list(range(H)), y=list(range(L)), colorscale=colorscale, zmin=zmin,
        zmax=zmax, text=None if text is None else np.asarray(label_list(np.ravel(text)),
                                                   dtype=object).reshape(np.shape(text)),
        texttemplate="%{text}" if text is not None else None, textfont=dict(size=10),
        colorbar=dict(title=label(colorbar), thickness=12), customdata=names,
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
    fig.update_layout(title=dict(text=label(title), x=0, font=dict(size=14)),
                      height=max(260, 34 * L + 120), margin=dict(l=40, r=10, t=80, b=10),
                      clickmode="event+select")
    return fig


def metric_grid_figure(values, short_labels, title, colorbar) -> go.Figure:
    """A metric per head (L, H) with each head's pattern label written in its cell."""
    return _head_grid(values, title, colorbar, text=short_labels)

TV = "total variation"  # the colour bar's title, in words (docs/glossary.md)


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
                      TV, text=text, zmin=0, zmax=max(0.05, float(np.nanmax(change, initial=0))),
                      colorscale="Purples")


def diff_grid_figure(diff, selected=None) -> go.Figure:
    """Two readings: the focus token's change per head (L, H), clickable."""
    d = np.asarray(diff)
    return _head_grid(d, "Where the focus token looks: difference between the readings "
                         "(click a head)", TV, text=np.vectorize(lambda v: f"{v:.2f}")(d),
                      zmin=0, zmax=1, colorscale="Oranges", selected=selected, selectable=True)


def mask_change_figure(change, selected=None) -> go.Figure:
    """How far each head's map moved when one word was masked (L, H): mean total variation
    over the rows, 0 = unchanged, 1 = disjoint; clickable."""
    c = np.asarray(change, dtype=np.float64)
    return _head_grid(c, "How far each head's attention moved when the word was masked "
                         "(click a head)", TV, text=np.vectorize(lambda v: f"{v:.2f}")(c),
                      zmin=0, zmax=max(0.05, float(c.max(initial=0))), colorscale="Purples",
                      selected=selected, selectable=True)


def mask_importance_figure(drop, target) -> go.Figure:
    """Each head's importance for a masked word (L, H): how much the word's probability drops
    when that head alone is off (red: the head helps; blue: the word gets likelier without it)."""
    d = np.asarray(drop, dtype=np.float64)
    m = max(1e-6, float(np.abs(d).max(initial=0)))
    return _head_grid(d, f"Drop in P(“{target}”) at the mask when this head alone is off",
                      "ΔP", text=np.vectorize(lambda v: f"{v:+.3f}")(d), zmin=-m, zmax=m,
                      colorscale="RdBu_r")
