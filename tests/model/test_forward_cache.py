"""The forward cache (mha_core.hooks) against transformers' eager modules, family by family: every
recorded value equals the matching input or output of transformers' own modules, captured by
forward hooks, within 1e-5, on a padded batch with a pair (where the family takes one), for
every edge variant testkit.families builds; one cache entry per attention layer transformers
runs (ALBERT's shared layers unrolled). Values no module outputs (the scores, DeBERTa's terms,
the summed head, each head's share) are checked against computations from transformers' own
captured q, k and weights, never against our code."""

import math

import pytest
import torch
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb as llama_rotary
from transformers.models.llama.modeling_llama import repeat_kv
from transformers.models.modernbert.modeling_modernbert import apply_rotary_pos_emb

from mha_core.hooks import NAMES, HookError, replace_attention
from mha_core.loading import load_checkpoint
from testkit.families import decoder_specs, padded_batch, save_every_family, specs

FAMILIES = list(specs()) + list(decoder_specs())
ROPE_DECODERS = ("llama", "llama-mha-tied", "llama3-rope", "qwen2")
TOL = dict(atol=1e-5, rtol=0)


def close(ours, theirs, what=""):
    """Within 1e-5 of transformers' value, on the value's own scale: |a - b| <= 1e-5 * max(1,
    max |b|). With the tiny models' wide random weights, z and the block outputs reach ~30,
    where one float32 rounding step is ~2e-6: an absolute 1e-5 there would test rounding."""
    scale = max(1.0, float(theirs.abs().max()))
    torch.testing.assert_close(ours, theirs, atol=1e-5 * scale, rtol=0, msg=what)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    return {name: (hf, *load_checkpoint(d))
            for name, (hf, d) in save_every_family(tmp_path_factory, decoders=True).items()}


def reference_points(hf, name):
    """(our name, transformers module, "in" | "out") in each layer, layers in call order; a
    module shared by several run layers (ALBERT) is listed once and fires once per run."""
    base = hf.base_model
    if name in ROPE_DECODERS:  # q, k, v before RoPE and the repeat: turned in captured()
        return [p for L in base.layers for p in (
            ("attn_in", L.self_attn.q_proj, "in"), ("q_raw", L.self_attn.q_proj, "out"),
            ("k_raw", L.self_attn.k_proj, "out"), ("v_raw", L.self_attn.v_proj, "out"),
            ("z", L.self_attn.o_proj, "in"), ("attn_out", L.self_attn.o_proj, "out"),
            ("resid_mid", L.post_attention_layernorm, "in"), ("ffn_act", L.mlp.down_proj, "in"),
            ("ffn_out", L.mlp.down_proj, "out"), ("resid_post", L, "out"))]
    if name.startswith("gpt2"):  # c_attn's output holds q, k and v side by side
        return [p for L in base.h for p in (
            ("attn_in", L.attn.c_attn, "in"), ("qkv", L.attn.c_attn, "out"),
            ("z", L.attn.c_proj, "in"), ("attn_out", L.attn.c_proj, "out"),
            ("resid_mid", L.ln_2, "in"), ("ffn_act", L.mlp.c_proj, "in"),
            ("ffn_out", L.mlp.c_proj, "out"), ("resid_post", L, "out"))]
    if name == "distilbert":
        return [p for L in base.transformer.layer for p in (
            ("attn_in", L.attention.q_lin, "in"), ("q", L.attention.q_lin, "out"),
            ("k", L.attention.k_lin, "out"), ("v", L.attention.v_lin, "out"),
            ("z", L.attention.out_lin, "in"), ("attn_out", L.attention.out_lin, "out"),
            ("resid_mid", L.sa_layer_norm, "out"), ("ffn_act", L.ffn.lin2, "in"),
            ("ffn_out", L.ffn.lin2, "out"), ("resid_post", L.output_layer_norm, "out"))]
    if name == "albert":
        return [p for g in base.encoder.albert_layer_groups for L in g.albert_layers for p in (
            ("attn_in", L.attention.query, "in"), ("q", L.attention.query, "out"),
            ("k", L.attention.key, "out"), ("v", L.attention.value, "out"),
            ("z", L.attention.dense, "in"), ("attn_out", L.attention.dense, "out"),
            ("resid_mid", L.attention.LayerNorm, "out"), ("ffn_act", L.ffn_output, "in"),
            ("ffn_out", L.ffn_output, "out"), ("resid_post", L.full_layer_layer_norm, "out"))]
    if name == "modernbert":
        return [p for L in base.layers for p in (
            ("attn_in", L.attn.Wqkv, "in"), ("qkv", L.attn.Wqkv, "out"),
            ("z", L.attn.Wo, "in"), ("attn_out", L.attn.Wo, "out"),
            ("resid_mid", L.mlp_norm, "in"), ("ffn_act", L.mlp.Wo, "in"),
            ("ffn_out", L.mlp.Wo, "out"), ("resid_post", L, "out"))]
    proj = ("query_proj", "key_proj", "value_proj") if name == "deberta" else (
        "query", "key", "value")
    return [p for L in base.encoder.layer for p in (
        ("attn_in", getattr(L.attention.self, proj[0]), "in"),
        *((n, getattr(L.attention.self, m), "out") for n, m in zip("qkv", proj)),
        ("z", L.attention.output.dense, "in"), ("attn_out", L.attention.output.dense, "out"),
        ("resid_mid", L.attention.output.LayerNorm, "out"), ("ffn_act", L.output.dense, "in"),
        ("ffn_out", L.output.dense, "out"), ("resid_post", L.output.LayerNorm, "out"))]


