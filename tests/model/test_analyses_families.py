"""Each analysis that reads the forward cache, on a tiny model of every family (testkit.families'
edge variants, with a real tokenizer), against transformers' eager model on the same weights:
its modules' values captured by forward hooks (tests/model/test_forward_cache.captured) and its
output attentions, never our own forward. The loaded weights themselves are checked equal to
transformers' by tests/model/test_families.py, so W_O is read from our model here."""

import pytest
import torch

import mha_core
from mha_core import norms, qk_space
from mha_core.neuron import real_steps
from testkit.families import build_tiny_family, decoder_specs, save_tiny_family, specs
from tests.model.test_forward_cache import captured, close

FAMILIES = list(specs()) + list(decoder_specs())
TEXT = "I saw the man with a telescope."


@pytest.fixture(scope="module", params=FAMILIES)
def family(request, tmp_path_factory):
    name = request.param
    bert = mha_core.load_model(str(save_tiny_family(name, tmp_path_factory.mktemp(name))),
                              device="cpu")
    hf = build_tiny_family(name)  # seed 0: the weights saved above
    res = bert.attend(TEXT)
    enc = res.encoded
    types = enc.token_type_ids[None] if bert.config.type_vocab_size >= 2 else None
    theirs, att = captured(hf, name, enc.input_ids[None], torch.ones_like(enc.input_ids[None]),
                           types)
    return name, bert, res, theirs, att


def heads(x, H):
    """transformers' (1, T, H K) -> (H, T, K)."""
    return x[0].view(x.size(1), H, -1).transpose(0, 1)


def test_activations_are_what_each_layer_computed(family):
    name, bert, res, theirs, att = family
    acts = bert.activations(res)
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    assert acts.q.shape[0] == acts.head_out.shape[0] == L == len(att)
    for i in range(L):
        for n in ("q", "k", "v", "z"):
            close(getattr(acts, n)[i], heads(theirs[n][i], H), f"{name} {n} {i}")
        b_o = bert.model.layer(i).attn.out.bias
        close(acts.head_out[i].sum(0) + (0 if b_o is None else b_o), theirs["attn_out"][i][0],
              f"{name} head_out {i}")
        close(acts.attn_in[i], theirs["attn_in"][i][0])


def test_norm_maps_from_transformers_values(family):
    name, bert, res, theirs, att = family
    H = bert.config.num_attention_heads
    K = bert.config.head_dim
    got = norms.result_norm_maps(bert, res)  # (L, H, T, T)
    for i in range(len(att)):
        v = heads(theirs["v"][i], H)  # (H, T, K)
        w_o = bert.model.layer(i).attn.out.weight  # (D, D)
        f = torch.stack([v[h] @ w_o[:, h * K:(h + 1) * K].T for h in range(H)])  # (H, T, D)
        want = att[i][0] * f.norm(dim=-1)[:, None, :]  # (H, T, T)
        torch.testing.assert_close(got[i], want, rtol=1e-4, atol=1e-5)


def test_query_key_space_is_the_scores_own_q_and_k(family):
    name, bert, res, theirs, att = family
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    space = qk_space.qk_vectors(bert, [TEXT], layer=L - 1, head=1)
    close(torch.as_tensor(space.queries), heads(theirs["q"][L - 1], H)[1])
    close(torch.as_tensor(space.keys), heads(theirs["k"][L - 1], H)[1])


def test_neuron_view_reads_the_run(family):
    name, bert, res, theirs, att = family
    H = bert.config.num_attention_heads
    for layer in {0, len(att) - 1}:
        steps = real_steps(bert, res, layer, H - 1, 2)
        want = att[layer][0, H - 1, 2].numpy()
        torch.testing.assert_close(torch.as_tensor(steps.module_probs), torch.as_tensor(want),
                                   atol=1e-5, rtol=0)
        torch.testing.assert_close(torch.as_tensor(steps.probs), torch.as_tensor(want),
                                   atol=1e-5, rtol=0)
        close(torch.as_tensor(steps.q), heads(theirs["q"][layer], H)[H - 1, 2])
