"""ALBERT: factorised embeddings (width E, then E -> D), layers shared in groups: run layer i
uses group int(i / (L / groups)) and all that group's inner layers, so every run layer of one
group has the SAME heads (the same parameters); gelu_new; masked-LM head of width E."""

from ..config import ConfigError, EncoderConfig
from .base import Family, refuse_decoders


def layer_weights(layers: int, groups: int, inner: int) -> tuple:
    """The weight layer (group * inner + j) each run layer uses, in order."""
    return tuple(int(i / (layers / groups)) * inner + j for i in range(layers)
                 for j in range(inner))


def read_config(d: dict) -> EncoderConfig:
    refuse_decoders(d)
    L = d.get("num_hidden_layers", 12)
    groups, inner = d.get("num_hidden_groups", 1), d.get("inner_group_num", 1)
    if not all(isinstance(n, int) and n >= 1 for n in (L, groups, inner)) or groups > L:
        raise ConfigError(f"num_hidden_layers ({L}), num_hidden_groups ({groups}) and "
                          f"inner_group_num ({inner}) must be positive, with no more groups "
                          f"than layers")
    return EncoderConfig.known(
        {**d, "num_hidden_layers": L * inner}, model_type="albert", positions="absolute",
        attention="standard", feed_forward="mlp", pre_norm=False,
        embedding_size=d.get("embedding_size", 128), mlm_width=d.get("embedding_size", 128),
        layer_weights=layer_weights(L, groups, inner), inner_layers=inner)


def slots(cfg: EncoderConfig) -> list:
    """Weight layer g * inner + j is albert_layer_groups.{g}.albert_layers.{j}."""
    inner = cfg.inner_layers
    return [{"g": n // inner, "j": n % inner, "i": n} for n in range(cfg.n_weight_layers)]


LAYER = "encoder.albert_layer_groups.{g}.albert_layers.{j}."
KEYS = {
    "embeddings.word_embeddings.weight": "embeddings.word.weight",
    "embeddings.position_embeddings.weight": "embeddings.position.weight",
    "embeddings.token_type_embeddings.weight": "embeddings.token_type.weight",
    "embeddings.LayerNorm.weight": "embeddings.norm.weight",
    "embeddings.LayerNorm.bias": "embeddings.norm.bias",
    "encoder.embedding_hidden_mapping_in.weight": "embeddings.project.weight",
    "encoder.embedding_hidden_mapping_in.bias": "embeddings.project.bias",
    **{LAYER + hf + "." + p: "layers.{i}." + ours + "." + p
       for hf, ours in (("attention.query", "attn.query"), ("attention.key", "attn.key"),
                        ("attention.value", "attn.value"), ("attention.dense", "attn.out"),
                        ("attention.LayerNorm", "attn_norm"), ("ffn", "ffn_in"),
                        ("ffn_output", "ffn_out"), ("full_layer_layer_norm", "ffn_norm"))
       for p in ("weight", "bias")},
}
HEADS = {"mlm": (("predictions.",), {
    "predictions.dense.weight": "mlm.dense.weight",
    "predictions.dense.bias": "mlm.dense.bias",
    "predictions.LayerNorm.weight": "mlm.norm.weight",
    "predictions.LayerNorm.bias": "mlm.norm.bias",
    "predictions.bias": "mlm.bias",
})}
TIED = {
    "predictions.decoder.weight": "embeddings.word_embeddings.weight",
    "predictions.decoder.bias": "predictions.bias",
}
FAMILY = Family("ALBERT", ("albert",), "albert.", read_config, lambda cfg: KEYS, HEADS, TIED,
                slots=slots, summary="factorised embeddings; layers shared in groups")
