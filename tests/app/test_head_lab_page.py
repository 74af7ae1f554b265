"""AppTest of the Head lab on the bundled model: switching a head off moves the output change
from 0 to a positive number; the ranking and the curve cover every head."""

import numpy as np
import pytest

from mha_core import ablation as ab
from testkit.apptest import array, chart, open_app

TEXT = "The cat sat on the mat."


def run_page(text=TEXT):
    return open_app("head_lab", text=text)


def change(at) -> float:
    (m,) = [m for m in at.metric if m.label.startswith("Output change")]
    return float(m.value)


def heads_off(at) -> str:
    (m,) = [m for m in at.metric if m.label == "Heads switched off"]
    return m.value


def test_switching_a_head_off_changes_the_output(bundled):
    at = run_page()
    assert not at.exception
    assert heads_off(at) == "0 of 72" and change(at) == 0.0
    assert chart(at, "hl_map_change") is None  # nothing is off, nothing moved
    at.multiselect(key="hl_heads").select("L1 H1").run()
    assert heads_off(at) == "1 of 72"
    assert change(at) > 0
    # the maps above layer 1 moved; layer 1's other heads read the same input and did not
    moved = array(chart(at, "hl_map_change")["data"][0]["z"])  # (L, H)
    assert moved.shape == (6, 12)
    assert np.isnan(moved[0, 0])  # the head that is off is blank
    assert np.allclose(moved[0, 1:], 0, atol=1e-6)
    assert (moved[1:] > 0).all()
    # the number is the one Model.attend gives with the same head mask
    mask = np.ones((6, 12))
    mask[0, 0] = 0
    intact, ablated = bundled.attend(TEXT), bundled.attend(TEXT, head_mask=mask)
    expected = ab.output_change(intact.hidden_states[-1], ablated.hidden_states[-1]).mean().item()
    assert change(at) == float(f"{expected:.4f}")


def test_whole_layers_and_top_k(bundled):
    at = run_page()
    at.radio(key="hl_how").set_value("Whole layers").run()
    at.multiselect(key="hl_layers").select("L6").run()
    assert heads_off(at) == "12 of 72" and change(at) > 0
    # only the last layer is off: no map moves, the text says so, and the head offered for
    # the side-by-side is one that is off (an unchanged head would show two equal maps)
    assert np.nanmax(array(chart(at, "hl_map_change")["data"][0]["z"])) == 0
    assert any("no map moves" in m.value for m in at.markdown)
    assert not any("from the next layer on" in m.value for m in at.markdown)
    assert at.selectbox(key="hl_pick").value.startswith("L6 ")
    at.radio(key="hl_how").set_value("Keep only the top k per layer").run()
    assert heads_off(at) == "0 of 72" and change(at) == 0.0  # k = H keeps everything
    at.slider(key="hl_k").set_value(1).run()
    assert heads_off(at) == "66 of 72" and change(at) > 0
    assert not at.exception


def test_importance_and_curve_cover_every_head(bundled):
    at = run_page()
    imp = array(chart(at, "hl_importance")["data"][0]["z"])
    assert imp.shape == (6, 12) and (imp > 0).all()
    curve = array(chart(at, "hl_pruning")["data"][0]["y"])
    assert curve.shape == (73,) and abs(curve[0]) < 1e-6 and curve[-1] > curve[1]
    first_over = next(k for k in range(73) if curve[k] > 0.05)
    assert any(c.value.startswith(f"{first_over - 1} of 72 heads can go") for c in at.caption)
    ranking = at.dataframe[0].value
    assert len(ranking) == 72 and ranking["importance"].is_monotonic_decreasing
    # the top-ranked head is the one whose removal alone changes the output most
    layer, head = np.unravel_index(np.argmax(imp), imp.shape)
    assert ranking["head"].iloc[0] == f"L{layer + 1} H{head + 1}"


def test_empty_text_gives_a_message(bundled):
    at = run_page("  ")
    assert not at.exception and any("Type a sentence" in i.value for i in at.info)


@pytest.mark.slow  # ranks a 300-token text: seconds of forward passes
def test_long_text_is_ranked_on_request(bundled):
    """Over 64 tokens the ranking (2 L H + 2 forward passes) waits for its button; switching
    single heads off works at once."""
    text = " ".join(["the cat sat on the mat"] * 14) + "."
    T = len(bundled.encode(text).tokens)  # 87
    at = run_page(text)
    assert not at.exception and chart(at, "hl_importance") is None
    assert chart(at, "hl_token_change") is not None
    (button,) = [b for b in at.button if b.key == "hl_rank"]
    assert T > 64 and f"146 forward passes of {T} tokens" in button.label  # 2 * 6 * 12 + 2
    button.click().run()
    assert not at.exception
    imp = array(chart(at, "hl_importance")["data"][0]["z"])
    np.testing.assert_allclose(imp, ab.head_importance(bundled, text), atol=1e-5)


def test_top_k_waits_for_the_ranking_and_very_long_text_is_not_ranked(bundled):
    text = " ".join(["the cat sat on the mat"] * 14) + "."  # 87 tokens: ranked on request
    at = run_page(text)
    at.radio(key="hl_how").set_value("Keep only the top k per layer").run()
    at.slider(key="hl_k").set_value(2).run()
    assert heads_off(at) == "0 of 72"  # no ranking yet, so no mask
    assert any("press **Rank the heads** below first" in i.value for i in at.info)
    [b for b in at.button if b.key == "hl_rank"][0].click().run()
    assert not at.exception and heads_off(at) == "60 of 72"  # 2 kept in each of 6 layers

    long = run_page("word " * 300)  # 302 tokens
    assert not long.exception and chart(long, "hl_importance") is None
    assert not [b for b in long.button if b.key == "hl_rank"]
    assert any("offered for texts of up to 256 tokens" in i.value for i in long.info)


def test_the_link_keeps_which_heads_are_off(bundled):
    at = run_page()
    at.multiselect(key="hl_heads").select("L1 H1").select("L3 H5").run()
    qp = dict(at.query_params)
    assert qp["off"] == "L1 H1,L3 H5" and "how" not in qp
    again = open_app("head_lab", **qp)
    assert again.multiselect(key="hl_heads").value == ["L1 H1", "L3 H5"]
    assert heads_off(again) == "2 of 72" and change(again) == change(at)

    layers = open_app("head_lab", text=TEXT, how="layers", off="L6,l2,L9")
    assert layers.multiselect(key="hl_layers").value == ["L6", "L2"]
    assert heads_off(layers) == "24 of 72"
    assert any("1 of the link's heads or layers" in w.value for w in layers.warning)
    top = open_app("head_lab", text=TEXT, how="top", k="2")
    assert top.slider(key="hl_k").value == 2 and heads_off(top) == "60 of 72"
    assert dict(top.query_params)["k"] == "2" and dict(top.query_params)["how"] == "top"
    twice = open_app("head_lab", text=TEXT, off="L1 H1,l1h1,L1 H1")
    assert twice.multiselect(key="hl_heads").value == ["L1 H1"] and not twice.warning
    bad = open_app("head_lab", text=TEXT, how="all", off="L1 H99,x", k="99")
    said = " ".join(w.value for w in bad.warning)
    assert "not one of heads, layers or top" in said and "2 of the link's heads" in said
    assert "k 99 is outside 0–12" in said and not bad.exception
