"""The Explorer's "By norm ‖αf(x)‖" switch (Kobayashi et al. 2020) through AppTest: what the page
sends the component, the focus grid and the enlarged head, against ||alpha_ij f_h(x_j)|| computed
here from transformers' own BertModel (its value projection, its output projection's columns
per head, its eager attention weights; testkit.models.hf_norm_maps), merged to words and with
[CLS]/[SEP] hidden by hand."""

import numpy as np
import pytest

from headscope.ui.attention import unpack
from testkit.apptest import click, component, go_to, messages, open_app, survives
from testkit.models import hf_norm_maps, hf_reference

TELESCOPE = "I saw the man with a telescope."
ATOL = 1e-5


@pytest.fixture(scope="module")
def hf(bundled):
    return hf_reference(bundled.path)


def norms_by_hand(bert, hf, text) -> np.ndarray:
    enc = bert.encode(text)
    return hf_norm_maps(hf, enc.input_ids, enc.token_type_ids).numpy().astype(np.float64)


def rows_to_one(m):
    return m / m.sum(-1, keepdims=True)


def word_groups_by_hand(bert, text):
    """Each word's pieces from the tokenizer's own word ids; [CLS] and [SEP] alone."""
    ids = bert.tokenizer(text).word_ids()
    groups, seen = [], {}
    for t, w in enumerate(ids):
        if w is None:
            groups.append([t])
        elif w in seen:
            groups[seen[w]].append(t)
        else:
            seen[w] = len(groups)
            groups.append([t])
    return groups


def merged(m, groups):
    """Clark et al. 2019 by hand: sum over a word's key pieces, mean over its query pieces."""
    return np.stack([np.stack([m[..., q, :][..., k].sum(-1) for k in groups], -1).mean(-2)
                     for q in groups], -2)


def test_by_norm_maps_match_transformers_projections(bundled, hf):
    at = open_app("explorer", text=TELESCOPE, layer="2", head="10", focus="with", norms="1")
    survives(at)
    assert at.toggle(key="ex_norms").value is True
    raw = norms_by_hand(bundled, hf, TELESCOPE)  # (L, H, T, T)
    shown = rows_to_one(raw)
    res = bundled.attend(TELESCOPE)
    H = bundled.config.num_attention_heads

    grid = component(at, "ex_grid")
    maps, sent_raw = unpack(grid["maps"]), unpack(grid["raw"])
    assert grid["tokens"] == res.tokens and grid["legend"] == "share of ‖αf‖"
    np.testing.assert_allclose(maps[:H], shown[1], atol=ATOL)
    np.testing.assert_allclose(sent_raw[:H], raw[1], rtol=1e-4, atol=ATOL)
    # the mean of the heads' shown maps, and the mean of their raw norms in its hover
    np.testing.assert_allclose(maps[H + 1], shown[1].mean(0), atol=ATOL)
    np.testing.assert_allclose(sent_raw[H + 1], raw[1].mean(0), rtol=1e-4, atol=ATOL)
    # the single head has no norm form: its map stays the weights, titled so, with no raw norm
    np.testing.assert_allclose(maps[H], res.single_head[1].numpy(), atol=ATOL)
    assert np.isnan(sent_raw[H]).all() and grid["titles"][H].startswith("summed head (weights)")
    assert "summed head has no norm form" in messages(at)

    # the focus grid and the enlarged head follow the switch
    q = res.tokens.index("with")
    focus = component(at, "ex_focus_grid")
    np.testing.assert_array_equal(unpack(focus["top"]), shown[:, :, q].argmax(-1))
    np.testing.assert_allclose(unpack(focus["weight"]), shown[:, :, q].max(-1), atol=ATOL)
    assert focus["by"] == "by norm"
    big = component(at, "ex_big")  # the hover gives the raw norm beside the share
    np.testing.assert_allclose(unpack(big["maps"])[0], shown[1, 9], atol=ATOL)
    np.testing.assert_allclose(unpack(big["raw"])[0], raw[1, 9], rtol=1e-4, atol=ATOL)
    assert big["legend"] == "share of ‖αf‖"
    assert big["titles"][0].startswith("layer 2, head 10 · by norm")
    assert component(at, "ex_focus_bars")["value"] == "share of ‖αf‖"

    at.toggle(key="ex_norms").set_value(False).run()  # off: the weights again, no raw
    grid = component(at, "ex_grid")
    assert "raw" not in grid and grid["legend"] == "weight"
    np.testing.assert_allclose(unpack(grid["maps"])[:H], res.attentions[1].numpy(), atol=1e-6)
    assert "norms" not in at.query_params


def test_by_norm_at_word_level_with_special_tokens_hidden(bundled, hf):
    text = "Headscope shows tokenization."
    at = open_app("explorer", text=text, layer="3", words="1", nospecial="1", norms="1")
    survives(at)
    raw = norms_by_hand(bundled, hf, text)[2]  # (H, T, T): layer 3
    groups = word_groups_by_hand(bundled, text)
    keep = [i for i, g in enumerate(groups) if not all(bundled.encode(text).special[t]
                                                      for t in g)]
    # shown: rows to one, merged to words as the weights are, [CLS]/[SEP] dropped, rows to one
    shown = rows_to_one(merged(rows_to_one(raw), groups)[:, keep][:, :, keep])
    # raw: the norms merged the same way and the special tokens dropped, never renormalised
    raw_words = merged(raw, groups)[:, keep][:, :, keep]
    grid = component(at, "ex_grid")
    H = bundled.config.num_attention_heads
    assert grid["tokens"] == ["Headscope", "shows", "tokenization", "."]
    np.testing.assert_allclose(unpack(grid["maps"])[:H], shown, atol=ATOL)
    np.testing.assert_allclose(unpack(grid["raw"])[:H], raw_words, rtol=1e-4, atol=ATOL)
    np.testing.assert_allclose(unpack(grid["maps"])[H + 1], shown.mean(0), atol=ATOL)


def test_the_switch_is_kept_across_pages_and_in_the_link(bundled):
    at = open_app("explorer", text=TELESCOPE)
    assert at.toggle(key="ex_norms").value is False and "norms" not in at.query_params
    at.toggle(key="ex_norms").set_value(True).run()
    assert at.query_params["norms"] == "1"
    go_to(at, "head_view")
    survives(at)
    go_to(at, "explorer")
    assert at.toggle(key="ex_norms").value is True and "raw" in component(at, "ex_grid")
    again = open_app("explorer", **dict(at.query_params))  # a new session from the link
    assert again.toggle(key="ex_norms").value is True
    np.testing.assert_allclose(unpack(component(again, "ex_grid")["raw"]),
                               unpack(component(at, "ex_grid")["raw"]), equal_nan=True)
    # a click on a head keeps the switch (the enlarged head by norm)
    click(again, "ex_grid", "head", 3)
    assert again.selectbox(key="ex_head").value == 4 and again.toggle(key="ex_norms").value
    assert "by norm" in component(again, "ex_big")["titles"][0]
