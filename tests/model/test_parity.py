"""Our encoder against transformers' BertModel (eager attention): every hidden state and every
attention map within 1e-5 in float32, on the bundled model and on a tiny random BERT."""

import copy

import pytest
import torch

from testkit.models import hf_reference

ATOL = 1e-5
SENTENCES = ["I saw the man with a telescope.",
             "The animal didn't cross the street because it was too tired.",
             "hello"]


@pytest.fixture(scope="module", params=["bundled", "tiny"])
def pair(request):
    """(ours, theirs) on the same checkpoint directory."""
    bert = request.getfixturevalue(request.param)
    return bert, hf_reference(bert.path)


def run_hf(hf, ids, token_type_ids=None, attention_mask=None):
    with torch.no_grad():
        return hf(input_ids=ids, token_type_ids=token_type_ids, attention_mask=attention_mask,
                  output_attentions=True, output_hidden_states=True)


def assert_all_close(ours_hidden, ours_attn, theirs):
    assert len(ours_hidden) == len(theirs.hidden_states)
    assert len(ours_attn) == len(theirs.attentions)
    for a, b in zip(ours_hidden, theirs.hidden_states):
        torch.testing.assert_close(a, b, atol=ATOL, rtol=0)
    for a, b in zip(ours_attn, theirs.attentions):
        torch.testing.assert_close(a, b, atol=ATOL, rtol=0)


@pytest.mark.parametrize("text", SENTENCES)
def test_single_sentence_matches(pair, text):
    bert, hf = pair
    res = bert.attend(text)
    enc = bert.encode(text)
    theirs = run_hf(hf, enc.input_ids[None], enc.token_type_ids[None])
    assert_all_close(res.hidden_states[:, None], res.attentions[:, None], theirs)


def test_sentence_pair_matches(pair):
    bert, hf = pair
    a, b = "I saw the man with a telescope.", "The man had a telescope."
    res = bert.attend(a, text_pair=b)
    enc = bert.encode(a, b)
    assert set(enc.token_type_ids.tolist()) == {0, 1}  # the pair really uses segment B
    theirs = run_hf(hf, enc.input_ids[None], enc.token_type_ids[None])
    assert_all_close(res.hidden_states[:, None], res.attentions[:, None], theirs)


def padded_batch(bert, texts):
    encs = [bert.encode(t) for t in texts]
    T = max(len(e.tokens) for e in encs)
    ids = torch.zeros(len(encs), T, dtype=torch.long)  # (B, T), [PAD] = 0
    mask = torch.zeros(len(encs), T, dtype=torch.long)  # (B, T)
    for i, e in enumerate(encs):
        ids[i, : len(e.tokens)] = e.input_ids
        mask[i, : len(e.tokens)] = 1
    return ids, mask


def test_padded_batch_matches(pair):
    bert, hf = pair
    ids, mask = padded_batch(bert, SENTENCES)
    assert mask.sum(1).unique().numel() == len(SENTENCES)  # unequal lengths
    with torch.no_grad():
        ours = bert.model(ids, attention_mask=mask)
    theirs = run_hf(hf, ids, attention_mask=mask)
    # compare the real (unpadded) query positions; padded queries are never shown
    for a, b in zip(ours.hidden_states, theirs.hidden_states):
        torch.testing.assert_close(a * mask[..., None], b * mask[..., None], atol=ATOL, rtol=0)
    for a, b in zip(ours.attentions, theirs.attentions):
        q = mask[:, None, :, None]  # (B, 1, T, 1)
        torch.testing.assert_close(a * q, b * q, atol=ATOL, rtol=0)
        padded_keys = (mask == 0)[:, None, None, :].expand_as(a)  # (B, H, T, T)
        assert torch.all(a[padded_keys] == 0)


