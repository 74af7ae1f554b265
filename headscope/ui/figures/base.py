"""What every figure builder shares: plain-dict figures without run-time validation, titles,
and the projector copy of any figure.

Figures are written as plain dicts, not through make_subplots and add_trace, which cost a
rerun far more on a many-map grid. The Explorer's builders also skip plotly's validation
(figure()); the tests validate their output.
"""

import plotly.graph_objects as go

from ..style import FONT, PRESENT_MIN_PX

HOVER_CELLS = 60_000  # above this many cells a figure gets no per-cell hover text (page weight)


def figure(data, layout) -> go.Figure:
    """The Explorer's figures, built from plain dicts WITHOUT plotly's validation, which was a
    large share of every rerun's server time (docs/performance.md). The tests validate every
    builder's output instead (tests/unit/test_figures_valid.py)."""
    return go.Figure(dict(data=data, layout=layout), _validate=False)


def for_projector(fig, scale: float, max_height: int | None = None,
                  square: bool = False, least: float = PRESENT_MIN_PX) -> go.Figure:
    """A copy of any figure for a projector: its height, margins and every font (text, titles,
    tick labels, annotations, cell text, colour bars, legends) `scale` times larger and never
    below `least` px (legible from the back of a room). Worked on the plain dict, not validated
    again.

    max_height: the most pixels the figure may take once enlarged (the room a page leaves it on
    the first screen); a taller figure is cut to it, and a figure without a height of its own
    gets it. square: its (single) plot keeps square cells, narrower and centred when cut."""
    d = fig.to_dict()
    lay = d.setdefault("layout", {})
    base = lay.get("font", {}).get("size") or FONT["size"]
    grow = max(scale, least / base)  # margins grow as much as the text they hold

    done = set()  # the fonts made here (each is scaled once)

    def bigger(obj: dict, key: str = "font", default=base):
        font = obj.get(key) or {}  # a new dict: builders may share one font between axes
        obj[key] = {**font, "size": max(round((font.get("size") or default) * scale, 1), least)}
        done.add(id(obj[key]))

    def every_font(obj):  # fonts nested anywhere else (colour bars, legends, axis titles)
        if isinstance(obj, dict):
            if isinstance(obj.get("title"), str):  # a bare title: its font would be plotly's
                obj["title"] = {"text": obj["title"]}
            if isinstance(obj.get("title"), dict) and "font" not in obj["title"]:
                bigger(obj["title"])
            for key, val in list(obj.items()):
                if key in ("font", "tickfont", "textfont") and isinstance(val, dict):
                    if id(val) not in done:
                        bigger(obj, key)
                else:
                    every_font(val)
        elif isinstance(obj, list):
            for val in obj:
                every_font(val)

    bigger(lay)
    bigger(lay.setdefault("title", {}), default=16)
    if lay.get("height"):
        lay["height"] = int(lay["height"] * scale)
    if max_height and (lay.get("height") or max_height + 1) > max_height:
        lay["height"] = int(max_height)
    if square:
        lay.setdefault("yaxis", {}).update(scaleanchor="x", scaleratio=1)
        lay.setdefault("xaxis", {}).update(constrain="domain")
    m = lay.setdefault("margin", {})
    for side, default in (("l", 80), ("b", 80), ("t", 100)):
        m[side] = int((m.get(side) or default) * grow)
    # explicit sizes where a theme's template would set its own (Streamlit's sets tick labels,
    # legends and colour bars smaller than the layout's font)
    lay.setdefault("xaxis", {})
    lay.setdefault("yaxis", {})
    bigger(lay.setdefault("legend", {}))
    for name, axis in lay.items():
        if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            bigger(axis, "tickfont")
        if name.startswith("coloraxis") and isinstance(axis, dict):
            bigger(axis.setdefault("colorbar", {}), "tickfont")
    for trace in d.get("data", []):
        if trace.get("type") in ("heatmap", "contour", "histogram2d"):
            bigger(trace.setdefault("colorbar", {}), "tickfont")
    for note in lay.get("annotations", []):
        bigger(note)
    for trace in d.get("data", []):
        if "textfont" in trace or "texttemplate" in trace or "text" in trace:
            bigger(trace, "textfont")
    every_font(lay)
    every_font(d.get("data", []))
    return go.Figure(d, _validate=False)


def centred_title(text, size=16) -> dict:
    """A title dict; text must already be a label (labels.label)."""
    return dict(text=text, x=0.5, xanchor="center", font=dict(size=size))


def sparse_layers(L: int, most: int = 12) -> dict:
    """Y-axis ticks for a layers x heads grid with at most about `most` layer labels (L1, then
    every 2nd, 5th or 10th layer): a projector's rows of a 30-layer grid are lower than its
    text."""
    step = next((k for k in (1, 2, 5, 10) if L <= k * most), -(-L // most))
    rows = [0, *range(step - 1, L, step)] if step > 1 else list(range(L))
    return dict(tickvals=rows, ticktext=[f"L{i + 1}" for i in rows])
