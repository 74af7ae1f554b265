"""One head's query/key space (AttentionViz): queries and keys in one 2-D scatter, and the
attention of the token picked in it.

Shape letters: N tokens (so 2N points), T tokens of one sentence.
"""

import numpy as np

from ..labels import axis_labels, label
from ..labels import labels as label_list
from ..style import FONT
from .base import centred_title, figure

QUERY, KEY = "#1f77b4", "#ff7f0e"
KINDS = ("query", "key")


def qk_scatter_figure(xy, tokens, sentence, position, texts, title="") -> object:
    """xy (2N, 2): the N queries first, then the N keys (mha_core.qk_space.project); tokens,
    sentence (index into texts) and position of each of the N tokens. Hover: the token, its
    position and its sentence. Each point's customdata is [kind, token index] for a click."""
    xy = np.asarray(xy, dtype=np.float32)
    N = len(tokens)
    toks = label_list(tokens)
    sents = label_list(texts, max_chars=70)
    data = []
    for k, (kind, colour) in enumerate(zip(KINDS, (QUERY, KEY))):
        pts = xy[k * N:(k + 1) * N]
        hover = [f"{kind} “{toks[i]}” (#{position[i]})<br>{sents[sentence[i]]}"
                 for i in range(N)]
        data.append(dict(type="scattergl", x=pts[:, 0], y=pts[:, 1], mode="markers",
                         name="queries" if kind == "query" else "keys",
                         marker=dict(color=colour, size=6, opacity=0.7),
                         text=hover, customdata=np.stack([np.full(N, k), np.arange(N)], 1),
                         hovertemplate="%{text}<extra></extra>"))
    layout = dict(title=centred_title(label(title), size=14), font=FONT, height=560,
                  margin=dict(l=10, r=10, t=50, b=10), dragmode="pan",
                  xaxis=dict(showticklabels=False, zeroline=False),
                  yaxis=dict(showticklabels=False, zeroline=False, scaleanchor="x"),
                  legend=dict(orientation="h", y=-0.02), clickmode="event+select")
    return figure(data, layout)


def token_attention_figure(weights, tokens, picked: int, kind: str, title="") -> object:
    """The picked token's attention in its sentence: as a query, its row (where it looks); as a
    key, its column (who looks at it). weights (T,), the picked token outlined."""
    weights = np.asarray(weights, dtype=np.float32)
    names = axis_labels(tokens)
    colours = ["#d62728" if i == picked else (QUERY if kind == "query" else KEY)
               for i in range(len(names))]
    what = "looks at" if kind == "query" else "is looked at by"
    data = [dict(type="bar", x=names, y=weights, marker_color=colours,
                 customdata=[label(tokens[picked])] * len(names),  # user text as data only
                 hovertemplate=f"“%{{customdata}}” {what} %{{x}}: %{{y:.3f}}<extra></extra>")]
    layout = dict(title=centred_title(label(title), size=14), font=FONT, height=320,
                  margin=dict(l=50, r=10, t=50, b=90),
                  xaxis=dict(type="category", tickangle=-60, fixedrange=True),
                  yaxis=dict(title=dict(text="weight"), range=[0, 1], fixedrange=True))
    return figure(data, layout)
