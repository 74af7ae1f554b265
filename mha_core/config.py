"""EncoderConfig: the numbers and the named parts that define one model, an encoder of the BERT
family or a decoder (Llama, Qwen2, GPT-2), read from a checkpoint's config.json by that family's
module (mha_core/families/*.py).

The first block of fields is BERT's own. The second block names the parts that differ between
families (mha_core/encoder.py builds them); each family's `read_config` sets them explicitly, so
reading two family files side by side shows what differs. The third block is the decoders'.
"""

import json
from dataclasses import dataclass, fields
from pathlib import Path

ACTIVATIONS = ("gelu", "relu", "gelu_new", "gelu_pytorch_tanh", "silu", "swish", "tanh")
POSITIONS = ("absolute", "offset", "none")  # learned rows from 0; RoBERTa's from pad + 1; none
# BERT (GPT-2 too); DeBERTa's c2p + p2c; ModernBERT; decoders' grouped-query heads with RoPE
ATTENTIONS = ("standard", "disentangled", "rotary", "grouped")
# act(x W1) W2; GeGLU (act(a) * g) W2 with a, g = chunks of x W1 (ModernBERT); SwiGLU with
# a = x W_gate, g = x W1 (Llama)
FEED_FORWARDS = ("mlp", "geglu", "swiglu")
NORMS = ("layer", "rms")  # LayerNorm; RMSNorm (Llama, Qwen2): x / rms(x) * w, no centring
LM_HEADS = ("none", "tied", "separate")  # a decoder's next-word head: E^T, or its own matrix


