"""Heads against dependency trees: the heads x relations accuracy matrix, and one sentence's
arcs (a head's predictions above the words, the gold tree below).

Shape letters: L layers, H heads, R relations, W words.
"""

import numpy as np

from mha_core.heads import head_names

from ..labels import label
from ..labels import labels as label_list
from ..style import ACCURACY_SCALE, FONT
from .base import centred_title, figure

RIGHT, WRONG, UNKNOWN, GOLD = "#2ca02c", "#d62728", "#1f77b4", "#7f7f7f"


def relation_matrix_figure(acc, relations, counts, directions, best=None, title="",
                           across=False) -> object:
    """Every head's accuracy on every relation: acc (L, H, R) in its better direction,
    directions (L, H, R) of direction names, counts (R,) arcs. Rows are heads (L1 H1 first),
    columns relations. best: R (layer, head) pairs from 0 to mark with a ring. across: the
    heads across and the relations down (a wide screen: a projector), each layer's first head
    ticked with the layer's name and a white line between layers."""
    acc = np.asarray(acc, dtype=np.float32)
    L, H, R = acc.shape
    names = head_names(L, H)
    rels = label_list(f"{r} ({n})" for r, n in zip(relations, counts))
    custom = np.stack([np.repeat(np.array(names, dtype=object)[:, None], R, axis=1),
                       np.array(label_list(np.ravel(directions)), dtype=object)
                       .reshape(L * H, R),
                       np.repeat(np.array(rels, dtype=object)[None, :], L * H, axis=0)],
                      axis=-1)  # (L*H, R, 3): head, direction, relation
    z = acc.reshape(L * H, R)  # (L*H, R)
    rings = [] if best is None else [names[layer * H + head] for layer, head in best]
    heads_axis = dict(type="category", fixedrange=True)
    rels_axis = dict(type="category", fixedrange=True)
    if across:  # (R, L*H): heads along x, one tick per layer
        z, custom = z.T, custom.transpose(1, 0, 2)
        x, y, ring_x, ring_y = names, rels, rings, rels
        heads_axis.update(range=[-0.5, L * H - 0.5], tickmode="array", tickvals=names[::H],
                          ticktext=[f"L{i + 1}" for i in range(L)])
        rels_axis.update(autorange="reversed")
        xaxis, yaxis = heads_axis, rels_axis
        height, margin = 110 + 26 * R, dict(l=10, r=10, t=40 if title else 10, b=30)
        shapes = [dict(type="line", xref="x", yref="paper", x0=i * H - 0.5, x1=i * H - 0.5,
                       y0=0, y1=1, line=dict(color="white", width=3)) for i in range(1, L)]
    else:
        x, y, ring_x, ring_y = rels, names, rels, rings
        rels_axis.update(side="top", tickangle=-45)
        heads_axis.update(autorange="reversed", tickfont=dict(size=9))
        xaxis, yaxis = rels_axis, heads_axis
        height, margin = int(np.clip(100 + 9 * L * H, 360, 1500)), dict(l=70, r=10, t=150, b=10)
        shapes = []
    data = [dict(type="heatmap", z=z, x=x, y=y, zmin=0, zmax=1,
                 colorscale=ACCURACY_SCALE, customdata=custom, xgap=0 if across else 1,
                 ygap=1 if across else 0,
                 colorbar=dict(title=dict(text="accuracy"), thickness=10),
                 hovertemplate="%{customdata[0]} · %{customdata[2]}: %{z:.3f} "
                               "(%{customdata[1]})<extra></extra>")]
    if best is not None:
        data.append(dict(type="scatter", mode="markers", x=ring_x, y=ring_y,
                         marker=dict(symbol="circle-open", size=11, color="white",
                                     line=dict(width=2)),
                         hoverinfo="skip", showlegend=False, name="best"))
    layout = dict(title=dict(text=label(title) if title else "", x=0, y=0.995, yanchor="top",
                             font=dict(size=14)), font=FONT, height=height, margin=margin,
                  xaxis=xaxis, yaxis=yaxis)
    if shapes:
        layout["shapes"] = shapes
    return figure(data, layout)