def without_head(hf, layer, head):
    """transformers 5 has no head_mask: zero the head's columns of the attention output
    projection in a deep copy. That equals zeroing the head's context vector."""
    ref = copy.deepcopy(hf)
    dk = ref.config.hidden_size // ref.config.num_attention_heads
    with torch.no_grad():
        ref.encoder.layer[layer].attention.output.dense.weight[:, head * dk:(head + 1) * dk] = 0
    return ref


@pytest.mark.parametrize("layer,head", [(0, 0), (1, 3)])
def test_head_mask_matches_zeroed_output_columns(pair, layer, head):
    bert, hf = pair
    text = SENTENCES[0]
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    mask = torch.ones(L, H)
    mask[layer, head] = 0
    res = bert.attend(text, head_mask=mask)
    enc = bert.encode(text)
    theirs = run_hf(without_head(hf, layer, head), enc.input_ids[None], enc.token_type_ids[None])
    for a, b in zip(res.hidden_states, theirs.hidden_states):
        torch.testing.assert_close(a, b[0], atol=ATOL, rtol=0)
    for i, (a, b) in enumerate(zip(res.attentions, theirs.attentions)):
        if i == layer:  # our switched-off head reports zero weights; the rest must match
            assert torch.all(a[head] == 0)
            keep = [h for h in range(H) if h != head]
            torch.testing.assert_close(a[keep], b[0, keep], atol=ATOL, rtol=0)
        else:
            torch.testing.assert_close(a, b[0], atol=ATOL, rtol=0)


def test_single_head_from_transformers_own_projections(bundled):
    """The collapsed single head, rebuilt from transformers' query/key layers and its hidden
    states: softmax((h W_Q + b_Q)(h W_K + b_K)^T / sqrt(d_model))."""
    hf = hf_reference(bundled.path)
    text = "I saw the man with a telescope."
    enc = bundled.encode(text)
    theirs = run_hf(hf, enc.input_ids[None], enc.token_type_ids[None])
    res = bundled.attend(text)
    D = bundled.config.hidden_size
    for i, layer in enumerate(hf.encoder.layer):
        h = theirs.hidden_states[i][0]  # (T, D): the input of layer i
        with torch.no_grad():
            q, k = layer.attention.self.query(h), layer.attention.self.key(h)  # (T, D)
        expected = torch.softmax(q @ k.T / D**0.5, dim=-1)  # (T, T)
        torch.testing.assert_close(res.single_head[i], expected, atol=ATOL, rtol=0)


ACTIVATIONS = ["gelu", "gelu_new", "gelu_pytorch_tanh", "relu", "silu", "swish", "tanh"]


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_every_supported_activation_matches(tmp_path, act):
    import mha_core
    from testkit.models import save_tiny_bert

    path = save_tiny_bert(tmp_path / act, layers=1, hidden_act=act, layer_norm_eps=1e-3)
    ours = mha_core.load_model(str(path))
    enc = ours.encode("the cat sat on the mat.")
    theirs = run_hf(hf_reference(path), enc.input_ids[None], enc.token_type_ids[None])
    res = ours.attend("the cat sat on the mat.")
    assert_all_close(res.hidden_states[:, None], res.attentions[:, None], theirs)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_checkpoint_is_read_as_float32(tmp_path, dtype):
    from transformers import BertModel

    import mha_core
    from testkit.models import save_tiny_bert

    path = save_tiny_bert(tmp_path / "half", layers=1)
    BertModel.from_pretrained(str(path), dtype=dtype).save_pretrained(str(path))
    from safetensors.torch import load_file
    assert {t.dtype for t in load_file(str(path / "model.safetensors")).values()} == {dtype}
    ours = mha_core.load_model(str(path))
    assert all(p.dtype == torch.float32 for p in ours.model.parameters())
    enc = ours.encode("hello world")
    theirs = run_hf(hf_reference(path), enc.input_ids[None], enc.token_type_ids[None])
    res = ours.attend("hello world")
    assert_all_close(res.hidden_states[:, None], res.attentions[:, None], theirs)
