"""Is one head enough? Per layer, the share R² of the layer's attention output reproduced by the
summed head, the best original head, the best-fit single head, and fitted layers of h heads
(mha_core.one_head's results as a dict)."""

import plotly.graph_objects as go

from ..labels import label

KINDS = (("summed", "summed head (the weights read as one head)"),
         ("best_head_r2", "best original head alone"),
         ("fitted_1", "best-fit single head"))


def _value(row: dict, key: str) -> float:
    return row["fitted"]["1"] if key == "fitted_1" else row[key]


def one_head_bars(result: dict, height: int = 340) -> go.Figure:
    """Grouped bars: per layer, R² of (a), (b) and (c) on the held-out sentences."""
    layers = [f"layer {r['layer']}" for r in result["layers"]]
    fig = go.Figure()
    for key, name in KINDS:
        ys = [_value(r, key) for r in result["layers"]]
        fig.add_bar(x=layers, y=ys, name=label(name), text=[f"{y:.2f}" for y in ys],
                    textposition="outside", cliponaxis=False)
    low = min(-0.1, *(_value(r, k) for r in result["layers"] for k, _ in KINDS))
    fig.update_yaxes(title="R² on held-out sentences", range=[max(low, -2.0) - 0.1, 1.1],
                     dtick=0.5)
    fig.update_layout(barmode="group", height=height, title="How much of each layer one head "
                      "reproduces (1 = all of it)", margin={"l": 70, "r": 10, "t": 50, "b": 10},
                      legend={"orientation": "h", "y": -0.2})
    return fig


def heads_curve(result: dict, height: int = 340) -> go.Figure:
    """R²(h): per layer, the fitted layer of h heads (same parameters, same budget) against h."""
    H = result["heads"]
    fig = go.Figure()
    for r in result["layers"]:
        hs = sorted((H if k == "H" else int(k), v) for k, v in r["fitted"].items())
        fig.add_scatter(x=[h for h, _ in hs], y=[v for _, v in hs], mode="lines+markers",
                        name=f"layer {r['layer']}")
    fresh = [r["fitted_fresh_H"] for r in result["layers"] if "fitted_fresh_H" in r]
    if fresh:  # the same procedure recovering a layer H heads represent exactly
        fig.add_scatter(x=[H] * len(fresh), y=fresh, mode="markers", marker_symbol="circle-open",
                        marker_size=10, name=f"{H} heads from a fresh start")
    fig.update_xaxes(title="heads h (width d_model / h)", type="log",
                     tickvals=sorted({1, 2, 4, H}))
    fig.update_yaxes(title="R² on held-out sentences", dtick=0.2)
    fig.update_layout(height=height, title="How many heads a fitted layer needs",
                      margin={"l": 70, "r": 10, "t": 50, "b": 50})  # legend at the right
    return fig
