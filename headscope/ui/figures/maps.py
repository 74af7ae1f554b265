"""One attention map as a zoomable plotly heatmap (heatmap). The pages draw their maps with the
attention component (headscope.ui.attention); this is the plotly figure of one map.

A map is a (T, T) array: row = query, column = key. Labels are the tokens (or words)
in order; axes are categorical with unique labels (labels.axis_labels), so repeated tokens stay
separate rows. T: tokens.
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
