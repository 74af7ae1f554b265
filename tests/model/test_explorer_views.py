"""The Explorer's pieces without Streamlit: views, the focus grid's figure, labels, and the claim
the page makes about the bundled model. (The enlarged head's CSV/JSON are the browser's:
tests/unit/test_explore_js.py.)"""

import math

import numpy as np
import pytest
import torch

from headscope.ui import figures
from headscope.ui.labels import axis_labels, label, visible
from mha_core.metrics import entropy, head_divergence
from mha_core.shown import explorer_view, focus_targets, segments_view
from testkit.apptest import plain_label


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
    assert label("<script>") == "&lt;script&gt;"
    assert label("a&b") == "a&amp;b"
    assert label("\x00") == "␀"
    assert visible("a\u202eb") == "a<U+202E>b"
    assert label("a\u202eb") == "a&lt;U+202E&gt;b"
    labels = ["the", "<b>", "the", "the"]
    ax = axis_labels(labels)
    assert len(set(ax)) == 4  # repeated tokens stay separate categories
    assert [plain_label(x) for x in ax] == labels


def test_focus_grid_builder():
    labels = ["[CLS]", "a", "a", "[SEP]"]
    grid = figures.focus_grid(np.array([[0, 1], [2, 1]]), np.full((2, 2), 0.5), labels,
                              [True, False, False, True], "a")
    assert [list(r) for r in grid.data[0].text] == [["[CLS]", "a"], ["a", "a"]]
    assert grid.layout.yaxis.autorange == "reversed"  # layer 1 is the top row


def test_entropy_titles_use_nats():
    uniform = torch.full((4, 4), 0.25)
    assert entropy(uniform).item() == pytest.approx(math.log(4))


def test_segments_view_follows_the_pair_through_words_and_hidden_specials(bundled):
    res = bundled.attend("Headscope works.", text_pair="It tokenizes words.")
    ids = res.encoded.token_type_ids.tolist()
    assert segments_view(res) == ids and set(ids) == {0, 1}
    labels, groups = res.words()
    by_word = segments_view(res, word_level=True)
    assert len(by_word) == len(labels)
    assert by_word[labels.index("Headscope")] == 0 and by_word[labels.index("tokenizes")] == 1
    shown = explorer_view(res.attentions, res, True, True)[1]
    both = segments_view(res, word_level=True, hide_special=True)
    assert len(both) == len(shown) and "[SEP]" not in shown
    assert both == [0] * shown.index("It") + [1] * (len(shown) - shown.index("It"))
