"""Matrices with their numbers, for Inside MHA and the Training lab: one matrix, which input
dims reach which head, heads x heads similarity, a small model's maps, and the neuron view.

Shape letters: H heads, T tokens, D d_model, K d_k.
"""

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..labels import label
from ..labels import labels as label_list


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
    fig.update_xaxes(tickvals=list(range(n_cols)), ticktext=label_list(cols), side="top")
    fig.update_yaxes(tickvals=list(range(n_rows)), ticktext=label_list(rows), autorange="reversed")
    fig.update_layout(title={"text": label(title), "y": 0.98, "x": 0.0, "font": {"size": 14}},
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
    fig.update_layout(title=label(title), height=80 + 32 * H,
                      margin={"l": 10, "r": 10, "t": 40, "b": 40})
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
    fig.update_layout(title=label(title), height=300, width=380,
                      margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig


def lab_maps_figure(maps, labels, titles=None, height=320):
    """maps (H, T, T): one heatmap per head, rows = queries, columns = keys."""
    maps = np.asarray(maps, dtype=float)
    H, T, _ = maps.shape
    titles = titles or [f"head {h + 1}" for h in range(H)]
    fig = make_subplots(rows=1, cols=H, subplot_titles=label_list(titles),
                        horizontal_spacing=0.04)
    ticks = dict(tickvals=list(range(T)), ticktext=label_list(labels))
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
    logits = np.asarray(logits, dtype=float)
    T, K = products.shape
    # a key masked out before the softmax (a decoder's later token, a local layer's far one)
    # holds the float32 minimum, not a score: no bar and no products, so the others show
    masked = logits <= np.finfo(np.float32).min / 2
    logits = np.where(masked, np.nan, logits)
    products = np.where(masked[:, None], np.nan, products)
    ticks = label_list(tokens)
    fig = make_subplots(rows=1, cols=3, column_widths=[0.6, 0.2, 0.2], shared_yaxes=True,
                        horizontal_spacing=0.03,
                        subplot_titles=["q ∘ k (elementwise, per key token)",
                                        "q · k / √d_k", "softmax"])
    lim = float(np.nanmax(np.abs(products), initial=0.0)) or 1.0
    fig.add_trace(go.Heatmap(z=products, x=list(range(K)), y=list(range(T)), zmid=0,
                             zmin=-lim, zmax=lim, colorscale="RdBu", reversescale=True,
                             showscale=False,
                             hovertemplate="key %{y}, dim %{x}: %{z:.3f}<extra></extra>"),
                  1, 1)
    fig.add_trace(go.Bar(x=logits, y=list(range(T)), orientation="h",
                         marker_color="#888", hovertemplate="%{x:.3f}<extra></extra>"), 1, 2)
    fig.add_trace(go.Bar(x=np.asarray(probs), y=list(range(T)), orientation="h",
                         marker_color="#1f77b4", hovertemplate="%{x:.3f}<extra></extra>"), 1, 3)
    fig.update_yaxes(tickvals=list(range(T)), ticktext=ticks, autorange="reversed", row=1,
                     col=1)
    fig.update_xaxes(title="dimension of the head (d_k)", row=1, col=1)
    fig.update_xaxes(range=[0, 1], row=1, col=3)
    fig.update_layout(title=label(f"query token: {query_label}"), showlegend=False,
                      height=120 + 22 * T, margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return fig
