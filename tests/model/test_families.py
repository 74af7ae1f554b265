"""Every family against transformers' eager model on the same tiny random weights (testkit.families:
each an edge variant of its family): attentions and hidden states within 1e-5 on a padded batch
with a pair, masked-LM (and ELECTRA's replaced-token) logits within 1e-4; checkpoints saved with
a head prefix, tied decoders left out of the file, old gamma/beta names; unsupported types."""

import json

import pytest
import torch
from safetensors.torch import load_file, save_file

from mha_core.config import ConfigError
from mha_core.families import read_config
from mha_core.loading import CheckpointError, load_checkpoint
from testkit.families import (
    hf_outputs,
    padded_batch,
    save_every_family,
    specs,
)

FAMILIES = list(specs())


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """name -> (transformers model, its saved directory)."""
    return save_every_family(tmp_path_factory)


@pytest.mark.parametrize("name", FAMILIES)
def test_maps_hidden_states_and_heads_equal_transformers(saved, name):
    hf, d = saved[name]
    cfg, ours = load_checkpoint(d)
    ids, mask, types = padded_batch(cfg)
    assert ids.size(1) > max(cfg.position_buckets, 2 * cfg.local_window)  # the edges are hit
    hs, att, logits = hf_outputs(hf, ids, mask, types)
    with torch.no_grad():
        out = ours(ids, mask, token_type_ids=types)
    assert len(out.attentions) == len(att) == cfg.num_hidden_layers
    assert len(out.hidden_states) == len(hs)
    for a, b in zip(att, out.attentions):  # (B, H, T, T): padded query rows included
        torch.testing.assert_close(b, a, atol=1e-5, rtol=0)
    for a, b in zip(hs, out.hidden_states):  # (B, T, D)
        torch.testing.assert_close(b, a, atol=1e-5, rtol=0)
    if name == "deberta":
        # DeBERTa masks query rows too (outer(mask, mask)): every score of a padded query row is
        # the lowest float, so the row is uniform over all T keys, padded ones included
        padded = out.attentions[0][1, :, 14:]  # (H, T - 14, T)
        torch.testing.assert_close(padded, torch.full_like(padded, 1 / ids.size(1)), atol=1e-7,
                                   rtol=0)
        assert not out.hidden_states[0][1, 14:].any()  # the embeddings zero padded tokens
    with torch.no_grad():
        if name == "electra-discriminator":
            assert ours.mlm is None
            mine = ours.replaced_logits(out.last_hidden_state)  # (B, T)
        else:
            assert ours.replaced is None
            mine = ours.mlm_logits(out.last_hidden_state)  # (B, T, V)
    torch.testing.assert_close(mine, logits, atol=1e-4, rtol=0)


@pytest.mark.parametrize("name", ["roberta", "albert", "modernbert"])
def test_prefixed_keys_gamma_beta_and_a_task_head_beside_them(saved, name, tmp_path):
    """A bare encoder saved under the family's prefix, with old gamma/beta names and a
    classifier beside it: the head is ignored, the encoder equals the original."""
    from mha_core.families import family_of

    hf, d = saved[name]
    prefix = family_of({"model_type": hf.config.model_type}).prefix
    sd = load_file(str(d / "model.safetensors"))
    base = hf.base_model_prefix + "."
    moved = {}
    for k, v in sd.items():
        if not k.startswith(base):
            continue  # the masked-LM head: left out
        k = prefix + k[len(base):]
        if k.endswith("norm.weight") or k.endswith("LayerNorm.weight"):
            k = k[: -len("weight")] + "gamma"
        moved[k] = v
    moved["classifier.weight"] = torch.zeros(3, 32)
    (tmp_path / "config.json").write_text((d / "config.json").read_text())
    save_file(moved, str(tmp_path / "model.safetensors"))
    cfg, ours = load_checkpoint(tmp_path)
    _, ref = load_checkpoint(d)
    assert ours.mlm is None and ref.mlm is not None
    ids, mask, types = padded_batch(cfg)
    with torch.no_grad():
        a = ours(ids, mask, token_type_ids=types).hidden_states[-1]
        b = ref(ids, mask, token_type_ids=types).hidden_states[-1]
    torch.testing.assert_close(a, b, atol=0, rtol=0)


