"""The one escaper (headscope.ui.labels.label) and every figure builder: user text is drawn
literally, never as plotly's pseudo-HTML, with control and format characters made visible."""

import json
import re

import numpy as np
import plotly.io as pio
import pytest

from headscope.ui import figures
from headscope.ui.labels import ZWSP, axis_labels, label, visible
from testkit.apptest import TAG, plain_label

# what a student can type: markup, an entity, control characters and zero-width characters
NASTY = "<script>alert(1)</script>&amp;\x00\x1b\u200b\u202e"
SEEN = "&lt;script&gt;alert(1)&lt;/script&gt;&amp;amp;␀␛&lt;U+200B&gt;&lt;U+202E&gt;"


def test_the_escaper():
    assert label(NASTY) == SEEN
    assert plain_label(label(NASTY)) == visible(NASTY)
    assert label("") == "␣"  # an empty token is still something to point at
    assert label("telescope", max_chars=8) == "telesco…"
    assert label("<b>bold</b>", max_chars=5) == "&lt;b&gt;b…"  # cut first, then escaped
    ticks = axis_labels(["the", "cat", "the"])  # repeats stay apart, invisibly
    assert ticks == ["the", "cat", "the" + ZWSP] and [plain_label(t) for t in ticks][2] == "the"


def maps(*shape):
    x = np.random.default_rng(0).random(shape).astype(np.float32)
    return x / x.sum(-1, keepdims=True)


T = ["[CLS]", NASTY, "with", NASTY + "2", "[SEP]"]
SPECIAL = [True, False, False, False, True]
N = len(T)
# mha_core.one_head's results (numbers only: these two figures draw no text of the user's)
ONE_HEAD = {"heads": 4, "layers": [{"layer": 1, "summed": -0.5, "best_head_r2": 0.1,
                                    "fitted": {"1": 0.3, "2": 0.5, "H": 1.0},
                                    "fitted_fresh_H": 0.4}]}
# Every builder, with NASTY in every text it is given (tokens, titles, names, labels)
CALLS = {
    figures.focus_grid: lambda: figures.focus_grid(np.array([[1, 3], [2, 1]]),
                                                   np.full((2, 2), 0.5), T, SPECIAL, NASTY,
                                                   title=NASTY),
    figures.atlas_figure: lambda: figures.atlas_figure(maps(2, 2, N, N), T,
                                                       [["CLS", "het"], ["prev", "self"]],
                                                       title=NASTY),
    figures.rollout_figure: lambda: figures.rollout_figure(maps(2, N, N), maps(2, N, N), T),
    figures.side_by_side_figure: lambda: figures.side_by_side_figure(
        maps(N, N), T, maps(N, N), T, NASTY, NASTY, focus_a=1),
    figures.metric_grid_figure: lambda: figures.metric_grid_figure(
        np.ones((2, 2)), [[NASTY, "a"], ["b", "c"]], NASTY, NASTY),
    figures.importance_figure: lambda: figures.importance_figure(np.ones((2, 3))),
    figures.map_change_figure: lambda: figures.map_change_figure(np.ones((2, 3)),
                                                                 np.ones((2, 3))),
    figures.diff_grid_figure: lambda: figures.diff_grid_figure(np.ones((2, 3)), (0, 1)),
    figures.pruning_curve_figure: lambda: figures.pruning_curve_figure(np.linspace(0, 1, 7)),
    figures.token_change_figure: lambda: figures.token_change_figure(T, np.ones(N)),
    figures.curves_figure: lambda: figures.curves_figure({NASTY: ([0, 1], [1, 0])}, NASTY,
                                                         NASTY, NASTY),
    figures.cost_figure: lambda: figures.cost_figure([NASTY, "b"], [1, 2], [1, 2], [1, 2],
                                                     NASTY),
    figures.matrix_figure: lambda: figures.matrix_figure(np.ones((2, 2)), [NASTY, "r"],
                                                         [NASTY, "c"], NASTY),
    figures.slices_figure: lambda: figures.slices_figure(np.ones((2, 4)), NASTY),
    figures.similarity_figure: lambda: figures.similarity_figure(np.eye(2), NASTY),
    figures.lab_maps_figure: lambda: figures.lab_maps_figure(maps(2, N, N), T, [NASTY] * 2),
    figures.neuron_figure: lambda: figures.neuron_figure(T, np.ones((N, 3)), np.ones(N),
                                                         np.full(N, 1 / N), NASTY),
    figures.mask_change_figure: lambda: figures.mask_change_figure(np.ones((2, 3)), (0, 1)),
    figures.mask_importance_figure: lambda: figures.mask_importance_figure(np.ones((2, 3)),
                                                                           NASTY),
    figures.prediction_bars: lambda: figures.prediction_bars([(NASTY, 0.5), ("cat", 0.25)],
                                                             NASTY, highlight=NASTY),
    figures.norm_shares_figure: lambda: figures.norm_shares_figure(
        {by: {k: np.full(2, 0.3) for k in ("cls", "sep", "punct")} for by in ("weight", "norm")},
        NASTY),
    figures.relation_matrix_figure: lambda: figures.relation_matrix_figure(
        np.full((2, 2, 2), 0.5), [NASTY, "det"], [100, 120], np.full((2, 2, 2), NASTY,
                                                                     dtype=object),
        best=[(0, 1), (1, 0)], title=NASTY),
    figures.arcs_figure: lambda: figures.arcs_figure([NASTY, "saw", "man"], [(0, 1), (2, 1)],
                                                     gold=[(0, 1, NASTY), (1, -1, "root"),
                                                           (2, 1, "obj")],
                                                     title=NASTY, relation=NASTY),
    figures.qk_scatter_figure: lambda: figures.qk_scatter_figure(
        np.zeros((4, 2)), [NASTY, "cat"], [0, 0], [0, 1], [NASTY], title=NASTY),
    figures.token_attention_figure: lambda: figures.token_attention_figure(
        np.full(N, 1 / N), T, 1, "query", title=NASTY),
    figures.one_head_bars: lambda: figures.one_head_bars(ONE_HEAD),
    figures.heads_curve: lambda: figures.heads_curve(ONE_HEAD),
    figures.next_word.next_word_strip: lambda: figures.next_word.next_word_strip(
        T, [[NASTY, "a"]] * N, np.full((N, 2), 0.5), T[1:] + [None], [0.2] * (N - 1) + [np.nan],
        [1] * (N - 1) + [0], selected=1, title=NASTY),
    figures.next_word.top_k_change_figure: lambda: figures.next_word.top_k_change_figure(
        [NASTY, "cat"], [0.5, 0.2], [0.1, 0.4], 3, title=NASTY),
    figures.next_word.logit_heads_figure: lambda: figures.next_word.logit_heads_figure(
        np.ones((2, 3)), NASTY, compact=True),
    figures.next_word.logit_parts_figure: lambda: figures.next_word.logit_parts_figure(
        1.0, np.ones(2), np.ones(2), 0.5, 2.0),
    figures.sinks.sink_grids_figure: lambda: figures.sinks.sink_grids_figure(
        np.full((2, 3), 0.5), np.full((2, 3), 0.2), NASTY),
    figures.sinks.sink_rate_figure: lambda: figures.sinks.sink_rate_figure(
        np.ones(2), np.zeros(2), 0.3),
    figures.sinks.both_ways_figure: lambda: figures.sinks.both_ways_figure(
        maps(N, N), T, maps(N, N), T, NASTY, NASTY),
}


