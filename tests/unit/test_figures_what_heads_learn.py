"""The What heads learn figures: arcs (colours by the gold tree, user text escaped), the heads x
relations matrix, the query/key scatter and the picked token's attention, weight vs norm."""

import numpy as np

from headscope.ui import figures
from headscope.ui.figures.syntax import RIGHT, UNKNOWN, WRONG

HOSTILE = ["<b>I</b>", "saw", "&amp;", "\x00", "<script>"]


def predicted_markers(fig):
    return [(t["x"][0], t["marker"]["color"], t["customdata"][0]) for t in fig.data
            if (t.hovertemplate or "").startswith("predicted")]


def test_arcs_coloured_by_the_gold_tree_and_escaped():
    gold = [(0, 1, "nsubj"), (1, -1, "root"), (2, 1, "obj"), (3, 2, "det"), (4, 1, "<i>rel")]
    fig = figures.arcs_figure(HOSTILE, [(0, 1), (2, 3), (3, 2)], gold, title="<b>t</b>",
                              relation="obj")
    marks = predicted_markers(fig)
    assert [(x, c) for x, c, _ in marks] == [(0, RIGHT), (2, WRONG), (3, RIGHT)]
    assert marks[0][2] == "saw → &lt;b&gt;I&lt;/b&gt; ✓ gold"
    words = fig.data[-1]
    assert list(words.text) == ["&lt;b&gt;I&lt;/b&gt;", "saw", "&amp;amp;", "␀",
                                "&lt;script&gt;"]
    labels = [t.text[1] for t in fig.data if (t.hovertemplate or "").startswith("gold")]
    assert labels == ["nsubj", "obj", "det", "&lt;i&gt;rel"]  # the root has no arc
    assert fig.layout.title.text == "&lt;b&gt;t&lt;/b&gt;"
    strong = [t.line.color for t in fig.data if t.mode == "lines" and t.line.width == 1.5]
    assert strong == ["#c8c8c8", "#404040", "#c8c8c8", "#c8c8c8"]  # only obj is dark


def test_arcs_without_gold_are_one_colour():
    fig = figures.arcs_figure(["a", "b"], [(0, 1), (1, 0)])
    assert {c for _, c, _ in predicted_markers(fig)} == {UNKNOWN}
    assert not [t for t in fig.data if (t.hovertemplate or "").startswith("gold")]


def test_relation_matrix():
    acc = np.random.default_rng(0).random((2, 3, 4))  # (L, H, R)
    dirs = np.full((2, 3, 4), "dependent->head", dtype=object)
    fig = figures.relation_matrix_figure(acc, ["all", "det", "<x>", "obj"], [9, 5, 3, 1], dirs,
                                         best=[(0, 0), (1, 2), (0, 1), (1, 0)])
    heat, rings = fig.data
    np.testing.assert_allclose(np.asarray(heat.z), acc.reshape(6, 4), rtol=1e-6)
    assert list(heat.x) == ["all (9)", "det (5)", "&lt;x&gt; (3)", "obj (1)"]
    assert list(heat.y) == ["L1 H1", "L1 H2", "L1 H3", "L2 H1", "L2 H2", "L2 H3"]
    assert list(rings.y) == ["L1 H1", "L2 H3", "L1 H2", "L2 H1"]
    assert heat.customdata[5][3].tolist() == ["L2 H3", "dependent-&gt;head", "obj (1)"]


def test_relation_matrix_across_puts_the_heads_along_x():
    """A projector's form: relations down, heads across with one tick per layer; the same cells,
    rings and hover (head, direction, relation) as the upright matrix."""
    acc = np.random.default_rng(1).random((2, 3, 4))  # (L, H, R)
    dirs = np.array(["dependent->head", "head<-dependent"], dtype=object)[
        np.random.default_rng(2).integers(0, 2, (2, 3, 4))]
    best = [(0, 0), (1, 2), (0, 1), (1, 0)]
    args = (acc, ["all", "det", "<x>", "obj"], [9, 5, 3, 1], dirs)
    upright, _ = figures.relation_matrix_figure(*args, best=best).data
    heat, rings = figures.relation_matrix_figure(*args, best=best, across=True).data
    np.testing.assert_allclose(np.asarray(heat.z), acc.reshape(6, 4).T, rtol=1e-6)
    assert list(heat.x) == ["L1 H1", "L1 H2", "L1 H3", "L2 H1", "L2 H2", "L2 H3"]
    assert list(heat.y) == ["all (9)", "det (5)", "&lt;x&gt; (3)", "obj (1)"]
    assert list(rings.x) == ["L1 H1", "L2 H3", "L1 H2", "L2 H1"] and rings.y == heat.y
    for r in range(4):
        for h in range(6):
            assert list(heat.customdata[r][h]) == list(upright.customdata[h][r])
    fig = figures.relation_matrix_figure(*args, best=best, across=True)
    assert list(fig.layout.xaxis.tickvals) == ["L1 H1", "L2 H1"]
    assert list(fig.layout.xaxis.ticktext) == ["L1", "L2"]


def test_qk_scatter_points_and_hover():
    xy = np.arange(12, dtype=float).reshape(6, 2)  # 3 queries, then 3 keys
    fig = figures.qk_scatter_figure(xy, ["[CLS]", "<b>", "[SEP]"], np.array([0, 0, 0]),
                                    np.array([0, 1, 2]), ["a <b> sentence"])
    q, k = fig.data
    assert (q.name, k.name) == ("queries", "keys")
    np.testing.assert_array_equal(np.asarray(k.x), [6, 8, 10])
    assert q.text[1] == "query “&lt;b&gt;” (#1)<br>a &lt;b&gt; sentence"
    np.testing.assert_array_equal(np.asarray(k.customdata), [[1, 0], [1, 1], [1, 2]])


def test_token_attention_keeps_user_text_out_of_the_template():
    fig = figures.token_attention_figure([0.1, 0.7, 0.2], ["a", "%{y}<b>", "c"], 1, "query")
    bar = fig.data[0]
    assert list(bar.marker.color)[1] == "#d62728"
    assert "%{y}<b>" not in bar.hovertemplate and bar.customdata[0] == "%{y}&lt;b&gt;"


def test_norm_shares_lines():
    shares = {by: {k: np.linspace(0, 0.5, 4) for k in ("cls", "sep", "punct")}
              for by in ("weight", "norm")}
    fig = figures.norm_shares_figure(shares)
    assert [t.name for t in fig.data] == [f"{k} by {b}" for k in ("[CLS]", "[SEP]",
                                                                  "punctuation")
                                          for b in ("weight", "norm")]
    assert [t.line.dash for t in fig.data] == ["solid", "dash"] * 3
    assert list(fig.data[0].x) == ["L1", "L2", "L3", "L4"]


def test_atlas_by_norm_shows_raw_norms_in_the_hover():
    att = np.full((1, 2, 3, 3), 1 / 3, dtype=np.float32)
    raw = att * np.array([1.0, 2.0, 4.0], dtype=np.float32)
    fig = figures.atlas_figure(att, ["[CLS]", "a", "[SEP]"], np.array([["het", "het"]]),
                               raw=raw)
    text = np.asarray(fig.data[0].text)
    cells = [t for t in text.ravel() if t]
    assert cells[0].endswith("→[CLS] 0.33 (‖αf‖ 0.333)")
    assert fig.data[0].colorbar.title.text == "share of ‖αf‖"
