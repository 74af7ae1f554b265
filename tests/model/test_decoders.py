"""The decoders (Llama, Qwen2, GPT-2) against transformers' eager models on the same tiny random
weights (testkit.families.decoder_specs: grouped-query heads and not, one KV head, tied and
separate next-word heads, Qwen2's q/k/v biases, GPT-2's Conv1D): maps, hidden states and logits
within 1e-5; the next word against transformers' softmax; each head's direct logit attribution
against a computation from transformers' own captured values and weights; the sinks on
hand-made maps; configs and checkpoints we cannot run, refused by name. (The forward cache's
names against transformers' modules: tests/model/test_forward_cache.py, which covers these
decoders too.)"""

import json

import pytest
import torch
from safetensors.torch import load_file, save_file

import mha_core
from mha_core.config import ConfigError
from mha_core.families import read_config
from mha_core.loading import CheckpointError, load_checkpoint
from mha_core.logit_attribution import logit_attribution
from mha_core.sinks import sink_rate, sink_shares
from testkit.families import build_tiny_family, decoder_specs, hf_outputs, padded_batch

pytestmark = pytest.mark.model
DECODERS = list(decoder_specs())
TEXT = "I saw the man with a telescope."


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """name -> (transformers model, our Model with the tiny tokenizer)."""
    from testkit.families import save_tiny_family

    out = {}
    for name in DECODERS:
        path = save_tiny_family(name, tmp_path_factory.mktemp(name))
        out[name] = (build_tiny_family(name), mha_core.load_model(str(path), device="cpu"))
    return out


@pytest.mark.parametrize("name", DECODERS)
def test_maps_hidden_states_and_logits_equal_transformers(saved, name):
    hf, model = saved[name]
    ids, mask, _ = padded_batch(model.config)
    hs, att, logits = hf_outputs(hf, ids, mask)
    with torch.no_grad():
        out = model.model(ids, mask)
    assert len(out.attentions) == len(att) == model.config.num_hidden_layers
    for a, b in zip(att, out.attentions):  # (B, H, T, T), padded rows included
        torch.testing.assert_close(b, a, atol=1e-5, rtol=0)
    for a, b in zip(hs, out.hidden_states):  # (B, T, D); the last after the final norm
        torch.testing.assert_close(b, a, atol=1e-5, rtol=0)
    torch.testing.assert_close(model.model.lm_logits(out.last_hidden_state), logits,
                               atol=1e-4, rtol=0)
    # causal: nothing above the diagonal, exactly
    assert float(torch.stack(out.attentions).triu(diagonal=1).abs().max()) == 0.0


@pytest.mark.parametrize("name", ["llama", "gpt2"])
def test_next_word_is_transformers_softmax(saved, name):
    hf, model = saved[name]
    enc = model.encode(TEXT)
    with torch.no_grad():
        probs = hf(input_ids=enc.input_ids[None]).logits[0].softmax(-1)  # (T, V)
    got = model.next_word(TEXT, top_k=3)
    assert len(got) == len(enc.tokens)
    some = model.next_word_probabilities(enc, positions=[2, 4])  # those rows alone
    torch.testing.assert_close(some, probs[[2, 4]], atol=1e-5, rtol=0)
    for t, row in enumerate(got):
        top = probs[t].topk(3)
        assert [tok for tok, _ in row] == model.tokenizer.convert_ids_to_tokens(
            top.indices.tolist())
        torch.testing.assert_close(torch.tensor([p for _, p in row]), top.values, atol=1e-5,
                                   rtol=0)


def captured_parts(hf, ids, name):
    """From transformers' own modules: each layer's z (o_proj / c_proj input), each MLP's output,
    and the final norm's input (the last residual stream)."""
    base = hf.base_model
    seen, hooks = {"z": [], "mlp": []}, []
    layers = base.h if name.startswith("gpt2") else base.layers
    for L in layers:
        o = L.attn.c_proj if name.startswith("gpt2") else L.self_attn.o_proj
        hooks.append(o.register_forward_hook(lambda m, a, y: seen["z"].append(a[0])))
        hooks.append(L.mlp.register_forward_hook(lambda m, a, y: seen["mlp"].append(y)))
    final = base.ln_f if name.startswith("gpt2") else base.norm
    hooks.append(final.register_forward_hook(lambda m, a, y: seen.update(x=a[0])))
    try:
        with torch.no_grad():
            logits = hf(input_ids=ids).logits
    finally:
        for h in hooks:
            h.remove()
    return seen, final, logits


