"""AppTest of the Attention sinks page: on tiny random decoders (Llama with grouped-query heads,
GPT-2) each head's share on the first token by weight (transformers' eager attention, averaged in
numpy) and by norm (Kobayashi et al.'s ‖α f(x)‖ from transformers' own value and output
projections), the sink rates; on the bundled encoder the same on [CLS] and on [SEP]; hostile
text; and the lesson "BERT reads both ways, GPT looks back", which loads the decoder only when a
visitor asks for it (here on the start card and on this page)."""

import numpy as np
import pytest
import torch

from headscope.ui.next_word import DECODER
from testkit.apptest import array, chart, messages, open_app, survives
from testkit.families import save_tiny_family

TEXT = "The cat sat on the mat."
FAMILIES = ["llama", "gpt2"]
EPS = 0.3  # Gu et al. 2024


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict:
    return {f: save_tiny_family(f, tmp_path_factory.mktemp(f) / f"sk-{f}") for f in FAMILIES}


@pytest.fixture
def offered(saved, monkeypatch) -> dict:
    monkeypatch.setenv("HEADSCOPE_MODELS", ";".join(f"sk-{f}={p}" for f, p in saved.items()))
    return {f: f"sk-{f}" for f in FAMILIES}


def hf_maps(path, family, text=TEXT):
    """transformers' eager weights α (L, H, T, T) and Kobayashi et al.'s norm maps ‖α_ij f_h(x_j)‖
    (L, H, T, T), f_h(x_j) = v_j of head h's key/value head times head h's columns of the output
    projection (b_V included, b_O not), from its own modules through forward hooks."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    hf = AutoModelForCausalLM.from_pretrained(str(path), attn_implementation="eager").eval()
    ids = torch.tensor(AutoTokenizer.from_pretrained(str(path))(text)["input_ids"])
    c = hf.config
    H, K = c.num_attention_heads, c.hidden_size // c.num_attention_heads
    gpt2 = family == "gpt2"
    layers = hf.base_model.h if gpt2 else hf.base_model.layers
    values, hooks = [], []
    for layer in layers:
        v = layer.attn.c_attn if gpt2 else layer.self_attn.v_proj
        hooks.append(v.register_forward_hook(lambda m, a, y: values.append(y[0])))
    with torch.no_grad():
        att = torch.stack(hf(input_ids=ids[None], output_attentions=True).attentions)[:, 0]
        for h in hooks:
            h.remove()
        norms = []
        for layer, v in zip(layers, values):
            if gpt2:
                v, w_o = v[:, 2 * c.hidden_size:], layer.attn.c_proj.weight.T  # (T, D), (D, D)
            else:
                w_o = layer.self_attn.o_proj.weight  # (D, H K)
            group = H // (v.shape[-1] // K)  # query heads per key/value head
            f = torch.stack([v[:, (h // group) * K:(h // group + 1) * K]
                             @ w_o[:, h * K:(h + 1) * K].T for h in range(H)])  # (H, T, D)
            norms.append(f.norm(dim=-1))  # (H, T)
        norm = att * torch.stack(norms)[:, :, None, :]  # (L, H, T, T)
    return att.numpy(), norm.numpy()


def shares(maps, cols) -> np.ndarray:
    """Mean over the rows after the first of the weight on the columns `cols`: (L, H)."""
    maps = maps / maps.sum(-1, keepdims=True)
    return maps[:, :, 1:, cols].sum(-1).mean(-1)


def metric(at, label) -> str:
    return next(m.value for m in at.metric if m.label == label)


@pytest.mark.parametrize("family", FAMILIES)
def test_each_head_on_the_first_token_by_weight_and_by_norm(saved, offered, family):
    at = open_app("sinks", model=offered[family], text=TEXT)
    survives(at)
    att, norm = hf_maps(saved[family], family)
    fig = chart(at, "sk_grids")["data"]
    w, n = shares(att, [0]), shares(norm, [0])
    np.testing.assert_allclose(array(fig[0]["z"]), w, atol=1e-5)
    np.testing.assert_allclose(array(fig[1]["z"]), n, atol=1e-5)
    assert not np.allclose(w, n, atol=1e-3)  # the two grids differ
    assert metric(at, "Sink rate by weight") == f"{(w > EPS).mean():.0%}"
    assert metric(at, "Sink rate by norm") == f"{(n > EPS).mean():.0%}"
    rates = chart(at, "sk_rates")["data"]
    np.testing.assert_allclose(array(rates[0]["y"]), (w > EPS).mean(-1))
    np.testing.assert_allclose(array(rates[1]["y"]), (n > EPS).mean(-1))
    assert at.get("segmented_control") == [] or not any(
        s.key == "sk_kind" for s in at.get("segmented_control"))  # one sink: no choice


def test_an_encoder_has_cls_and_sep(bundled):
    at = open_app("sinks", text=TEXT)
    survives(at)
    att = bundled.attend(TEXT).attentions.numpy()
    T = att.shape[-1]
    z = array(chart(at, "sk_grids")["data"][0]["z"])
    np.testing.assert_allclose(z, shares(att, [0]), atol=1e-5)  # [CLS] first
    at.segmented_control(key="sk_kind").set_value("sep").run()
    survives(at)
    z = array(chart(at, "sk_grids")["data"][0]["z"])
    np.testing.assert_allclose(z, shares(att, [T - 1]), atol=1e-5)
    assert dict(at.query_params)["sink"] == "sep"
    assert "share on [SEP]" in chart(at, "sk_grids")["layout"]["coloraxis"]["colorbar"][
        "title"]["text"]


@pytest.mark.parametrize("text", ["<script>alert(1)</script> <b>bold</b> &amp;",
                                  "🙂🚀 ok", "ראיתי את האיש", "a"])
def test_hostile_and_one_token_text(offered, text):
    at = open_app("sinks", model=offered["llama"], text=text)
    survives(at)
    if text == "a":
        assert "A sink needs at least two tokens" in messages(at)
        assert chart(at, "sk_grids") is None
    else:
        assert "&lt;" in str(chart(at, "sk_grids")["layout"]) or "<" not in text


@pytest.fixture
def tiny_decoder(saved, monkeypatch, spy_loader):
    """The tiny Llama offered under the bundled decoder's name, with the app's model and data
    caches emptied before and after (this process may hold another model under that name); the
    spy records what the app loads."""
    import streamlit as st

    from headscope.ui import models

    monkeypatch.setenv("HEADSCOPE_MODELS", f"{DECODER}={saved['llama']}")
    models._load.clear()
    st.cache_data.clear()
    yield str(saved["llama"])
    models._load.clear()
    st.cache_data.clear()


def test_the_lesson_loads_the_decoder_only_when_asked(tiny_decoder, spy_loader, bundled):
    import mha_core
    from headscope.ui.presets import DEFAULT_TEXT

    at = open_app("explorer")  # a first visit, the default sentence: the start card
    survives(at)
    assert at.toggle(key="start_both_ways").value is False
    assert tiny_decoder not in spy_loader  # the card never loads the decoder on its own
    at.toggle(key="start_both_ways").set_value(True).run()
    survives(at)
    assert tiny_decoder in spy_loader
    fig = chart(at, "start_both_ways_map")["data"]
    enc = bundled.attend(DEFAULT_TEXT).attentions.numpy()[0].mean(0)  # layer 1, mean of heads
    dec = mha_core.load_model(tiny_decoder, device="cpu").attend(DEFAULT_TEXT).attentions.numpy()
    dec = dec[0].mean(0)
    np.testing.assert_allclose(array(fig[0]["z"]), enc, atol=1e-3)
    later = np.triu(np.ones_like(dec, dtype=bool), 1)
    shown = array(fig[1]["z"])
    assert np.isnan(shown[later]).all()  # not attendable: no value at all, not a 0
    np.testing.assert_allclose(shown[~later], dec[~later], atol=1e-3)
    assert f"the right {dec[1:, 0].mean():.0%} on its first token" in messages(at)


def test_the_sinks_page_has_the_lesson_with_a_layer(tiny_decoder, spy_loader, bundled):
    import mha_core

    at = open_app("sinks", text=TEXT)  # the bundled encoder's sinks: no decoder
    survives(at)
    assert tiny_decoder not in spy_loader and chart(at, "sk_both_ways") is None
    at.toggle(key="sk_lesson").set_value(True).run()
    at.segmented_control(key="sk_depth").set_value("last layer").run()
    survives(at)
    dec = mha_core.load_model(tiny_decoder, device="cpu")
    L = dec.config.num_hidden_layers
    maps = dec.attend(TEXT).attentions.numpy()[L - 1].mean(0)
    shown = array(chart(at, "sk_both_ways")["data"][1]["z"])
    np.testing.assert_allclose(shown[np.tril_indices(len(maps))], maps[np.tril_indices(len(maps))],
                               atol=1e-3)
    assert f"L{L} of {L}" in chart(at, "sk_both_ways")["layout"]["annotations"][1]["text"]
    assert dict(at.query_params)["lesson"] == "1" and dict(at.query_params)["depth"] == "last"
    linked = open_app("sinks", text=TEXT, lesson="1", depth="mean")
    assert linked.segmented_control(key="sk_depth").value == "mean of all layers"
    assert chart(linked, "sk_both_ways") is not None