GAP = 0.3  # arcs start this far above (predicted) or below (gold) the words


def _arc(x0, x1, up: bool, n=24):
    """Points of a half ellipse from x0 to x1, above (up) or below the words, its height growing
    with the distance; returns (xs, ys, the arc's furthest y from the words)."""
    t = np.linspace(0, np.pi, n)
    h = 0.35 + 0.25 * abs(x1 - x0)
    xs = (x0 + x1) / 2 + (x0 - x1) / 2 * np.cos(t)
    ys = (GAP + np.sin(t) * h) * (1 if up else -1)
    return xs, ys, GAP + h


def arcs_figure(words, predicted, gold=None, title="", relation=None) -> object:
    """One sentence's dependency arcs, drawn from head to dependent (the arrowhead marks the
    dependent). predicted: (dependent, head) pairs from 0 above the words, green where the gold
    tree has that arc, red where it has another, blue without a gold tree. gold: (dependent,
    head from 0 or -1 for the root, relation) triples below the words, those of `relation`
    darker (punct always light); None when the sentence is not in the treebank."""
    W = len(words)
    words_l = label_list(words)
    gold_head = {d: h for d, h, _ in gold or []}
    data, top, bottom = [], 1.0, -1.0
    for d, h in predicted:
        colour = UNKNOWN if gold is None else RIGHT if gold_head.get(d) == h else WRONG
        xs, ys, height = _arc(h, d, up=True)
        top = max(top, height)
        verdict = "" if gold is None else (" ✓ gold" if colour == RIGHT else " ✗ not gold")
        data.append(dict(type="scatter", x=xs, y=ys, mode="lines", hoverinfo="skip",
                         line=dict(color=colour, width=2), showlegend=False))
        data.append(dict(type="scatter", x=[d], y=[GAP], mode="markers", showlegend=False,
                         marker=dict(symbol="triangle-down", size=10, color=colour),
                         customdata=[f"{words_l[h]} → {words_l[d]}{verdict}"],
                         hovertemplate="predicted %{customdata}<extra></extra>"))
    for d, h, rel in gold or []:
        if h < 0:
            continue
        universal = rel.split(":")[0]
        strong = universal != "punct" and relation in (None, "all", universal)
        colour = "#404040" if strong else "#c8c8c8"
        xs, ys, height = _arc(h, d, up=False)
        bottom = min(bottom, -height)
        data.append(dict(type="scatter", x=xs, y=ys, mode="lines", hoverinfo="skip",
                         line=dict(color=colour, width=1.5), showlegend=False))
        data.append(dict(type="scatter", x=[d, (h + d) / 2], y=[-GAP, -height],
                         mode="markers+text", text=["", label(rel)], textposition="bottom center",
                         textfont=dict(size=11, color=colour), showlegend=False,
                         marker=dict(symbol=["triangle-up", "circle"], size=[10, 1],
                                     color=colour),
                         customdata=[f"{words_l[h]} → {words_l[d]}: {label(rel)}"] * 2,
                         hovertemplate="gold %{customdata}<extra></extra>"))
    data.append(dict(type="scatter", x=list(range(W)), y=[0] * W, mode="text", text=words_l,
                     textfont=dict(size=15, color="#111111"), hoverinfo="skip",
                     showlegend=False))
    layout = dict(title=centred_title(label(title), size=14), font=FONT,
                  height=int(120 + 60 * (top - bottom)), margin=dict(l=10, r=10, t=40, b=10),
                  xaxis=dict(visible=False, range=[-0.7, W - 0.3], fixedrange=True),
                  yaxis=dict(visible=False, range=[bottom - 0.6, top + 0.2], fixedrange=True),
                  plot_bgcolor="white")
    return figure(data, layout)
