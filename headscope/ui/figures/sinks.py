"""Attention sinks: every head's share of attention on a sink token by weight and by norm (two
layers x heads grids), the sink rate per layer, and the lesson's two maps side by side (an
encoder reads both ways, a decoder only looks back).

Shape letters: L layers, H heads, T tokens.
"""

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from mha_core.heads import head_labels, head_names, layer_names

from ..labels import label
from ..style import COLORSCALE, FONT
from .base import sparse_layers
from .tiles import side_by_side_figure

WEIGHT, NORM = "#1f77b4", "#ff7f0e"
NOT_ATTENDABLE = "#c8c8c8"  # a decoder's later tokens: no weight is possible there
TEXT_CELLS = 400  # more heads than this: no number in each cell (the hover still has it)


def sink_grids_figure(weight, norm, sink: str, compact: bool = False) -> go.Figure:
    """Two L x H grids on one 0..1 scale: each head's mean share of attention on `sink` by
    weight α and by norm ‖α f(x)‖ (rows renormalised), the number in each cell. compact (a
    projector): no numbers for a tall model, whose rows are lower than the text, and its
    layers labelled sparsely."""
    weight, norm = (np.asarray(a, dtype=np.float64) for a in (weight, norm))
    L, H = weight.shape
    names = np.array(head_names(L, H)).reshape(L, H)
    numbers = L * H <= TEXT_CELLS and not (compact and L > 16)
    rows = sparse_layers(L) if compact else dict(tickvals=list(range(L)), ticktext=layer_names(L))
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.08,
                        subplot_titles=("by weight α", "by norm ‖α f(x)‖"))
    for col, z in ((1, weight), (2, norm)):
        fig.add_trace(go.Heatmap(
            z=z, x=list(range(H)), y=list(range(L)), coloraxis="coloraxis", customdata=names,
            text=np.vectorize(lambda v: f"{v:.2f}")(z) if numbers else None,
            texttemplate="%{text}" if numbers else None, textfont=dict(size=10),
            hovertemplate=f"%{{customdata}}: %{{z:.3f}} on {label(sink)}<extra></extra>"),
            row=1, col=col)
        fig.update_xaxes(tickvals=list(range(H)), ticktext=head_labels(H), showgrid=False,
                         row=1, col=col)
        fig.update_yaxes(**rows, showgrid=False, autorange="reversed", row=1, col=col)
    fig.update_layout(
        coloraxis=dict(colorscale=COLORSCALE, cmin=0, cmax=1,
                       colorbar=dict(title=dict(text=f"share on {label(sink)}"), thickness=10,
                                     len=0.7)),
        font=FONT, height=max(300, min(20 * L + 130, 760)), margin=dict(l=10, r=10, t=50, b=10))
    return fig


def sink_rate_figure(rate_weight, rate_norm, eps: float) -> go.Figure:
    """Per layer, Gu et al.'s sink rate: the share of heads whose mean attention on the sink
    is over eps, by weight and by norm."""
    fig = go.Figure()
    for name, rate, colour in (("by weight", rate_weight, WEIGHT), ("by norm", rate_norm, NORM)):
        rate = np.asarray(rate, dtype=np.float64)
        fig.add_bar(name=name, x=layer_names(len(rate)), y=rate, marker_color=colour,
                    hovertemplate=f"{name}, %{{x}}: %{{y:.0%}} of heads<extra></extra>")
    fig.update_xaxes(type="category", fixedrange=True)
    fig.update_yaxes(title=dict(text=f"share of heads over {eps:g}"), range=[0, 1.02],
                     tickformat=".0%", fixedrange=True)
    fig.update_layout(title=dict(text="Sink rate per layer (Gu et al. 2024)", x=0,
                                 font=dict(size=14)),
                      barmode="group", font=FONT, height=320,
                      margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.2))
    return fig


def both_ways_figure(enc_map, enc_tokens, dec_map, dec_tokens, enc_title, dec_title,
                     height=440) -> go.Figure:
    """The lesson: an encoder's map (T, T) beside a decoder's (T', T') on one 0..1 scale. The
    decoder's later tokens (upper triangle) are drawn grey, as not attendable, not as 0."""
    dec = np.asarray(dec_map, dtype=np.float64).copy()
    n = len(dec)
    later = np.triu(np.ones((n, n), dtype=bool), k=1)
    dec[later] = np.nan
    fig = side_by_side_figure(enc_map, enc_tokens, dec, dec_tokens, enc_title, dec_title,
                              height=height)
    trace = fig.data[1]
    if trace.text is not None:  # the hover of a later token says why it is empty
        trace.text = [[t.rsplit(": ", 1)[0] + ": not attendable (a later token)"
                       if later[q, k] else t for k, t in enumerate(row)]
                      for q, row in enumerate(trace.text)]
    # the later tokens in grey: a trace of their own (the plot's background is the theme's)
    fig.add_trace(go.Heatmap(z=np.where(later, 1.0, np.nan), x=list(range(n)),
                             y=list(range(n)), colorscale=[[0, NOT_ATTENDABLE],
                                                           [1, NOT_ATTENDABLE]],
                             showscale=False, hoverinfo="skip"), row=1, col=2)
    fig.update_layout(font=FONT)
    return fig