class ConfigError(ValueError):
    """A config.json that describes a model we cannot run. The message names the field."""


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be loaded. The message says what is wrong and how to fix it."""


@dataclass(frozen=True)
class EncoderConfig:
    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12  # attention layers run, in order (ALBERT: groups x inner layers)
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    max_position_embeddings: int = 512
    type_vocab_size: int = 2  # 0: no token-type embeddings (DistilBERT, DeBERTa-v3, ModernBERT)
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0
    # --- the parts that differ between families ---
    model_type: str = "bert"
    embedding_size: int | None = None  # E when the embeddings are narrower than D (ELECTRA, ALBERT)
    positions: str = "absolute"
    attention: str = "standard"
    feed_forward: str = "mlp"
    pre_norm: bool = False  # LN before each block (ModernBERT) instead of after the residual
    bias: bool = True  # the Linear layers and LayerNorms have biases (ModernBERT: none)
    final_norm: bool = False  # one LayerNorm after the last layer (ModernBERT)
    layer_weights: tuple | None = None  # which weight layer each run layer uses (ALBERT shares)
    inner_layers: int = 1  # ALBERT's inner_group_num: weight layers per shared group
    pairs: bool | None = None  # takes a sentence pair; None: when type_vocab_size >= 2
    # masked-LM head: its width (E for ELECTRA's generator and ALBERT), activation, LN eps
    mlm_width: int | None = None
    mlm_act: str | None = None
    mlm_norm_eps: float | None = None
    # DeBERTa (attention "disentangled"): log-bucketed relative positions i - j
    position_buckets: int = 0
    pos_att_type: tuple = ()  # which position terms: "c2p" (content to position), "p2c"
    max_relative_positions: int = 0
    # ModernBERT (attention "rotary"): the local layers see a band |i - j| <= w, the others all
    local_layers: tuple = ()
    local_window: int = 0  # half-width w of the band
    global_rope_theta: float = 10000.0
    local_rope_theta: float = 10000.0
    # --- decoders (Llama, Qwen2, GPT-2) ---
    causal: bool = False  # token i sees keys j <= i only: the upper triangle is not attendable
    norm: str = "layer"
    embed_norm: bool = True  # a norm right after the embeddings (BERT); decoders have none
    first_attn_norm: bool = True  # ModernBERT's layer 0 reads the embeddings' norm directly
    num_key_value_heads: int | None = None  # grouped-query attention: H / this query heads
    # share each key/value head; None: one each (H)
    qkv_bias: bool | None = None  # q, k, v projections' biases (Qwen2: yes); None: `bias`
    ffn_bias: bool | None = None  # the feed-forward's biases (Llama: none); None: `bias`
    rope_theta: float = 10000.0  # "grouped" attention's RoPE base
    # Llama 3.1's RoPE schedule (factor, low_freq_factor, high_freq_factor, original context)
    rope_llama3: tuple = ()
    rotary: bool = True  # "grouped" attention turns q and k (Llama, Qwen2); False: no RoPE
    lm_head: str = "none"

    def __post_init__(self):
        for name in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                     "intermediate_size", "max_position_embeddings"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        t = self.type_vocab_size
        if not isinstance(t, int) or isinstance(t, bool) or t < 0:
            raise ConfigError(f"type_vocab_size must be a non-negative integer, got {t!r}")
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError(
                f"hidden_size ({self.hidden_size}) is not divisible by num_attention_heads "
                f"({self.num_attention_heads}), so the heads cannot split it evenly")
        if not isinstance(self.layer_norm_eps, (int, float)) or not self.layer_norm_eps > 0:
            raise ConfigError(f"layer_norm_eps must be a positive number, got "
                              f"{self.layer_norm_eps!r}")
        for name, value in (("hidden_act", self.hidden_act), ("mlm_act", self.mlm_act)):
            if value is not None and value not in ACTIVATIONS:
                raise ConfigError(f"{name} {value!r} is not supported; "
                                  f"use one of {', '.join(ACTIVATIONS)}")
        for name, allowed in (("positions", POSITIONS), ("attention", ATTENTIONS),
                              ("feed_forward", FEED_FORWARDS), ("norm", NORMS),
                              ("lm_head", LM_HEADS)):
            if getattr(self, name) not in allowed:
                raise ConfigError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.layer_weights is not None and len(self.layer_weights) != self.num_hidden_layers:
            raise ConfigError("layer_weights must name one weight layer per run layer")
        kv = self.kv_heads
        if not isinstance(kv, int) or isinstance(kv, bool) or kv < 1 \
                or self.num_attention_heads % kv:
            raise ConfigError(f"num_key_value_heads ({self.num_key_value_heads!r}) must divide "
                              f"num_attention_heads ({self.num_attention_heads}): each key/value "
                              f"head serves a group of query heads")

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @property
    def kv_heads(self) -> int:
        """Key/value heads: H, or fewer in grouped-query attention (each shared by a group)."""
        return self.num_attention_heads if self.num_key_value_heads is None \
            else self.num_key_value_heads

    @property
    def is_decoder(self) -> bool:
        """A causal language model: reads left to right and predicts the next word."""
        return self.causal

    @property
    def embedding_width(self) -> int:
        return self.embedding_size or self.hidden_size

    @property
    def n_weight_layers(self) -> int:
        """How many layers of weights the checkpoint holds (fewer than run when shared)."""
        return 1 + max(self.layer_weights) if self.layer_weights else self.num_hidden_layers

    @property
    def shares_layers(self) -> bool:
        return self.n_weight_layers < self.num_hidden_layers

    @property
    def takes_pairs(self) -> bool:
        return self.type_vocab_size >= 2 if self.pairs is None else self.pairs

    @classmethod
    def known(cls, d: dict, **parts) -> "EncoderConfig":
        """The fields of d this class knows (None values dropped), with the family's parts."""
        names = {f.name for f in fields(cls)}
        return cls(**{**{k: v for k, v in d.items() if k in names and v is not None}, **parts})


def read_json(path) -> dict:
    path = Path(path)
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from None
    if not isinstance(d, dict):
        raise ConfigError(f"{path} does not hold a JSON object")
    return d


BertConfig = EncoderConfig  # BERT's name for it, kept for code written against it
