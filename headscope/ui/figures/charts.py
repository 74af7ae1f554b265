"""Line and bar charts: training curves, the cost of three designs, the pruning curve and the
per-token output change."""

import numpy as np
import plotly.graph_objects as go

from ..labels import label
from ..labels import labels as label_list


def cost_figure(designs, params, flops, map_bytes, title=""):
    """Bars of params, FLOPs and attention-map memory per design, each relative to the first
    design (so 1 = the cost of one head of d_model)."""
    metrics = {"parameters": params, "FLOPs": flops, "attention-map memory": map_bytes}
    fig = go.Figure()
    for name, vals in metrics.items():
        vals = np.asarray(vals, dtype=float)
        rel = vals / vals[0]
        fig.add_bar(name=name, x=label_list(designs), y=rel, text=[f"{r:.3g}×" for r in rel],
                    textposition="outside")
    fig.update_yaxes(title="× the cost of 1 head of d_model", rangemode="tozero")
    fig.update_layout(barmode="group", title=label(title), height=380,
                      margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig


def curves_figure(series, title="", ytitle="", xtitle="step", yrange=None, height=320):
    """series: {name: (x, y)} drawn as lines."""
    fig = go.Figure()
    for name, (x, y) in series.items():
        fig.add_scatter(x=np.asarray(x), y=np.asarray(y), mode="lines", name=label(name))
    fig.update_xaxes(title=label(xtitle))
    fig.update_yaxes(title=label(ytitle), range=yrange)
    fig.update_layout(title=label(title), height=height,
                      margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      legend={"orientation": "h", "y": -0.25})
    return fig


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
                           customdata=label_list(tokens),
                           hovertemplate="%{customdata}: %{y:.4f}<extra></extra>"))
    fig.update_xaxes(tickvals=list(range(len(change))), ticktext=label_list(tokens))
    fig.update_layout(title=dict(text="Change of the final hidden state per token", x=0,
                                 font=dict(size=14)),
                      yaxis_title="1 − cos", height=300, margin=dict(l=60, r=10, t=50, b=60))
    top = float(change.max()) if change.size else 0.0
    fig.update_yaxes(range=[0, max(1e-3, 1.1 * top)])  # no heads off: a flat 0, not float noise
    return fig


def prediction_bars(predictions, title="", highlight=None, height=None):
    """The masked-LM head's top-k at one [MASK]: horizontal bars, most likely on top.
    predictions: [(token, probability)]; highlight: a token to draw in another colour (the
    word that was masked)."""
    tokens = [t for t, _ in predictions]
    probs = np.asarray([p for _, p in predictions], dtype=np.float64)
    # unique labels: a categorical axis would merge two equal tokens
    ticks = [label(t) + "\u200b" * i for i, t in enumerate(tokens)]
    colors = ["#d62728" if t == highlight else "#1f77b4" for t in tokens]
    fig = go.Figure(go.Bar(x=probs, y=ticks, orientation="h", marker_color=colors,
                           text=[f"{p:.3f}" for p in probs], textposition="auto",
                           hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(title="probability", range=[0, max(0.05, float(probs.max(initial=0)))])
    fig.update_layout(title=label(title), height=height or 60 + 28 * max(len(tokens), 3),
                      margin={"l": 10, "r": 10, "t": 40, "b": 40})
    return fig


SHARE_KINDS = {"cls": ("[CLS]", "#9467bd"), "sep": ("[SEP]", "#8c564b"),
               "punct": ("punctuation", "#e377c2")}


def norm_shares_figure(shares, title="") -> go.Figure:
    """Per layer, the share of attention on [CLS], [SEP] and punctuation by weight (solid) and
    by norm ||alpha f(x)|| (dashed): shares = {"weight": {kind: (L,)}, "norm": {kind: (L,)}}."""
    fig = go.Figure()
    for kind, (name, colour) in SHARE_KINDS.items():
        for by, dash in (("weight", "solid"), ("norm", "dash")):
            y = np.asarray(shares[by][kind], dtype=float)
            fig.add_scatter(x=[f"L{i + 1}" for i in range(len(y))], y=y, mode="lines+markers",
                            name=f"{name} by {by}", line=dict(color=colour, dash=dash),
                            hovertemplate=f"{name} by {by}, %{{x}}: %{{y:.3f}}<extra></extra>")
    fig.update_yaxes(title="share of each row", range=[0, 1])
    fig.update_layout(title=label(title), height=360, margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      legend={"orientation": "h", "y": -0.15})
    return fig