def captured(hf, name, ids, mask, types):
    """transformers' values at the reference points, one per layer run, in order; ModernBERT's
    q and k rotated by transformers' own apply_rotary_pos_emb with the (cos, sin) its layers
    were given; and its output attentions."""
    B, T = ids.shape
    seen, hooks = {}, []

    def keep(ref, kind):
        def hook(module, inputs, output):
            x = inputs[0] if kind == "in" else (output[0] if isinstance(output, tuple) else output)
            if x.shape[:2] == (B, T):  # DeBERTa's query_proj also projects the positions
                seen.setdefault(ref, []).append(x)
        return hook

    for ref, module, kind in reference_points(hf, name):
        hooks.append(module.register_forward_hook(keep(ref, kind)))
    if name == "modernbert" or name in ROPE_DECODERS:
        for L in hf.base_model.layers:
            attn = L.attn if name == "modernbert" else L.self_attn
            hooks.append(attn.register_forward_pre_hook(
                lambda m, a, kw: seen.setdefault("rope", []).append(kw["position_embeddings"]),
                with_kwargs=True))
    kw = {} if types is None else {"token_type_ids": types}
    try:
        with torch.no_grad():
            out = hf(input_ids=ids, attention_mask=mask, output_attentions=True, **kw)
    finally:
        for h in hooks:
            h.remove()
    if name == "modernbert":
        H = hf.config.num_attention_heads
        for qkv, (cos, sin) in zip(seen.pop("qkv"), seen.pop("rope")):
            q, k, v = qkv.view(B, T, 3, H, -1).unbind(dim=2)  # (B, T, H, K) each
            q, k = apply_rotary_pos_emb(q.transpose(1, 2), k.transpose(1, 2), cos, sin)
            seen.setdefault("q", []).append(merged(q))
            seen.setdefault("k", []).append(merged(k))
            seen.setdefault("v", []).append(v.reshape(B, T, -1))
    if name in ROPE_DECODERS:  # transformers' own RoPE and repeat_kv on its projections
        H, G = hf.config.num_attention_heads, hf.config.num_key_value_heads
        for q, k, v, (cos, sin) in zip(seen.pop("q_raw"), seen.pop("k_raw"), seen.pop("v_raw"),
                                       seen.pop("rope")):
            q = q.view(B, T, H, -1).transpose(1, 2)  # (B, H, T, K)
            k, v = (t.view(B, T, G, -1).transpose(1, 2) for t in (k, v))  # (B, G, T, K)
            q, k = llama_rotary(q, k, cos, sin)
            seen.setdefault("q", []).append(merged(q))
            seen.setdefault("k", []).append(merged(repeat_kv(k, H // G)))
            seen.setdefault("v", []).append(merged(repeat_kv(v, H // G)))
    if name.startswith("gpt2"):
        for qkv in seen.pop("qkv"):
            for n, t in zip("qkv", qkv.chunk(3, dim=-1)):  # (B, T, D) each
                seen.setdefault(n, []).append(t)
    return seen, out.attentions


def merged(x):
    """(B, H, T, K) -> (B, T, H K), heads side by side as transformers' projections give them."""
    B, H, T, K = x.shape
    return x.transpose(1, 2).reshape(B, T, H * K)


@pytest.mark.parametrize("name", FAMILIES)
def test_every_cached_value_equals_transformers_modules(saved, name):
    hf, cfg, ours = saved[name]
    ids, mask, types = padded_batch(cfg)
    theirs, attentions = captured(hf, name, ids, mask, types)
    with torch.no_grad():
        out, cache = ours.run_with_cache(ids, mask, token_type_ids=types,
                                         names=list(NAMES))
    L = len(attentions)
    assert L == cfg.num_hidden_layers
    for ref, values in theirs.items():
        assert len(values) == L, (ref, len(values))
    for n in NAMES:
        if n in ("embed",) or n.startswith("score_") and cfg.attention != "disentangled":
            continue
        assert cache.layers(n) == list(range(L)), n
    assert cache["mask"].shape[0] == L  # ModernBERT's padding and band masks stack too
    for ref in ("attn_in", "attn_out", "resid_mid", "ffn_act", "ffn_out", "resid_post"):
        for i in range(L):
            close(cache[ref, i], theirs[ref][i], f"{ref} {i}")
    for ref in ("q", "k", "v", "z"):
        for i in range(L):
            close(merged(cache[ref, i]), theirs[ref][i], f"{ref} {i}")
    torch.testing.assert_close(cache["embed"], out.hidden_states[0], **TOL)
    H, K = cfg.num_attention_heads, cfg.head_dim
    for i in range(L):
        torch.testing.assert_close(cache["weights", i], attentions[i], **TOL)
        q = theirs["q"][i].view(2, -1, H, K).transpose(1, 2)  # (B, H, T, K): transformers'
        k = theirs["k"][i].view(2, -1, H, K).transpose(1, 2)
        content = q @ k.transpose(-2, -1)  # (B, H, T, T) unscaled
        scores = cache["scores", i]
        if cfg.attention == "disentangled":
            c2c = cache["score_c2c", i]
            close(c2c, content / math.sqrt(3 * K))
            close(c2c + cache["score_c2p", i] + cache["score_p2c", i], scores)
        else:
            close(scores, content / math.sqrt(K))
        # the scores, masked and put through a softmax, are transformers' weights
        m = cache["mask", i]
        torch.testing.assert_close((scores + m).softmax(-1), attentions[i], **TOL)
        # the summed head: the heads' scores summed over sqrt(H), one softmax
        summed = (scores.sum(1) / math.sqrt(H) + (m[:, 0] if m.dim() == 4 else m)).softmax(-1)
        torch.testing.assert_close(cache["single_head", i], summed, **TOL)
        # each head's share: transformers' z of that head times its columns of W_O
        w_o = ours.layer(i).attn.out.weight  # (D, D)
        z = theirs["z"][i].view(2, -1, H, K)  # (B, T, H, K)
        for h in (0, H - 1):
            close(cache["head_out", i][:, h], z[..., h, :] @ w_o[:, h * K:(h + 1) * K].T)
        b_o = ours.layer(i).attn.out.bias
        total = cache["head_out", i].sum(1) + (0 if b_o is None else b_o)
        close(total, theirs["attn_out"][i])
    # nothing asked, nothing kept: the plain forward gives the same maps
    with torch.no_grad():
        plain = ours(ids, mask, token_type_ids=types)
    for a, b in zip(plain.attentions, out.attentions):
        assert torch.equal(a, b)


@pytest.mark.parametrize("name", ["bert", "albert", "deberta", "modernbert", "llama", "gpt2"])
def test_a_hook_replaces_a_value_and_the_run_goes_on_from_it(saved, name):
    hf, cfg, ours = saved[name]
    ids, mask, types = padded_batch(cfg)
    L = cfg.num_hidden_layers
    with torch.no_grad():
        base, cache = ours.run_with_cache(ids, mask, token_type_ids=types,
                                          names=("attn_in", "z", "head_out"))
        # the layer's own attention switched in through the hook: nothing changes
        own = {}
        for i in range(L):
            attn = ours.layer(i).attn
            own |= replace_attention(i, lambda x, m, attn=attn: attn(x, m)[0])
        same = ours(ids, mask, token_type_ids=types, hooks=own)
        torch.testing.assert_close(same.last_hidden_state, base.last_hidden_state, atol=1e-6,
                                   rtol=0)
        # one head's z zeroed in layer 1 equals that head switched off by the head mask
        hm = torch.ones(L, cfg.num_attention_heads)
        hm[1, 2] = 0

        def zero_head(z, layer):
            z = z.clone()
            z[:, 2] = 0
            return z
        hooked = ours(ids, mask, token_type_ids=types, hooks={("z", 1): zero_head})
        masked = ours(ids, mask, token_type_ids=types, head_mask=hm)
        torch.testing.assert_close(hooked.last_hidden_state, masked.last_hidden_state,
                                   atol=1e-5, rtol=0)
        assert not torch.allclose(hooked.hidden_states[2], base.hidden_states[2], atol=1e-3)
        # replacing the heads' shares by the cached ones of the same run changes nothing
        shares = ours(ids, mask, token_type_ids=types,
                      hooks={"head_out": lambda v, i: cache["head_out", i].clone()})
        torch.testing.assert_close(shares.last_hidden_state, base.last_hidden_state,
                                   atol=1e-5, rtol=0)


def test_hook_names_and_shapes_are_checked(saved):
    _, cfg, ours = saved["bert"]
    ids, mask, _ = padded_batch(cfg)
    with pytest.raises(HookError, match="no hook point named 'zz'"):
        ours.run_with_cache(ids, mask, names=("zz",))
    with pytest.raises(HookError, match="shape"):
        ours(ids, mask, hooks={"z": lambda z, i: z[:, :1]})


def test_only_the_layers_asked_for_are_kept(saved):
    _, cfg, ours = saved["albert"]
    ids, mask, _ = padded_batch(cfg)
    with torch.no_grad():
        _, cache = ours.run_with_cache(ids, mask, names=("q", "single_head"), layers=[5],
                                       everywhere=("single_head",))
    assert cache.layers("q") == [5] and cache.layers("single_head") == list(range(8))
    assert cache["q"].shape[0] == 1


def test_hooks_without_a_padding_mask_and_in_place(saved):
    """ModernBERT's local layers with no attention mask at all (the band alone), a hook that
    writes into the mask it is given, a hook that edits the heads' shares in place."""
    _, cfg, ours = saved["modernbert"]
    ids, _, _ = padded_batch(cfg)
    L = cfg.num_hidden_layers
    with torch.no_grad():
        base, cache = ours.run_with_cache(ids, names=("mask", "head_out"))
        masks = cache["mask"]  # a list: the global layers mask nothing here
        assert [m is None for m in masks] == [i not in cfg.local_layers for i in range(L)]
        own = {}
        for i in range(L):
            attn = ours.layer(i).attn
            own |= replace_attention(i, lambda x, m, attn=attn: attn(x, m)[0])
        same = ours(ids, hooks=own)
        torch.testing.assert_close(same.last_hidden_state, base.last_hidden_state, atol=1e-6,
                                   rtol=0)
        # a hook that zeroes its mask in place changes that run, never the shared band table
        opened = ours(ids, hooks={("mask", 1): lambda m, i: m.zero_()})
        assert not torch.allclose(opened.attentions[1], base.attentions[1])
        again = ours(ids)
        assert torch.equal(again.attentions[1], base.attentions[1])
        # an in-place edit of the heads' shares is what the layer writes
        zeroed = ours(ids, hooks={("head_out", 0): lambda h, i: h.mul_(0)})
        _, c2 = ours.run_with_cache(ids, names=("attn_out",),
                                    hooks={("head_out", 0): lambda h, i: h.mul_(0)})
        assert c2["attn_out", 0].abs().max() == 0  # ModernBERT has no b_O
        assert not torch.allclose(zeroed.last_hidden_state, base.last_hidden_state)


def test_a_hook_that_would_never_run_is_refused(saved):
    _, cfg, ours = saved["bert"]
    ids, mask, _ = padded_batch(cfg)
    for key in (("z", 99), ("embed", 0)):
        with pytest.raises(HookError, match="would never run"):
            ours(ids, mask, hooks={key: lambda v, i: v})
