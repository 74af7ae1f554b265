"""The figure builders put every head's numbers where their labels say."""

import numpy as np

from headscope.ui import figures as fg


def test_atlas_places_each_head_in_its_tile():
    L, H, T = 2, 3, 4
    att = np.zeros((L, H, T, T), dtype=np.float32)
    for i in range(L):
        for h in range(H):
            att[i, h] = (i * H + h + 1) / 10 + np.arange(T * T).reshape(T, T) / 1000
    labels = np.array([["prev", "CLS", "het"], ["self", "broad", "SEP"]])
    fig = fg.atlas_figure(att, ["[CLS]", "a", "<b>", "[SEP]"], labels, title="<i>x</i>")
    z = np.asarray(fig.data[0].z, dtype=float)
    assert np.isfinite(z).sum() == L * H * T * T
    for i in range(L):
        for h in range(H):
            r, c = np.argwhere(np.isclose(z, att[i, h, 0, 0], atol=1e-4))[0]
            np.testing.assert_allclose(z[r:r + T, c:c + T], att[i, h], atol=1e-3)
    # labels in row-major order, each above its own tile
    text = fig.data[1]
    assert list(text.text) == labels.ravel().tolist()
    assert np.all(np.diff(np.asarray(text.x)[:3]) > 0) and text.y[0] < text.y[3]
    assert fig.layout.title.text == "&lt;i&gt;x&lt;/i&gt;"  # user text stays text
    hover = [str(t) for t in np.ravel(fig.data[0].text)]
    assert any("&lt;b&gt;" in t for t in hover) and not any("<b>" in t for t in hover)


def test_atlas_caps_tokens():
    att = np.full((1, 2, 60, 60), 1 / 60, dtype=np.float32)
    fig = fg.atlas_figure(att, [str(i) for i in range(60)], [["het", "het"]], max_tokens=48)
    assert np.isfinite(np.asarray(fig.data[0].z, dtype=float)).sum() == 2 * 48 * 48


def test_diff_grid_points_are_the_cells():
    diff = np.arange(12, dtype=float).reshape(3, 4) / 12  # (L, H)
    fig = fg.diff_grid_figure(diff, selected=(2, 1))
    heat, pts = fig.data
    np.testing.assert_allclose(np.asarray(heat.z), diff)
    for x, y, t in zip(pts.x, pts.y, pts.text):  # a click reports x = head, y = layer
        assert t == f"L{y + 1} H{x + 1}: {diff[y, x]:.3f}"
    (frame,) = fig.layout.shapes
    assert (frame.x0, frame.y0) == (0.5, 1.5)


def test_map_change_marks_heads_that_are_off():
    mask = np.ones((2, 3))
    mask[0, 1] = 0
    fig = fg.map_change_figure(np.full((2, 3), 0.2), mask)
    z = np.asarray(fig.data[0].z, dtype=float)
    assert np.isnan(z[0, 1]) and np.nansum(z) == np.float64(0.2 * 5)
    assert fig.data[0].text[0][1] == "off"


def test_pruning_curve_and_token_change():
    fig = fg.pruning_curve_figure(np.linspace(0, 0.5, 73))
    assert len(fig.data[0].x) == 73 and fig.data[0].x[-1] == 72
    fig = fg.token_change_figure(["[CLS]", "<a>", "[SEP]"], np.array([0.0, 0.1, 0.0]))
    assert list(fig.layout.xaxis.ticktext) == ["[CLS]", "&lt;a&gt;", "[SEP]"]


def test_token_colours_one_per_word_and_distinct_special_greys():
    labels = ["[CLS]", "the", "cat", "saw", "The", "dog", "[SEP]"]
    special = [True] + [False] * 5 + [True]
    colours = fg.token_colors(labels, special)
    assert colours[0] != colours[6]  # [CLS] and [SEP]: two greys
    assert colours[1] == colours[4]  # the, The: one word, one colour
    assert len(set(colours[1:6])) == 4  # the, cat, saw, dog
