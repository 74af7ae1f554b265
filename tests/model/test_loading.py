"""The loader: sources, the key table, and one clear message for each way a checkpoint breaks."""

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

import mha_core
from mha_core.config import read_json
from mha_core.families import read_config
from mha_core.loading import CheckpointError, build_model, read_state_dict
from testkit.models import hf_reference


@pytest.fixture
def ckpt(tiny_dir, tmp_path):
    """A private copy of the tiny checkpoint that a test may break."""
    return shutil.copytree(tiny_dir, tmp_path / "ckpt")


def weights(path):
    return load_file(str(path / "model.safetensors"))


def test_bundled_loads_and_is_frozen(bundled):
    c = bundled.config
    assert (c.num_hidden_layers, c.num_attention_heads, c.hidden_size) == (6, 12, 384)
    assert not bundled.model.training
    assert all(not p.requires_grad for p in bundled.model.parameters())


def test_bert_prefix_and_gamma_beta_checkpoint_loads_and_matches(tiny_dir, tmp_path):
    """An old masked-LM style checkpoint: `bert.` prefixes, LayerNorm gamma/beta, a whole `cls.*`
    head (its LayerNorm in gamma/beta too, the tied decoder stored, the NSP head beside it),
    saved as pytorch_model.bin."""
    sd = weights(tiny_dir)
    old = {}
    for k, v in sd.items():
        k = "bert." + k
        if "LayerNorm" in k:
            k = k.replace(".weight", ".gamma").replace(".bias", ".beta")
        old[k] = v
    D, V = sd["embeddings.word_embeddings.weight"].shape[::-1]
    old.update({"cls.predictions.bias": torch.zeros(V),
                "cls.predictions.transform.dense.weight": torch.eye(D),
                "cls.predictions.transform.dense.bias": torch.zeros(D),
                "cls.predictions.transform.LayerNorm.gamma": torch.ones(D),
                "cls.predictions.transform.LayerNorm.beta": torch.zeros(D),
                "cls.predictions.decoder.weight": old["bert.embeddings.word_embeddings.weight"],
                "cls.seq_relationship.weight": torch.zeros(2, D),
                "cls.seq_relationship.bias": torch.zeros(2)})
    old["bert.embeddings.position_ids"] = torch.arange(64)[None]
    d = tmp_path / "old"
    shutil.copytree(tiny_dir, d)
    (d / "model.safetensors").unlink()
    torch.save(old, d / "pytorch_model.bin")
    ours = mha_core.load_model(str(d))
    assert ours.has_mlm_head
    res = ours.attend("the cat sat on the mat.")
    enc = ours.encode("the cat sat on the mat.")
    with torch.no_grad():
        theirs = hf_reference(tiny_dir)(enc.input_ids[None], output_attentions=True,
                                        output_hidden_states=True)
    for a, b in zip(res.hidden_states, theirs.hidden_states):
        torch.testing.assert_close(a, b[0], atol=1e-5, rtol=0)
    for a, b in zip(res.attentions, theirs.attentions):
        torch.testing.assert_close(a, b[0], atol=1e-5, rtol=0)


def test_missing_weights_file(ckpt):
    (ckpt / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match="no weights in .*model.safetensors"):
        mha_core.load_model(str(ckpt))


def test_missing_config(ckpt):
    (ckpt / "config.json").unlink()
    with pytest.raises(CheckpointError, match="no config.json"):
        mha_core.load_model(str(ckpt))


def test_truncated_safetensors_names_the_file(ckpt):
    f = ckpt / "model.safetensors"
    f.write_bytes(f.read_bytes()[:1000])
    with pytest.raises(CheckpointError, match=r"model\.safetensors is corrupt or truncated"):
        mha_core.load_model(str(ckpt))


def test_corrupt_pytorch_bin_names_the_file(ckpt):
    (ckpt / "model.safetensors").unlink()
    (ckpt / "pytorch_model.bin").write_bytes(b"this is not a checkpoint")
    with pytest.raises(CheckpointError, match=r"pytorch_model\.bin is corrupt or truncated"):
        mha_core.load_model(str(ckpt))


def test_missing_key_is_named(ckpt):
    sd = weights(ckpt)
    del sd["encoder.layer.1.attention.self.key.weight"]
    save_file(sd, str(ckpt / "model.safetensors"))
    with pytest.raises(CheckpointError,
                       match=r"1 missing key: encoder\.layer\.1\.attention\.self\.key\.weight"):
        mha_core.load_model(str(ckpt))


def test_extra_key_is_named(ckpt):
    sd = weights(ckpt)
    sd["encoder.layer.7.attention.self.query.weight"] = torch.zeros(32, 32)
    save_file(sd, str(ckpt / "model.safetensors"))
    with pytest.raises(CheckpointError,
                       match=r"1 unexpected key: encoder\.layer\.7\.attention\.self\.query"):
        mha_core.load_model(str(ckpt))


def test_wrong_shape_names_key_and_both_shapes(ckpt):
    sd = weights(ckpt)
    sd["encoder.layer.0.intermediate.dense.weight"] = torch.zeros(100, 32)
    save_file(sd, str(ckpt / "model.safetensors"))
    with pytest.raises(CheckpointError, match=r"encoder\.layer\.0\.intermediate\.dense\.weight: "
                       r"the checkpoint has \(100, 32\), the config expects \(128, 32\)"):
        mha_core.load_model(str(ckpt))


def edit_config(ckpt, **changes):
    cfg = json.loads((ckpt / "config.json").read_text())
    cfg.update(changes)
    (ckpt / "config.json").write_text(json.dumps(cfg))