@pytest.mark.parametrize("name", DECODERS)
def test_logit_attribution_sums_to_the_logit_and_each_head_is_transformers(saved, name):
    hf, model = saved[name]
    enc = model.encode(TEXT)
    pos = 4
    att = logit_attribution(model, enc, pos)
    seen, final, logits = captured_parts(hf, enc.input_ids[None], name)
    t = int(logits[0, pos].argmax())
    assert att.target == t
    assert abs(att.logit - float(logits[0, pos, t])) < 1e-4
    assert abs(att.total() - att.logit) < 1e-4
    # each head's term, from transformers' z and weights, the final norm's scale held
    H, K = model.config.num_attention_heads, model.config.head_dim
    x = seen["x"][0, pos]  # (D,)
    w_u = hf.get_output_embeddings().weight[t] * final.weight  # (D,)
    ln = isinstance(final, torch.nn.LayerNorm)
    eps = final.eps if ln else final.variance_epsilon  # LlamaRMSNorm names it so
    scale = torch.rsqrt((x.var(unbiased=False) if ln else x.pow(2).mean()) + eps)

    def term(p):
        return float(((p - p.mean()) if ln else p) * scale @ w_u)

    for i, z in enumerate(seen["z"]):
        o = hf.base_model.h[i].attn.c_proj if name.startswith("gpt2") else \
            hf.base_model.layers[i].self_attn.o_proj
        # GPT-2's Conv1D keeps (in, out); nn.Linear (out, in)
        w_o = o.weight.T if name.startswith("gpt2") else o.weight  # (D, H K)
        for h in range(H):
            share = z[0, pos, h * K:(h + 1) * K] @ w_o[:, h * K:(h + 1) * K].T  # (D,)
            assert abs(att.heads[i, h] - term(share)) < 1e-4, (i, h)
        assert abs(att.mlps[i] - term(seen["mlp"][i][0, pos])) < 1e-4


def test_a_switched_off_head_adds_nothing_and_changes_the_logit(saved):
    _, model = saved["llama"]
    full = logit_attribution(model, TEXT, -1)
    hm = torch.ones(model.config.num_hidden_layers, model.config.num_attention_heads)
    hm[1, 2] = 0
    off = logit_attribution(model, TEXT, -1, target=full.target, head_mask=hm)
    assert off.heads[1, 2] == 0.0
    assert abs(off.total() - off.logit) < 1e-4 and abs(off.logit - full.logit) > 1e-6
    assert off.as_dict()["heads"][1][2] == 0.0 and json.dumps(off.as_dict())


def test_targets_by_string_and_refusals(saved):
    _, model = saved["gpt2"]
    tok = model.tokenizer.convert_ids_to_tokens(model.encode(TEXT).input_ids.tolist())[3]
    assert tok == "Ġthe"  # a token as spelled, with its mark: that token
    assert logit_attribution(model, TEXT, 2, target=tok).target_token == tok
    # a word: of its one-token spellings ("the", " the"), the one the model rates higher there,
    # by transformers' own logits
    hf, _ = saved["gpt2"]
    with torch.no_grad():
        logits = hf(input_ids=model.encode(TEXT).input_ids[None]).logits[0, 2]  # (V,)
    vocab = model.tokenizer.get_vocab()
    both = [vocab[t] for t in ("the", "Ġthe") if t in vocab]
    expected = max(both, key=lambda i: float(logits[i]))
    assert logit_attribution(model, TEXT, 2, target="the").target == expected
    with pytest.raises(ValueError, match="not one token"):
        logit_attribution(model, TEXT, 2, target="supercalifragilistic")
    with pytest.raises(ValueError, match="outside the text"):
        logit_attribution(model, TEXT, 99)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        logit_attribution(model, TEXT, 0, target=10**6)


def test_an_encoder_has_no_next_word():
    bert = mha_core.load_model(device="cpu")
    assert not bert.is_decoder and not bert.supports()["next word"]
    with pytest.raises(ValueError, match="is an encoder"):
        bert.next_word(TEXT)
    with pytest.raises(ValueError, match="is an encoder"):
        logit_attribution(bert, TEXT)


