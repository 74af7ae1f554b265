"""Plotly figure builders: numpy in, go.Figure out. No Streamlit, no torch.

Axes use numeric positions with tick labels (tickvals/ticktext), so repeated tokens stay
separate rows instead of being merged into one category by plotly.
"""

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots


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