@pytest.mark.parametrize("changes,message", [
    ({"model_type": "mamba"}, "model_type is 'mamba'; headscope runs these: bert, "
                               "roberta.*llama.*gpt2"),
    ({"position_embedding_type": "relative_key"}, "position_embedding_type 'relative_key'"),
    ({"hidden_act": "mish"}, "hidden_act 'mish' is not supported"),
    ({"num_attention_heads": 5}, r"hidden_size \(32\) is not divisible by num_attention_heads"),
])
def test_config_we_cannot_run_names_the_field(ckpt, changes, message):
    edit_config(ckpt, **changes)
    with pytest.raises(CheckpointError, match=message):
        mha_core.load_model(str(ckpt))


def test_narrow_mode_refuses_bert_weights(ckpt):
    cfg = read_config(read_json(ckpt / "config.json"))
    with pytest.raises(CheckpointError, match="cannot be loaded into mode='narrow'"):
        build_model(cfg, read_state_dict(ckpt), mode="narrow")


def test_missing_tokenizer_is_clear(ckpt):
    for f in ckpt.iterdir():
        if f.name.startswith(("tokenizer", "vocab", "special_tokens")):
            f.unlink()
    with pytest.raises(CheckpointError, match="cannot load the tokenizer"):
        mha_core.load_model(str(ckpt))


def test_offline_hub_id_says_what_was_tried(monkeypatch, tmp_path):
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # an empty cache (huggingface_hub reads HF_HOME once, at import, so patch the constant)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty"))
    with pytest.raises(CheckpointError) as e:
        mha_core.load_model("no-such-org/no-such-bert")
    msg = str(e.value)
    assert "local Hugging Face cache" in msg and "HF_HUB_OFFLINE" in msg
    assert "pass that directory instead" in msg


def test_fine_tuned_classifier_checkpoint_loads_its_encoder(tiny_dir, tmp_path):
    """BertForSequenceClassification keeps the encoder under `bert.` and a `classifier.*` head."""
    from transformers import BertForSequenceClassification

    d = shutil.copytree(tiny_dir, tmp_path / "clf")
    clf = BertForSequenceClassification.from_pretrained(str(tiny_dir), num_labels=3)
    clf.save_pretrained(str(d))
    assert any(k.startswith("classifier.") for k in weights(d))
    ours = mha_core.load_model(str(d))
    for name, p in ours.model.state_dict().items():
        assert torch.isfinite(p).all(), name
    res = ours.attend("the cat sat on the mat.")
    enc = ours.encode("the cat sat on the mat.")
    with torch.no_grad():
        theirs = clf.bert.eval()(enc.input_ids[None], output_hidden_states=True)
    torch.testing.assert_close(res.hidden_states[-1], theirs.last_hidden_state[0], atol=1e-5,
                               rtol=0)


def test_unknown_keys_beside_bert_prefix_are_named(ckpt):
    """Only the known task heads are dropped from a `bert.` checkpoint; a stray key is named."""
    sd = {"bert." + k: v for k, v in weights(ckpt).items()}
    sd["classifier.weight"] = torch.zeros(2, 32)  # a task head: skipped quietly
    sd["bert_extra.weight"] = torch.zeros(3)
    save_file(sd, str(ckpt / "model.safetensors"))
    with pytest.raises(CheckpointError, match=r"1 unexpected key: bert_extra\.weight") as e:
        mha_core.load_model(str(ckpt))
    assert "classifier" not in str(e.value)


def test_wrapper_prefix_is_stripped(ckpt):
    sd = weights(ckpt)
    save_file({"model." + k: v for k, v in sd.items()}, str(ckpt / "model.safetensors"))
    assert mha_core.load_model(str(ckpt)).attend("hello").tokens == ["[CLS]", "hello", "[SEP]"]


def test_long_key_lists_are_cut_short(ckpt):
    sd = weights(ckpt)
    save_file({k.replace("encoder.layer", "encoder.blocks"): v for k, v in sd.items()},
              str(ckpt / "model.safetensors"))
    with pytest.raises(CheckpointError, match=r"32 missing keys: .* and 27 more") as e:
        mha_core.load_model(str(ckpt))
    assert len(str(e.value)) < 1200


def test_git_lfs_pointer_is_recognised(ckpt):
    (ckpt / "model.safetensors").write_text("version https://git-lfs.github.com/spec/v1\n"
                                            "oid sha256:abc\nsize 123\n")
    with pytest.raises(CheckpointError, match="git-lfs pointer"):
        mha_core.load_model(str(ckpt))


def test_sharded_checkpoint_is_named(ckpt):
    (ckpt / "model.safetensors").unlink()
    (ckpt / "model.safetensors.index.json").write_text("{}")
    with pytest.raises(CheckpointError, match="model.safetensors.index.json is a sharded"):
        mha_core.load_model(str(ckpt))


@pytest.mark.parametrize("flag", ["is_decoder", "add_cross_attention"])
def test_decoder_configs_are_refused(ckpt, flag):
    edit_config(ckpt, **{flag: True})
    with pytest.raises(CheckpointError, match=flag):
        mha_core.load_model(str(ckpt))


def test_one_segment_model_refuses_a_pair_and_raw_forward_checks_length(tmp_path):
    from testkit.models import save_tiny_bert

    ours = mha_core.load_model(str(save_tiny_bert(tmp_path / "one", layers=1,
                                                 type_vocab_size=1)))
    assert ours.attend("the cat").tokens[0] == "[CLS]"
    with pytest.raises(ValueError, match="type_vocab_size 1"):
        ours.attend("the cat", text_pair="sat")
    with pytest.raises(ValueError, match=r"max_position_embeddings \(64\)"):
        ours.model(torch.ones(1, 65, dtype=torch.long))
