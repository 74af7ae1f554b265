"""The Inside MHA page under AppTest, and the real-model steps on the bundled model."""

import numpy as np
import pytest
import torch

from mha_core import toy
from mha_core.neuron import real_steps
from testkit.apptest import charts as charts_by_key
from testkit.apptest import click, open_app


def charts(at):
    return list(charts_by_key(at).values())


def titles(at):
    return [c["layout"].get("title", {}).get("text", "") for c in charts(at)]


@pytest.fixture
def page():
    at = open_app("inside_mha", timeout=180)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_page_renders_the_first_step_and_steps_through(page):
    assert any(t.startswith("X ") for t in titles(page))
    first = len(charts(page))
    page.button(key="im_toy_next").click().run()
    assert len(charts(page)) > first
    page.button(key="im_toy_all").click().run()
    shown = titles(page)
    for name in ("W_Q_1", "softmax_2", "Z_1", "W_O", "Output = Concat · W_O"):
        assert any(t.startswith(name) for t in shown), name
    page.button(key="im_toy_reset").click().run()
    assert not page.exception


@pytest.mark.parametrize("text, says", [("", "No words"), ("bank", "One word"),
                                        ("a b c d e f g h i j k", "too many")])
def test_bad_toy_input_gets_a_message(page, text, says):
    page.text_input(key="im_toy_text").input(text).run()
    assert not page.exception
    assert any(says in i.value for i in page.info)


def test_cost_calculator_table_and_bad_sizes(page):
    table = page.dataframe[-1].value
    assert list(table["design"]) == list(toy.DESIGNS.values())
    assert all(v.endswith("✓") for v in table["real module"])
    page.selectbox(key="im_cost_d").select(64).run()
    page.selectbox(key="im_cost_h").select(12).run()
    assert not page.exception
    assert any("not divisible" in w.value for w in page.warning)


def test_real_steps_on_the_bundled_model(bundled):
    text = "I went to the bank to deposit money."
    res = bundled.attend(text)
    layer, head, query = 2, 5, 3
    attn = bundled.model.layers[layer].attn
    before = {k: v.clone() for k, v in attn.state_dict().items()}
    steps = real_steps(bundled, res, layer, head, query)
    cfg = bundled.config
    T, D, H = len(res.tokens), cfg.hidden_size, cfg.num_attention_heads
    K = D // H
    assert [s[1] for s in steps.shapes] == [(1, T, D), (1, T, D), (1, H, T, K), (1, H, T, T),
                                            (1, H, T, K), (1, T, D), (1, T, D)]
    assert steps.q.shape == (K,) and steps.k.shape == steps.products.shape == (T, K)
    np.testing.assert_allclose(steps.products.sum(1) / np.sqrt(K), steps.logits, rtol=1e-5)
    want = res.attentions[layer, head, query].numpy()
    np.testing.assert_allclose(steps.probs, want, atol=1e-5)
    np.testing.assert_allclose(steps.module_probs, want, atol=1e-5)
    for k, v in attn.state_dict().items():  # the shared model was only read
        assert torch.equal(v, before[k]), k
    with pytest.raises(ValueError):
        real_steps(bundled, res, layer, H, 0)


def test_the_real_model_steps_open_on_the_explorers_view(bundled):
    """The Explorer's view lives in the browser, which keeps it in the tab's sessionStorage
    (Streamlit drops the query string on a page change); Inside MHA's hidden "recall"
    component sends it back (trigger "seen"): the page opens on it once per new view, and the
    page's own choice then stays. (tests/browser/test_explorer_local.py: the browser's side.)"""
    text = "I saw the man with a telescope."
    at = open_app("inside_mha", text=text)
    seen = {"layer": "3", "head": "7", "focus": "with", "words": None, "nospecial": None,
            "norms": None, "stamp": "1"}
    click(at, "im_seen", "seen", seen)
    assert not at.exception
    assert at.selectbox(key="im_real_layer").value == 2  # layer 3, head 7, shown from 1
    assert at.selectbox(key="im_real_head").value == 6
    assert at.selectbox(key="im_real_query").value == bundled.encode(text).tokens.index("with")
    at.selectbox(key="im_real_head").set_value(1).run()  # the page's own choice then stays
    click(at, "im_seen", "seen", seen)  # the same view again (same stamp): nothing changes
    assert at.selectbox(key="im_real_head").value == 1
    click(at, "im_seen", "seen", dict(seen, head="5", stamp="2"))  # a newer view: opens on it
    assert at.selectbox(key="im_real_head").value == 4


def test_the_link_opens_the_real_model_steps_on_a_layer_head_and_token(bundled):
    at = open_app("inside_mha", text="I saw the man with a telescope.", layer="2", head="10",
                  query="with")
    assert (at.selectbox(key="im_real_layer").value, at.selectbox(key="im_real_head").value) \
        == (1, 9)
    assert at.selectbox(key="im_real_query").value == 5
    qp = dict(at.query_params)
    assert (qp["layer"], qp["head"], qp["query"]) == ("2", "10", "with")
    bad = open_app("inside_mha", layer="40", query="zebra")
    said = " ".join(w.value for w in bad.warning)
    assert "layer 40 is outside 1–6" in said and "query token is not in this sentence" in said
