"""AppTest of the Next word page on tiny random decoders (Llama with grouped-query heads, GPT-2)
offered through HEADSCOPE_MODELS, each number against transformers' own model on the same
directory: the top 5 after every token and the real next token's probability and rank (softmax
of AutoModelForCausalLM's logits), the top 5 with heads switched off (transformers' run with
those heads' outputs zeroed before the output projection), each head's logit term and the
model's logit (from transformers' own captured values); a word that is not one token, an
encoder, hostile text and the link."""

import json
import re

import numpy as np
import pytest
import torch

from headscope.ui.labels import visible
from headscope.ui.next_word import DECODER, attribution_json
from testkit.apptest import array, axis_tokens, chart, messages, open_app, survives
from testkit.families import save_tiny_family
from tests.model.test_decoders import captured_parts

TEXT = "The cat sat on the mat."  # 11 tokens for the tiny tokenizer: one window
FAMILIES = ["llama", "gpt2"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict:
    return {f: save_tiny_family(f, tmp_path_factory.mktemp(f) / f"nw-{f}") for f in FAMILIES}


@pytest.fixture
def offered(saved, monkeypatch) -> dict:
    """The tiny decoders offered to the app as nw-<family>; {family: name}."""
    monkeypatch.setenv("HEADSCOPE_MODELS", ";".join(f"nw-{f}={p}" for f, p in saved.items()))
    return {f: f"nw-{f}" for f in FAMILIES}


def reference(path, text=TEXT):
    """transformers' causal LM (eager) and tokenizer on the same directory: (model, ids (T,),
    probabilities (T, V))."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    hf = AutoModelForCausalLM.from_pretrained(str(path), attn_implementation="eager").eval()
    ids = torch.tensor(AutoTokenizer.from_pretrained(str(path))(text)["input_ids"])
    with torch.no_grad():
        probs = hf(input_ids=ids[None]).logits[0].softmax(-1)
    return hf, ids, probs


def heads_off_probs(hf, ids, family, off) -> torch.Tensor:
    """transformers' next-token probabilities (T, V) with the heads `off` ((layer, head) pairs)
    silenced: their slice of the output projection's input set to 0 (what a zero weight row
    gives), by a forward pre-hook."""
    layers = hf.base_model.h if family == "gpt2" else hf.base_model.layers
    K = hf.config.hidden_size // hf.config.num_attention_heads
    hooks = []
    for layer, head in off:
        proj = layers[layer].attn.c_proj if family == "gpt2" else layers[layer].self_attn.o_proj

        def zero(module, args, head=head):
            z = args[0].clone()
            z[..., head * K:(head + 1) * K] = 0
            return (z,)
        hooks.append(proj.register_forward_pre_hook(zero))
    try:
        with torch.no_grad():
            return hf(input_ids=ids[None]).logits[0].softmax(-1)
    finally:
        for h in hooks:
            h.remove()


@pytest.mark.parametrize("family", FAMILIES)
def test_the_strip_is_transformers_next_word(saved, offered, family):
    at = open_app("next_word", model=offered[family], text=TEXT)
    survives(at)
    hf, ids, probs = reference(saved[family])
    T = len(ids)
    strip = chart(at, "nw_strip")["data"][0]
    z = array(strip["z"])  # (T, 6): the top 5, then the real next token
    assert z.shape == (T, 6) and T <= 16  # the whole text in one window
    np.testing.assert_allclose(z[:, :5], probs.topk(5).values.numpy(), atol=1e-5)
    follows = probs[torch.arange(T - 1), ids[1:]]  # (T-1,)
    np.testing.assert_allclose(z[:-1, 5], follows.numpy(), atol=1e-5)
    assert np.isnan(z[-1, 5])  # nothing follows the last token
    ranks = [(probs[t] > follows[t]).sum().item() + 1 for t in range(T - 1)]
    assert [int(c.rsplit("#", 1)[1].replace(",", "")) for c in
            np.asarray(strip["text"])[:-1, 5]] == ranks
    # the cells where the real next token is in the top 5 are framed, nowhere else
    framed = {(round(s["y0"] + 0.5), round(s["x0"] + 0.5))
              for s in chart(at, "nw_strip")["layout"]["shapes"] if s["line"]["color"] != "black"}
    assert framed == {(t, r - 1) for t, r in enumerate(ranks) if r <= 5}
    top1 = sum(r == 1 for r in ranks)
    assert f"first choice is the real next token at {top1} of {T - 1} positions" in messages(at)
    # the position box opens on the last token, framed as the selected row
    assert at.selectbox(key="nw_pos").value == T - 1


@pytest.mark.parametrize("family", FAMILIES)
def test_switching_heads_off_is_transformers_with_those_heads_silenced(saved, offered, family):
    at = open_app("next_word", model=offered[family], text=TEXT)
    at.selectbox(key="nw_pos").set_value(3).run()
    at.multiselect(key="nw_heads").select("L1 H2").run()
    at.multiselect(key="nw_layers").select("L2").run()
    survives(at)
    hf, ids, before = reference(saved[family])
    H = hf.config.num_attention_heads
    off = [(0, 1)] + [(1, h) for h in range(H)]
    after = heads_off_probs(hf, ids, family, off)
    words = set(before[3].topk(5).indices.tolist()) | set(after[3].topk(5).indices.tolist())
    words.add(int(ids[4]))  # the token that really comes next
    words = sorted(words)
    bars = chart(at, "nw_change")["data"]
    assert bars[1]["name"] == f"{H + 1} heads off"
    np.testing.assert_allclose(np.sort(array(bars[0]["x"])), np.sort(before[3, words].numpy()),
                               atol=1e-5)
    np.testing.assert_allclose(np.sort(array(bars[1]["x"])), np.sort(after[3, words].numpy()),
                               atol=1e-5)
    assert not np.allclose(array(bars[0]["x"]), array(bars[1]["x"]))
    assert dict(at.query_params)["off"] == "L2,L1 H2" and dict(at.query_params)["pos"] == "4"


@pytest.mark.parametrize("family", FAMILIES)
def test_each_head_pushes_the_word_as_transformers_computes_it(saved, offered, family):
    at = open_app("next_word", model=offered[family], text=TEXT)
    survives(at)
    hf, ids, _ = reference(saved[family])
    seen, final, logits = captured_parts(hf, ids[None], family)
    pos, t = len(ids) - 1, int(logits[0, -1].argmax())
    heads = array(chart(at, "nw_heads_logit")["data"][0]["z"])  # (L, H)
    # each head's term from transformers' z, output projection and final norm (scale held)
    H, K = heads.shape[1], hf.config.hidden_size // heads.shape[1]
    x = seen["x"][0, pos]
    ln = isinstance(final, torch.nn.LayerNorm)
    scale = torch.rsqrt((x.var(unbiased=False) if ln else x.pow(2).mean())
                        + (final.eps if ln else final.variance_epsilon))
    w_u = (hf.get_output_embeddings().weight[t] * final.weight).detach()
    for i, z in enumerate(seen["z"]):
        layers = hf.base_model.h if family == "gpt2" else hf.base_model.layers
        o = layers[i].attn.c_proj if family == "gpt2" else layers[i].self_attn.o_proj
        w_o = (o.weight.T if family == "gpt2" else o.weight).detach()  # (D, H K)
        for h in range(H):
            part = z[0, pos, h * K:(h + 1) * K] @ w_o[:, h * K:(h + 1) * K].T
            part = part - part.mean() if ln else part
            assert abs(heads[i, h] - float(part * scale @ w_u)) < 1e-4, (i, h)
    # the line under the figures: the parts' sum and transformers' logit
    logit = float(logits[0, -1, t])
    line = next(m.value for m in at.markdown if m.value.startswith("**The parts sum to"))
    total, shown = map(float, re.findall(r"-?\d+\.\d{3}", line)[:2])
    assert abs(shown - logit) < 1e-3 and abs(total - logit) < 1e-3
    parts = chart(at, "nw_parts")["data"][0]
    names, values = list(parts["x"]), array(parts["y"])
    assert names[-1] == "all heads" and abs(values[-1] - heads.sum()) < 1e-4
    assert abs(values[:-1].sum() + heads.sum() - logit) < 1e-3  # every part once
    assert [b.proto.label for b in at.get("download_button")] == [
        "Download the attribution (JSON)"]


def test_another_word_and_one_that_is_not_one_token(saved, offered):
    at = open_app("next_word", model=offered["llama"], text=TEXT)
    from transformers import AutoTokenizer

    hf, ids, _ = reference(saved["llama"])
    at.text_input(key="nw_word").input("the").run()  # " the": one token of the tiny vocabulary
    survives(at)
    (target,) = AutoTokenizer.from_pretrained(str(saved["llama"]))(" the")["input_ids"]
    with torch.no_grad():
        logit = float(hf(input_ids=ids[None]).logits[0, -1, target])
    assert "the logit of “the”" in chart(at, "nw_heads_logit")["layout"]["title"]["text"]
    line = next(m.value for m in at.markdown if m.value.startswith("**The parts sum to"))
    assert abs(float(re.findall(r"-?\d+\.\d{3}", line)[1]) - logit) < 1e-3
    assert dict(at.query_params)["word"] == "the"

    at.text_input(key="nw_word").input("<b>telescopically</b>").run()
    survives(at)
    assert chart(at, "nw_heads_logit") is None
    (warning,) = [w for w in at.warning if "is not one token for this model" in w.value]
    assert "\\<b\\>telescopically\\</b\\>" in warning.value  # shown as text, not markup


def test_an_encoder_says_why_and_offers_the_decoder(saved, monkeypatch, bundled):
    """The bundled encoder: one sentence saying why, no figure; the button switches to the
    decoder (here the tiny Llama offered under the bundled decoder's name)."""
    import streamlit as st

    from headscope.ui import models

    monkeypatch.setenv("HEADSCOPE_MODELS", f"{DECODER}={saved['llama']}")
    models._load.clear()  # the name may hold another directory's model in this process
    st.cache_data.clear()
    try:
        at = open_app("next_word", text=TEXT)
        survives(at)
        (info,) = at.info
        assert "is an encoder" in info.value and "no next-word head" in info.value
        assert "Explorer" in info.value and chart(at, "nw_strip") is None
        at.button(key="nw_to_decoder").click().run()
        survives(at)
        assert at.session_state["model"] == DECODER and chart(at, "nw_strip") is not None
    finally:
        models._load.clear()
        st.cache_data.clear()


@pytest.mark.parametrize("text", ["<script>alert(1)</script> <b>bold</b> &amp;",
                                  "🙂🚀 ok", "ראיתי את האיש", "tab\tand\x07bell"])
def test_hostile_text_stays_text(saved, offered, text):
    import mha_core

    at = open_app("next_word", model=offered["gpt2"], text=text)
    survives(at)  # no HTML, no markup in a chart's text, something drawn
    strip = chart(at, "nw_strip")["data"][0]
    tokens = mha_core.load_model(str(saved["gpt2"]), device="cpu").encode(text).tokens
    assert axis_tokens(strip["y"]) == [visible(t) for t in tokens[-16:]]  # the last window


def test_the_link_restores_position_heads_and_word(offered):
    at = open_app("next_word", model=offered["llama"], text=TEXT, pos="2", off="L1 H3,L2,L9 H1",
                  word="the")
    survives(at)
    assert at.selectbox(key="nw_pos").value == 1
    assert at.multiselect(key="nw_heads").value == ["L1 H3"]
    assert at.multiselect(key="nw_layers").value == ["L2"]
    assert at.text_input(key="nw_word").value == "the"
    assert any("1 of the link's heads or layers are not in this model" in w.value
               for w in at.warning)
    far = open_app("next_word", model=offered["llama"], text=TEXT, pos="99")
    assert any("outside" in w.value for w in far.warning)
    assert far.selectbox(key="nw_pos").value == len(far.selectbox(key="nw_pos").options) - 1


def test_a_long_text_shows_a_window_of_rows(saved, offered):
    import mha_core

    text = "I saw the man with a telescope. " * 3
    tokens = mha_core.load_model(str(saved["llama"]), device="cpu").encode(text).tokens
    at = open_app("next_word", model=offered["llama"], text=text)
    at.selectbox(key="nw_pos").set_value(20).run()
    survives(at)
    y = axis_tokens(chart(at, "nw_strip")["data"][0]["y"])
    assert y == [visible(t) for t in tokens[12:28]]  # 16 rows, the position in the middle
    assert f"Rows 13–28 of {len(tokens)}" in messages(at)


def test_the_json_download_is_the_attribution(offered):
    import mha_core
    from headscope.ui.models import model_choices
    from mha_core.logit_attribution import logit_attribution

    model = mha_core.load_model(model_choices()[offered["gpt2"]], device="cpu")
    a = logit_attribution(model, TEXT)
    attr = dict(a.as_dict(), heads=a.heads, tokens=model.encode(TEXT).tokens, model="m")
    out = json.loads(attribution_json(attr, TEXT))
    assert out["sum_of_parts"] == pytest.approx(out["logit"], abs=1e-4)
    assert np.asarray(out["heads"]).shape == a.heads.shape and out["text"] == TEXT
    assert out["tokens"] == model.encode(TEXT).tokens and out["target"] == a.target
