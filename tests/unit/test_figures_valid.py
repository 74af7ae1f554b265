"""The Explorer's figure builders skip plotly's validation at run time (figures.base.figure, for
speed): here every one of them is validated by plotly, and validation changes nothing."""

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from headscope.ui import figures
from headscope.ui.figures.base import FONT, figure

LABELS = ["[CLS]", "i", "saw", "<b>", "saw", "[SEP]"]
SPECIAL = [True, False, False, False, False, True]


def maps(*shape, seed=0):
    x = np.random.default_rng(seed).random(shape).astype(np.float32)
    return x / x.sum(-1, keepdims=True)


ONE_HEAD = {"heads": 4, "layers": [{"layer": 1, "summed": -1.5, "best_head_r2": 0.1,
                                    "fitted": {"1": 0.3, "2": 0.5, "H": 1.0},
                                    "fitted_fresh_H": 0.4}]}
BUILDERS = {
    "one_head_bars": lambda: figures.one_head_bars(ONE_HEAD),
    "one_head_curve": lambda: figures.heads_curve(ONE_HEAD),
    "focus_grid": lambda: figures.focus_grid(np.arange(12).reshape(2, 6) % 6,
                                             np.full((2, 6), 0.5), LABELS, SPECIAL, "with",
                                             title="A"),
    "relation_matrix": lambda: figures.relation_matrix_figure(
        maps(2, 3, 4), ["all", "det", "<b>", "obj"], [9, 5, 3, 1],
        np.full((2, 3, 4), "dependent->head", dtype=object), best=[(0, 0)] * 4, title="t"),
    "relation_matrix_across": lambda: figures.relation_matrix_figure(
        maps(2, 3, 4), ["all", "det", "<b>", "obj"], [9, 5, 3, 1],
        np.full((2, 3, 4), "dependent->head", dtype=object), best=[(0, 0)] * 4, across=True),
    "projector_cut_square": lambda: figures.for_projector(figures.atlas_figure(
        maps(2, 3, 6, 6), LABELS, np.full((2, 3), "het", dtype=object)), 1.35, max_height=300,
        square=True),
    "arcs": lambda: figures.arcs_figure(LABELS[1:5], [(0, 1), (2, 1)],
                                        [(0, 1, "nsubj"), (1, -1, "root"), (2, 1, "obj"),
                                         (3, 2, "det")], title="t", relation="obj"),
    "arcs_no_gold": lambda: figures.arcs_figure(LABELS[1:5], [(0, 1), (2, 1)]),
    "qk_scatter": lambda: figures.qk_scatter_figure(
        maps(12, 2), LABELS, np.zeros(6, dtype=int), np.arange(6), ["a sentence"], title="t"),
    "token_attention": lambda: figures.token_attention_figure(maps(6), LABELS, 2, "key", "t"),
    "projector": lambda: figures.for_projector(figures.side_by_side_figure(
        maps(6, 6), LABELS, maps(6, 6), LABELS, "a", "b"), 1.35),
}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_builder_output_passes_plotly_validation_unchanged(name):
    """Validation raises nothing and changes nothing: the browser gets what a validated figure
    would send (plotly.js reads some values differently from plotly.py, e.g. the named
    colour scale "Blues", which validation spells out and plotly.js reverses)."""
    fig = BUILDERS[name]()
    raw = json.loads(pio.to_json(fig, validate=False))
    checked = go.Figure(fig.to_dict())  # validates: raises on any invalid property or value
    assert json.loads(pio.to_json(checked)) == raw


def test_unvalidated_is_really_unvalidated():
    """The check above can fail: plotly's validation rejects what figure() lets through."""
    bad = figure([dict(type="heatmap", z=[[1]], notaproperty=1)], {})
    with pytest.raises(ValueError):
        go.Figure(bad.to_dict())


def test_projector_scales_every_font_once_and_leaves_the_figure_alone():
    """Every axis's tick labels, title and annotation grow by exactly `scale` (to 18 px at
    least), also where a builder shares one font dict between axes, and the original figure
    keeps its sizes."""
    fig = figures.side_by_side_figure(maps(6, 6), LABELS, maps(6, 6), LABELS, "a", "b")
    before = json.loads(pio.to_json(fig, validate=False))["layout"]
    after = json.loads(pio.to_json(figures.for_projector(fig, 1.35), validate=False))["layout"]
    axes = [k for k in before if k.startswith(("xaxis", "yaxis"))]
    assert len(axes) == 4 and len(before["annotations"]) == 2
    for k in axes:
        size = before[k].get("tickfont", {}).get("size") or FONT["size"]  # inherited
        assert after[k]["tickfont"]["size"] == max(round(size * 1.35, 1), 18), k
    for a, b in zip(before["annotations"], after["annotations"]):
        assert b["font"]["size"] == max(round(a["font"]["size"] * 1.35, 1), 18)
    big = figures.for_projector(fig, 3.0, least=0)  # no floor: exactly 3 times
    assert big.layout.xaxis.tickfont.size == round(
        (before["xaxis"].get("tickfont", {}).get("size") or FONT["size"]) * 3.0, 1)
    assert json.loads(pio.to_json(fig, validate=False))["layout"] == before


def test_projector_cuts_a_tall_figure_to_its_room_and_keeps_square_cells():
    """max_height: the enlarged height, at most the room (a figure without a height gets the
    room); square: the plot's y axis anchored to x, its domain shrunk, not its range."""
    fig = figures.focus_grid(np.arange(12).reshape(2, 6) % 6, np.full((2, 6), 0.5), LABELS,
                             SPECIAL, "with", height=420)  # 420 * 1.35 = 567 enlarged
    assert figures.for_projector(fig, 1.35).layout.height == 567
    assert figures.for_projector(fig, 1.35, max_height=800).layout.height == 567
    cut = figures.for_projector(fig, 1.35, max_height=400, square=True).layout
    assert cut.height == 400 and cut.yaxis.scaleanchor == "x" and cut.xaxis.constrain == "domain"
    assert figures.for_projector(fig, 1.35, max_height=400).layout.yaxis.scaleanchor is None
    bare = figure([dict(type="bar", x=[1], y=[1])], {})
    assert figures.for_projector(bare, 1.35).layout.height is None
    assert figures.for_projector(bare, 1.35, max_height=300).layout.height == 300
    assert fig.layout.height == 420  # the original is left alone
