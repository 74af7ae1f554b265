"""A decoder's next word: the top-k after every token (a strip, one row per position), the top-k
at one position with heads on and off, and the direct logit attribution of one token (each
head's term as a layers x heads grid, the other parts as bars).

Shape letters: T tokens, k predictions a position, L layers, H heads.
"""

import numpy as np
import plotly.graph_objects as go

from ..labels import axis_labels, label
from ..style import COLORSCALE, DIVERGING, FONT
from .base import sparse_layers
from .head_grids import _head_grid

WORD_CHARS = 14  # a predicted word longer than this is cut (with "…") in a cell
TOP_CELLS = 8  # compact grids print the number of this many heads only
MARK = "#d62728"  # the next token of the text where the model ranked it in its top k
UP, DOWN = "#b2182b", "#2166ac"  # pushes the word up / down (the diverging scale's ends)


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def next_word_strip(tokens, top_words, top_p, next_words, next_p, next_rank, selected=None,
                    title="") -> go.Figure:
    """One row per token: the k tokens the model expects after it (cells coloured by
    probability), then the token that really comes next with its probability and rank. tokens
    (T,), top_words (T, k), top_p (T, k); next_words, next_p and next_rank (T,), with None, NaN
    and 0 after the text's last token. A top-k cell holding the real next token is framed;
    `selected` frames a row."""
    T, k = np.shape(top_p)
    top_p = np.asarray(top_p, dtype=np.float64)
    next_p = np.asarray(next_p, dtype=np.float64)
    z = np.concatenate([top_p, next_p[:, None]], axis=1)  # (T, k + 1)
    text = np.full((T, k + 1), "", dtype=object)
    for t in range(T):
        for j in range(k):
            text[t, j] = f"{label(top_words[t][j], WORD_CHARS)} {top_p[t, j]:.2f}"
        if next_words[t] is not None:
            text[t, k] = (f"{label(next_words[t], WORD_CHARS)} {next_p[t]:.2f} · "
                          f"#{int(next_rank[t]):,}")
    columns = [_ordinal(j + 1) for j in range(k)] + ["really next · rank"]
    rows = axis_labels(tokens)
    fig = go.Figure(go.Heatmap(
        z=z, x=columns, y=rows, text=text, texttemplate="%{text}", textfont=dict(size=13),
        colorscale=COLORSCALE, zmin=0, zmax=1, xgap=2, ygap=2, hoverongaps=False,
        colorbar=dict(title=dict(text="probability"), thickness=10, len=0.6),
        hovertemplate="after %{y}: %{text}<extra></extra>"))
    shapes = [dict(type="rect", x0=j - 0.5, x1=j + 0.5, y0=t - 0.5, y1=t + 0.5,
                   line=dict(color=MARK, width=3))
              for t in range(T) for j in range(k) if int(next_rank[t]) == j + 1]
    if selected is not None:
        shapes.append(dict(type="rect", x0=-0.5, x1=k + 0.5, y0=selected - 0.5,
                           y1=selected + 0.5, line=dict(color="black", width=2, dash="dot")))
    fig.update_xaxes(side="top", type="category", fixedrange=True)
    fig.update_yaxes(type="category", autorange="reversed", fixedrange=True,
                     title=dict(text="after the token"))
    fig.update_layout(title=dict(text=label(title) if title else "", x=0, font=dict(size=14)),
                      font=FONT, shapes=shapes, height=110 + 30 * T,
                      margin=dict(l=10, r=10, t=80 if title else 40, b=10))
    return fig


def top_k_change_figure(words, before, after, n_off: int, title="") -> go.Figure:
    """The words the model expects at one position, with every head on and with n_off heads off:
    two bars per word (probabilities), most likely first."""
    ticks = axis_labels(words)
    fig = go.Figure()
    for name, p, colour in (("all heads on", before, "#1f77b4"),
                            (f"{n_off} head{'s' * (n_off != 1)} off", after, "#ff7f0e")):
        p = np.asarray(p, dtype=np.float64)
        fig.add_bar(name=name, y=ticks, x=p, orientation="h", marker_color=colour,
                    text=[f"{v:.3f}" for v in p], textposition="outside", cliponaxis=False,
                    constraintext="none",  # plotly would shrink it to the bar's thickness
                    hovertemplate=f"{name}, %{{y}}: %{{x:.4f}}<extra></extra>")
    top = max(0.05, float(np.max(np.concatenate([before, after]), initial=0)))
    fig.update_yaxes(type="category", autorange="reversed", fixedrange=True)
    fig.update_xaxes(title=dict(text="probability"), range=[0, 1.2 * top], fixedrange=True)
    fig.update_layout(title=dict(text=label(title) if title else "", x=0, font=dict(size=14)),
                      font=FONT, barmode="group", height=120 + 44 * max(len(words), 3),
                      margin=dict(l=10, r=10, t=60 if title else 20, b=10),
                      legend=dict(orientation="h", y=-0.12))
    return fig


def logit_heads_figure(heads, word: str, compact: bool = False) -> go.Figure:
    """Each head's direct term in the logit of `word` (L, H): red pushes it up, blue down,
    white 0, on a scale symmetric about 0. compact (a projector): the number printed only in
    the TOP_CELLS largest heads' cells, and a tall model's layers labelled sparsely."""
    h = np.asarray(heads, dtype=np.float64)
    L, _ = h.shape
    m = max(1e-6, float(np.abs(h).max(initial=0)))
    text = np.vectorize(lambda v: f"{v:+.2f}")(h)
    if compact:
        keep = np.abs(h) >= np.sort(np.abs(h).ravel())[-min(TOP_CELLS, h.size)]
        text = np.where(keep, text, " ")  # a blank cell (labels show "" as ␣)
    fig = _head_grid(h, f"Each head's term in the logit of “{word}”", "logit term", text=text,
                     zmin=-m, zmax=m, colorscale=DIVERGING)
    if compact:
        fig.update_yaxes(**sparse_layers(L))
    fig.update_layout(height=max(260, min(24 * L + 130, 900)))
    return fig


def logit_parts_figure(embeddings, mlps, out_biases, norm_bias, heads_total) -> go.Figure:
    """The parts of the logit that are not single heads: the embeddings, each layer's MLP
    (M1, M2, ...), the attention blocks' output biases and the final norm's bias (each where
    the model has them), and the heads' sum for scale."""
    mlps = np.asarray(mlps, dtype=np.float64)
    names = ["embeddings"] + [f"M{i + 1}" for i in range(len(mlps))]
    values = [float(embeddings), *mlps.tolist()]
    if np.any(np.asarray(out_biases) != 0):
        names.append("b_O (all layers)")
        values.append(float(np.sum(out_biases)))
    if norm_bias:
        names.append("final norm bias")
        values.append(float(norm_bias))
    names.append("all heads")
    values.append(float(heads_total))
    fig = go.Figure(go.Bar(
        x=names, y=values, marker_color=[UP if v >= 0 else DOWN for v in values],
        hovertemplate="%{x}: %{y:+.3f}<extra></extra>"))
    fig.update_xaxes(type="category", fixedrange=True)
    fig.update_yaxes(title=dict(text="logit term"), zeroline=True, zerolinecolor="#444",
                     fixedrange=True)
    fig.update_layout(title=dict(text="The other parts: embeddings, each layer's MLP (M1 = "
                                      "layer 1), biases, and all heads together", x=0,
                                 font=dict(size=14)),
                      font=FONT, height=340, margin=dict(l=10, r=10, t=60, b=10))
    return fig
