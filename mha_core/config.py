"""BertConfig: the few numbers that define a BERT encoder, read from a checkpoint's config.json."""

import json
from dataclasses import dataclass, fields
from pathlib import Path

ACTIVATIONS = ("gelu", "relu", "gelu_new", "gelu_pytorch_tanh", "silu", "swish", "tanh")


class ConfigError(ValueError):
    """A config.json that describes a model we cannot run. The message names the field."""


@dataclass(frozen=True)
class BertConfig:
    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0

    def __post_init__(self):
        for name in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                     "intermediate_size", "max_position_embeddings", "type_vocab_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError(
                f"hidden_size ({self.hidden_size}) is not divisible by num_attention_heads "
                f"({self.num_attention_heads}), so the heads cannot split it evenly")
        if not isinstance(self.layer_norm_eps, (int, float)) or not self.layer_norm_eps > 0:
            raise ConfigError(f"layer_norm_eps must be a positive number, got "
                              f"{self.layer_norm_eps!r}")
        if self.hidden_act not in ACTIVATIONS:
            raise ConfigError(f"hidden_act {self.hidden_act!r} is not supported; "
                              f"use one of {', '.join(ACTIVATIONS)}")

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_dict(cls, d: dict) -> "BertConfig":
        model_type = d.get("model_type", "bert")
        if model_type != "bert":
            raise ConfigError(f"model_type is {model_type!r}; headscope runs BERT encoders "
                              f"only (model_type 'bert')")
        pos = d.get("position_embedding_type", "absolute")
        if pos != "absolute":
            raise ConfigError(f"position_embedding_type {pos!r} is not supported; only "
                              f"'absolute' position embeddings are")
        for flag in ("is_decoder", "add_cross_attention"):
            if d.get(flag):
                raise ConfigError(f"{flag} is true; headscope runs bidirectional BERT encoders "
                                  f"only (a decoder would need a causal mask)")
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known and v is not None})

    @classmethod
    def from_json_file(cls, path) -> "BertConfig":
        path = Path(path)
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ConfigError(f"cannot read {path}: {e}") from None
        if not isinstance(d, dict):
            raise ConfigError(f"{path} does not hold a JSON object")
        return cls.from_dict(d)
