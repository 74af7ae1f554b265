"""The Explorer's pieces without Streamlit: analysis, figure builders, exports, and the claim
the page makes about the bundled model."""

import csv
import io
import json
import math

import numpy as np
import plotly.io as pio
import pytest
import torch

from mha_core import figures
from mha_core.analysis import entropy, explorer_view, focus_targets, head_divergence
from mha_core.export import attention_csv, attention_json


def random_maps(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(3 * torch.randn(*shape, generator=g), dim=-1)


def test_head_divergence_is_the_mean_kl_to_the_heads_mean():
    att = random_maps(3, 4, 6, 6)  # (L, H, T, T)
    m = att.mean(dim=1, keepdim=True)  # (L, 1, T, T)
    kl = (att * (att.log() - m.log())).sum(-1).mean(-1).mean(-1)  # (L,)
    torch.testing.assert_close(head_divergence(att), kl, atol=1e-5, rtol=1e-5)
    same = att[:, :1].expand(-1, 4, -1, -1)  # every head identical
    torch.testing.assert_close(head_divergence(same), torch.zeros(3), atol=1e-6, rtol=0)
    one_hot = torch.eye(4)[None, :, None, :].expand(1, 4, 4, 4)  # 4 heads, 4 different keys
    assert head_divergence(one_hot).item() == pytest.approx(math.log(4), abs=1e-5)


def test_explorer_view_word_level_and_hidden_special(tiny):
    res = tiny.attend("the zebra saw a bank")  # "zebra" is not in the tiny vocabulary
    labels, groups = res.words()
    assert any(len(g) > 1 for g in groups), "the test needs a word split into pieces"
    att = res.attentions  # (L, H, T, T)
    maps, shown, special = explorer_view(att, res, word_level=True)
    assert shown == labels and maps.shape[-1] == len(groups)
    torch.testing.assert_close(maps.sum(-1), torch.ones(maps.shape[:-1]), atol=1e-5, rtol=0)
    for i, qg in enumerate(groups):  # by hand: keys summed over pieces, queries averaged
        for j, kg in enumerate(groups):
            want = att[..., qg, :][..., kg].sum(-1).mean(-1)
            torch.testing.assert_close(maps[..., i, j], want, atol=1e-6, rtol=1e-5)
    hidden, kept, _ = explorer_view(att, res, hide_special=True)
    assert kept == res.tokens[1:-1]
    sub = att[..., 1:-1, 1:-1]
    torch.testing.assert_close(hidden, sub / sub.sum(-1, keepdim=True), atol=1e-6, rtol=1e-5)


def test_focus_targets_are_the_argmax_of_the_query_row():
    att = random_maps(2, 3, 5, 5)
    top, weight, rows = focus_targets(att, 2)
    assert top.shape == (2, 3) and rows.shape == (2, 3, 5)
    for la in range(2):
        for h in range(3):
            assert top[la, h] == int(np.argmax(att[la, h, 2].numpy()))
            assert weight[la, h] == att[la, h, 2].max()


def test_bundled_layer_1_reads_with_both_ways(bundled):
    """The page's teaching example: on the bundled model, layer 2 (index 1) has a head that links
    "with" to "saw" (verb reading) and another that links it to "man" (noun reading)."""
    res = bundled.attend("I saw the man with a telescope.")
    top, _, _ = focus_targets(res.attentions, res.tokens.index("with"))
    targets = {res.tokens[t] for t in top[1].tolist()}
    assert {"saw", "man"} <= targets


def test_labels_are_shown_literally():
    assert figures.clean_label("<script>") == "&lt;script&gt;"
    assert figures.clean_label("a&b") == "a&amp;b"
    assert figures.clean_label("\x00") == "␀"
    assert figures.visible("a\u202eb") == "a<U+202E>b"
    assert figures.clean_label("a\u202eb") == "a&lt;U+202E&gt;b"
    labels = ["the", "<b>", "the", "the"]
    ax = figures.axis_labels(labels)
    assert len(set(ax)) == 4  # repeated tokens stay separate categories
    assert [figures.plain_label(x) for x in ax] == labels


def test_heatmap_and_grid_builders():
    maps = random_maps(5, 4, 4).numpy()  # (H, T, T)
    labels = ["[CLS]", "a", "a", "[SEP]"]
    fig = figures.head_grid(maps, labels, [f"head {h}" for h in range(5)], cols=3, selected=4)
    spec = json.loads(pio.to_json(fig))
    assert len(spec["data"]) == 5
    assert spec["layout"]["coloraxis"]["cmin"] == 0 and spec["layout"]["coloraxis"]["cmax"] == 1
    assert len(spec["layout"]["shapes"]) == 1  # the outline of the selected head
    one = figures.heatmap(maps[0], labels, title="t")
    np.testing.assert_allclose(np.asarray(one.data[0].z), maps[0], atol=1e-7)
    assert one.layout.yaxis.autorange == "reversed"  # the first query is the top row
    grid = figures.focus_grid(np.array([[0, 1], [2, 1]]), np.full((2, 2), 0.5), labels,
                              [True, False, False, True], "a")
    assert [list(r) for r in grid.data[0].text] == [["[CLS]", "a"], ["a", "a"]]
    bars = figures.focus_bars(np.array([[0.97, 0.01, 0.01, 0.01], [0.5, 0.5, 0, 0]]), labels,
                              [True, False, False, True], "a", layer=0)
    total = sum(np.asarray(b.y) for b in bars.data)  # keys under 5% join "other"
    np.testing.assert_allclose(total, 1.0, atol=1e-6)
    assert bars.data[-1].name == "other"


def test_head_grid_tiles_every_head_on_one_pair_of_axes():
    """Head h sits in tile (h // cols, h % cols) of one category axis pair: its own block of
    T columns and T rows, left to right and top to bottom, no two tiles sharing a cell, its
    title above it and the outline of the selected head around it."""
    maps = random_maps(5, 4, 4).numpy()  # (H, T, T)
    labels = ["[CLS]", "a", "a", "[SEP]"]
    fig = figures.head_grid(maps, labels, [f"head {h + 1}" for h in range(5)], cols=3,
                            selected=4)
    spec = json.loads(pio.to_json(fig))
    lay = spec["layout"]
    assert "xaxis2" not in lay and "yaxis2" not in lay
    xs, ys = lay["xaxis"]["categoryarray"], lay["yaxis"]["categoryarray"]
    assert len(set(xs)) == len(xs) and len(set(ys)) == len(ys)
    used, corner = set(), {}
    for h, trace in enumerate(spec["data"]):
        cols = [xs.index(x) for x in trace["x"]]
        rows = [ys.index(y) for y in trace["y"]]
        assert cols == list(range(cols[0], cols[0] + 4)) and rows == list(range(rows[0],
                                                                               rows[0] + 4))
        assert [figures.plain_label(x) for x in trace["x"]] == labels
        assert [figures.plain_label(y) for y in trace["y"]] == labels
        np.testing.assert_allclose(np.asarray(fig.data[h].z), maps[h])
        cells = {(i, j) for i in rows for j in cols}
        assert not cells & used
        used |= cells
        corner[h] = (rows[0], cols[0])
        title = lay["annotations"][h]
        assert title["text"] == f"head {h + 1}"
        assert cols[0] <= title["x"] <= cols[-1] and title["y"] < rows[0]
    assert corner[0][1] < corner[1][1] < corner[2][1] and corner[0][0] == corner[2][0]
    assert corner[3] == (corner[4][0], corner[0][1]) and corner[3][0] > corner[0][0]
    box = lay["shapes"][0]  # the selected head 4 (0-based) is outlined
    r, c = corner[4]
    assert box["x0"] < c < c + 3 < box["x1"] and box["y0"] < r < r + 3 < box["y1"]


def test_exports_round_trip():
    labels = ["[CLS]", "a,b", "\"q\"", "[SEP]"]
    w = random_maps(4, 4).numpy()
    rows = list(csv.reader(io.StringIO(attention_csv(labels, w))))
    assert rows[0][1:] == labels and [r[0] for r in rows[1:]] == labels
    np.testing.assert_allclose(np.array([r[1:] for r in rows[1:]], dtype=float), w, atol=1e-6)
    rec = json.loads(attention_json(labels, w, layer=1, head=2, model="m", text="t"))
    assert (rec["layer"], rec["head"], rec["tokens"]) == (1, 2, labels)
    np.testing.assert_allclose(np.array(rec["weights"]), w, atol=1e-6)


def test_entropy_titles_use_nats():
    uniform = torch.full((4, 4), 0.25)
    assert entropy(uniform).item() == pytest.approx(math.log(4))