def test_sink_shares_on_hand_made_maps():
    T = 5
    on_first = torch.zeros(1, 2, T, T)
    on_first[..., 0] = 1.0  # every row on token 0
    diag = torch.eye(T).expand(1, 2, T, T)  # every row on itself
    maps = torch.cat([on_first, diag])  # (L=2, H=2, T, T)
    shares = sink_shares(maps, [0])
    torch.testing.assert_close(shares, torch.tensor([[1.0, 1.0], [0.0, 0.0]]))
    rate = sink_rate(shares)
    assert rate["model"] == 0.5 and rate["per_layer"].tolist() == [1.0, 0.0]
    # the last token as a "sink": only the last row looks at it, 1 of T - 1 rows
    torch.testing.assert_close(sink_shares(diag, [T - 1]), torch.full((1, 2), 1 / (T - 1)))


def edit(path, **changes):
    cfg = json.loads((path / "config.json").read_text())
    cfg.update(changes)
    (path / "config.json").write_text(json.dumps(cfg))


@pytest.mark.parametrize("changes,message", [
    ({"rope_parameters": {"rope_type": "yarn", "rope_theta": 5e5, "factor": 8.0}},
     "rope type 'yarn' is not supported"),
    ({"head_dim": 4}, r"head_dim 4 differs from hidden_size / num_attention_heads \(8\)"),
    ({"num_key_value_heads": 3}, r"num_key_value_heads \(3\) must divide num_attention_heads"),
    ({"model_type": "qwen2", "use_sliding_window": True, "sliding_window": 4},
     "use_sliding_window is set"),
])
def test_llama_configs_we_cannot_run_are_named(tmp_path, changes, message):
    hf = build_tiny_family("llama")
    hf.save_pretrained(str(tmp_path))
    edit(tmp_path, **changes)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(tmp_path)


def test_gpt2_configs_and_a_tied_head_that_differs(tmp_path):
    with pytest.raises(ConfigError, match="scale_attn_by_inverse_layer_idx is True"):
        read_config({"model_type": "gpt2", "scale_attn_by_inverse_layer_idx": True})
    hf = build_tiny_family("llama-mha-tied")
    hf.save_pretrained(str(tmp_path))
    sd = load_file(str(tmp_path / "model.safetensors"))
    sd["lm_head.weight"] = sd["model.embed_tokens.weight"] + 1  # stored, and not a copy
    save_file(sd, str(tmp_path / "model.safetensors"))
    with pytest.raises(CheckpointError, match="lm_head.weight is not tied to embed_tokens"):
        load_checkpoint(tmp_path)
    sd["lm_head.weight"] = sd["model.embed_tokens.weight"].clone()  # a stored copy: fine
    save_file(sd, str(tmp_path / "model.safetensors"))
    cfg, ours = load_checkpoint(tmp_path)
    assert cfg.lm_head == "tied" and not hasattr(ours, "lm_head")


def test_headscope_export_json_holds_the_decoders_parts(tmp_path):
    from headscope.export import main
    from testkit.families import save_tiny_family

    path = save_tiny_family("gpt2", tmp_path / "gpt2")
    out = tmp_path / "x.json"
    assert main([TEXT, "--model", str(path), "-o", str(out), "--device", "cpu"]) == 0
    d = json.loads(out.read_text())
    T = len(d["tokens"])
    assert d["causal"] is True and len(d["next_word"]) == T and len(d["next_word"][0]) == 5
    att = d["logit_attribution"]
    assert att["position"] == T - 1 and abs(att["sum_of_parts"] - att["logit"]) < 1e-4
    a = torch.tensor(d["attentions"])  # (L, H, T, T)
    assert float(a.triu(diagonal=1).abs().max()) == 0.0


def test_the_notebook_grid_and_html_export_are_told_the_maps_are_causal(saved, tmp_path):
    from headscope import view_input
    from headscope.export import main

    _, model = saved["llama"]
    res = model.attend(TEXT)
    assert res.causal
    assert view_input.grid(view_input.read(res), 0)["causal"] is True
    bert = mha_core.load_model(device="cpu")
    assert view_input.grid(view_input.read(bert.attend(TEXT)), 0)["causal"] is False
    out = tmp_path / "heads.html"
    assert main([TEXT, "--model", str(model.path), "--view", "heads", "-o", str(out),
                 "--device", "cpu"]) == 0
    assert '"causal": true' in out.read_text()
