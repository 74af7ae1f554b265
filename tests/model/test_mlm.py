"""The masked-LM head against transformers' BertForMaskedLM (eager): logits within 1e-4 on a tiny
random masked-LM BERT saved by transformers with a real tokenizer, with and without a head
switched off; fill_mask's lists against transformers' own softmax; and the loader's rules for
cls.predictions.* (tied decoder, all-or-nothing, old names, the NSP head skipped)."""

import copy

import pytest
import torch
from safetensors.torch import load_file, save_file

import mha_core
from mha_core.loading import CheckpointError

ATOL = 1e-4
TEXTS = [("the cat sat on the [MASK] .", None),
         ("i saw the [MASK] with a telescope .", "the [MASK] sat on the mat ."),
         ("[MASK] [MASK] flies like an arrow", None)]


MLM_SEED = 0  # the tiny masked-LM checkpoint's weights (tests/conftest.py mlm_dir)


def hf_logits(model, enc):
    with torch.no_grad():
        return model(input_ids=enc.input_ids[None],
                     token_type_ids=enc.token_type_ids[None]).logits[0]


def our_logits(bert, enc, head_mask=None):
    with torch.no_grad():
        out = bert.model(enc.input_ids[None], token_type_ids=enc.token_type_ids[None],
                         head_mask=head_mask)
        return bert.model.mlm_logits(out.last_hidden_state)[0]  # (T, V)


def without_head(hf_mlm, layer, head):
    """transformers 5 has no head_mask: zero the head's columns of the attention output
    projection (as tests/model/test_parity.py does for Encoder)."""
    ref = copy.deepcopy(hf_mlm)
    dk = ref.config.hidden_size // ref.config.num_attention_heads
    with torch.no_grad():
        out = ref.bert.encoder.layer[layer].attention.output.dense
        out.weight[:, head * dk:(head + 1) * dk] = 0
    return ref


def test_the_checkpoint_is_a_masked_lm_one(mlm_dir, mlm):
    keys = load_file(str(mlm_dir / "model.safetensors")).keys()
    assert any(k.startswith("cls.predictions.") for k in keys)
    assert "cls.predictions.decoder.weight" not in keys  # transformers 5 stores the tie only
    assert mlm.has_mlm_head
    # the decoder is the word-embedding matrix itself, not a copy
    assert mlm.model.mlm.bias.abs().sum() > 0


@pytest.mark.parametrize("text,pair", TEXTS)
def test_logits_match_transformers(mlm, hf_mlm, text, pair):
    enc = mlm.encode(text, pair)
    torch.testing.assert_close(our_logits(mlm, enc), hf_logits(hf_mlm, enc), atol=ATOL, rtol=0)


@pytest.mark.parametrize("layer,head", [(0, 0), (1, 2)])
def test_logits_match_with_a_head_switched_off(mlm, hf_mlm, layer, head):
    enc = mlm.encode(*TEXTS[1])
    L, H = mlm.config.num_hidden_layers, mlm.config.num_attention_heads
    mask = torch.ones(L, H)
    mask[layer, head] = 0
    ours = our_logits(mlm, enc, mask)
    torch.testing.assert_close(ours, hf_logits(without_head(hf_mlm, layer, head), enc), atol=ATOL,
                               rtol=0)
    # the head mattered: the test can fail
    assert (ours - hf_logits(hf_mlm, enc)).abs().max() > 1e-3


@pytest.mark.parametrize("text,pair", TEXTS)
def test_fill_mask_lists_transformers_own_top_k(mlm, hf_mlm, text, pair):
    enc = mlm.encode(text, pair)
    probs = hf_logits(hf_mlm, enc).softmax(-1)  # (T, V)
    mask_id = mlm.tokenizer.mask_token_id
    positions = [t for t, i in enumerate(enc.input_ids.tolist()) if i == mask_id]
    got = mlm.fill_mask(text, top_k=4, text_pair=pair)
    assert len(got) == len(positions) >= 1
    for t, lists in zip(positions, got):
        top = probs[t].topk(4)
        assert [tok for tok, _ in lists] == mlm.tokenizer.convert_ids_to_tokens(top.indices)
        torch.testing.assert_close(torch.tensor([p for _, p in lists]), top.values,
                                   atol=1e-5, rtol=0)
        assert all(a >= b for (_, a), (_, b) in zip(lists, lists[1:]))


def test_fill_mask_with_a_head_off_matches_the_zeroed_reference(mlm, hf_mlm):
    text, pair = TEXTS[0]
    mask = torch.ones(2, 4)
    mask[1, 1] = 0
    enc = mlm.encode(text, pair)
    t = enc.masks[0]
    ref = hf_logits(without_head(hf_mlm, 1, 1), enc).softmax(-1)[t].topk(3)
    got = mlm.fill_mask(text, top_k=3, head_mask=mask)[0]
    torch.testing.assert_close(torch.tensor([p for _, p in got]), ref.values, atol=1e-5, rtol=0)