def test_every_builder_is_covered():
    assert set(CALLS) == set(figures.BUILDERS)


def strings(node):
    """Every string in a figure's JSON, keys included."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield k
            yield from strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v)
    elif isinstance(node, str):
        yield node


@pytest.mark.parametrize("builder", figures.BUILDERS, ids=lambda b: b.__name__)
def test_every_builder_draws_user_text_literally(builder):
    spec = pio.to_json(CALLS[builder](), validate=False)
    assert not TAG.search(spec), TAG.search(spec).group()  # no markup made of user text
    every = list(strings(json.loads(spec)))
    for s in every:  # no string anywhere holds the text unescaped or partly escaped
        assert not re.search(r"&amp;(?!amp;)", s.replace("&amp;amp;", "")), s
        assert "\x00" not in s and "\x1b" not in s and "\u202e" not in s, s
        assert "<script" not in s and "\u200b\u200b" not in s, s
    if builder not in (figures.importance_figure, figures.map_change_figure,
                       figures.diff_grid_figure, figures.pruning_curve_figure,
                       figures.mask_change_figure, figures.one_head_bars,
                       figures.heads_curve, figures.next_word.logit_parts_figure,
                       figures.sinks.sink_rate_figure):  # these draw no text of the user's
        assert any(SEEN in s or "&amp;amp;" in s for s in every), builder.__name__


def test_the_atlas_greys_a_decoders_later_tokens_only_when_told():
    """atlas_figure(causal=True) adds one grey trace over exactly the cells above each tile's
    diagonal (the tiles' own trace keeps its weights); an encoder's atlas has none."""
    import numpy as np

    from headscope.ui.figures.tiles import atlas_figure

    L, H, T = 2, 3, 5
    att = np.tril(np.full((L, H, T, T), 0.2, dtype=np.float32))
    short = np.full((L, H), "het", dtype=object)
    assert [t.name for t in atlas_figure(att, list("abcde"), short).data] == ["tiles", "labels"]
    fig = atlas_figure(att, list("abcde"), short, causal=True)
    grey = next(t for t in fig.data if t.name == "not attendable")
    tiles = next(t for t in fig.data if t.name == "tiles")
    z, w = np.array(grey.z, dtype=float), np.array(tiles.z, dtype=float)
    assert np.isfinite(z).sum() == L * H * T * (T - 1) // 2
    assert (w[np.isfinite(z)] == 0).all()  # the grey lies on the causal zeros alone