def test_albert_layers_share_their_heads(saved):
    _, d = saved["albert"]
    cfg, ours = load_checkpoint(d)
    assert cfg.num_hidden_layers == 8 and cfg.n_weight_layers == 4 and cfg.shares_layers
    assert cfg.layer_weights == (0, 1, 0, 1, 2, 3, 2, 3)
    assert ours.layer(0) is ours.layer(2) and ours.layer(0) is not ours.layer(1)


def test_unsupported_model_type_lists_the_supported_ones(saved, tmp_path):
    _, d = saved["bert"]
    cfg = json.loads((d / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**cfg, "model_type": "t5"}))
    with pytest.raises(CheckpointError, match="t5.*bert, roberta, xlm-roberta, camembert, "
                                              "distilbert, electra, albert, deberta-v2, "
                                              "modernbert, llama, mistral, qwen2, gpt2"):
        load_checkpoint(tmp_path)
    with pytest.raises(ConfigError, match="share_att_key"):
        read_config({"model_type": "deberta-v2", "relative_attention": True,
                              "share_att_key": False})


def test_modernbert_tables_built_once_serve_inference_and_gradient_forwards(saved):
    """The rotary table and band are cached per (T, kind), not rebuilt per layer: a forward under
    inference_mode first, then one that needs gradients, read the same cached tensors, and both
    equal transformers (an inference tensor in the cache would break the second)."""
    from mha_core.rotary import band_mask, rotary

    hf, d = saved["modernbert"]
    cfg, ours = load_checkpoint(d)
    rotary.cache_clear(), band_mask.cache_clear()
    ids, mask, _ = padded_batch(cfg, T=23)
    with torch.no_grad():
        ref = hf(ids, attention_mask=mask, output_attentions=True).attentions
    with torch.inference_mode():
        first = ours(ids, attention_mask=mask).attentions
    x = ours.embeddings(ids, None).detach().requires_grad_(True)
    out, probs = ours.layer(1).attn(x, mask)
    out.sum().backward()  # would fail on a cached inference tensor
    assert x.grad is not None
    assert rotary.cache_info().misses == 2  # one table per layer kind (global, local)
    assert band_mask.cache_info().misses == 1  # one band, shared by every local layer
    for a, b in zip(first, ref):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=0)


def test_deberta_positions_built_once_serve_inference_and_gradient_forwards(saved):
    """DeBERTa's (T, T) rows of R are built once per (T, config), not per layer: equal to
    transformers' own relative positions, read by an inference forward and then by one that
    needs gradients (an inference tensor in the cache would break the second)."""
    from transformers.models.deberta_v2.modeling_deberta_v2 import build_relative_position

    from mha_core.disentangled import relative_rows

    hf, d = saved["deberta"]
    cfg, ours = load_checkpoint(d)
    relative_rows.cache_clear()
    ids, mask, _ = padded_batch(cfg, T=23)
    S = cfg.position_buckets
    with torch.no_grad():
        ref = hf(ids, attention_mask=mask, output_attentions=True).attentions
    with torch.inference_mode():
        first = ours(ids, attention_mask=mask).attentions
    assert relative_rows.cache_info().misses == 1  # one table for both layers
    rows, lo, n = relative_rows(23, S, S, cfg.max_relative_positions)
    x = torch.zeros(1, 23, 1)
    theirs = build_relative_position(x, x, S, cfg.max_relative_positions)[0]  # (T, T)
    assert torch.equal(rows + lo, (theirs + S).clamp(0, 2 * S - 1))
    assert int(rows.min()) == 0 and n == int(rows.max()) + 1  # rows lo..lo + n - 1 only
    x = ours.embeddings(ids, None, mask).detach().requires_grad_(True)
    out, _ = ours.layer(1).attn(x, ours.mask(mask))
    out.sum().backward()  # would fail on a cached inference tensor
    assert x.grad is not None
    for a, b in zip(first, ref):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=0)