def test_typed_sep_is_the_pair_separator_for_fill_mask_too(mlm):
    a, b = "i saw the [MASK] .", "the cat sat ."
    assert mlm.fill_mask(f"{a} [SEP] {b}") == mlm.fill_mask(a, text_pair=b)
    enc = mlm.encode(f"{a} [SEP] {b}")
    assert enc.token_type_ids.tolist().count(1) == len(mlm.encode(a, b).tokens) - len(
        mlm.encode(a).tokens)


def test_masks_past_the_cut_get_no_list(mlm):
    limit = mlm.max_length  # 64 in the tiny checkpoint
    text = "[MASK] " + "cat " * limit + "[MASK] [MASK]"
    enc = mlm.encode(text)
    assert enc.truncated and enc.n_masks_full == 3 and len(enc.masks) == 1
    assert len(mlm.fill_mask(text)) == 1


def test_no_mask_gives_no_lists_and_bad_top_k_is_refused(mlm):
    assert mlm.fill_mask("the cat sat .") == []
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="top_k"):
            mlm.fill_mask("the [MASK] .", top_k=bad)


def test_a_checkpoint_without_the_head_says_what_it_needs(bundled):
    assert not bundled.has_mlm_head
    with pytest.raises(ValueError, match="masked-LM head"):
        bundled.fill_mask("I saw the [MASK].")


# --- the loader's rules for cls.predictions.* --------------------------------------------------

def rewrite(src, dst, edit):
    """A copy of the checkpoint directory src with its state dict edited."""
    import shutil

    shutil.copytree(src, dst)
    sd = load_file(str(dst / "model.safetensors"))
    sd = edit(dict(sd))
    save_file({k: v.contiguous() for k, v in sd.items()}, str(dst / "model.safetensors"))
    return dst


def test_old_style_keys_load_stored_decoder_gamma_beta_and_nsp_head(mlm_dir, mlm, tmp_path):
    def old(sd):
        sd["cls.predictions.decoder.weight"] = sd["bert.embeddings.word_embeddings.weight"].clone()
        sd["cls.predictions.decoder.bias"] = sd["cls.predictions.bias"].clone()
        for end in ("weight", "bias"):
            new = "gamma" if end == "weight" else "beta"
            sd[f"cls.predictions.transform.LayerNorm.{new}"] = sd.pop(
                f"cls.predictions.transform.LayerNorm.{end}")
        sd["cls.seq_relationship.weight"] = torch.zeros(2, 32)  # BertForPreTraining's NSP head
        sd["cls.seq_relationship.bias"] = torch.zeros(2)
        return sd

    old_bert = mha_core.load_model(str(rewrite(mlm_dir, tmp_path / "old", old)))
    assert old_bert.has_mlm_head
    enc = mlm.encode(TEXTS[0][0])  # within float rounding: thread counts reorder sums
    torch.testing.assert_close(our_logits(old_bert, enc), our_logits(mlm, enc), atol=1e-5,
                               rtol=0)


def test_an_untied_decoder_is_refused_by_name(mlm_dir, tmp_path):
    def untied(sd):
        sd["cls.predictions.decoder.weight"] = sd["bert.embeddings.word_embeddings.weight"] + 1
        return sd

    with pytest.raises(CheckpointError, match="cls.predictions.decoder.weight is not tied"):
        mha_core.load_model(str(rewrite(mlm_dir, tmp_path / "untied", untied)))


def test_a_partial_head_names_the_missing_key(mlm_dir, tmp_path):
    def partial(sd):
        del sd["cls.predictions.transform.dense.weight"]
        return sd

    with pytest.raises(CheckpointError, match="missing key: cls.predictions.transform.dense.w"):
        mha_core.load_model(str(rewrite(mlm_dir, tmp_path / "partial", partial)))


def test_a_bad_head_shape_is_named(mlm_dir, tmp_path):
    def wrong(sd):
        sd["cls.predictions.bias"] = torch.zeros(7)
        return sd

    with pytest.raises(CheckpointError, match="shape mismatch for cls.predictions.bias"):
        mha_core.load_model(str(rewrite(mlm_dir, tmp_path / "wrong", wrong)))


def test_dropping_the_head_loads_the_encoder_alone(mlm_dir, mlm, tmp_path):
    def encoder_only(sd):
        return {k: v for k, v in sd.items() if not k.startswith("cls.")}

    plain = mha_core.load_model(str(rewrite(mlm_dir, tmp_path / "plain", encoder_only)))
    assert not plain.has_mlm_head
    torch.testing.assert_close(plain.attend("the cat sat .").attentions,
                               mlm.attend("the cat sat .").attentions, atol=0, rtol=0)
