"""BERT: learned absolute positions, two token types, post-LN layers, GELU feed-forward."""

from ..config import ConfigError, EncoderConfig
from .base import Family, refuse_decoders


def read_config(d: dict) -> EncoderConfig:
    pos = d.get("position_embedding_type", "absolute")
    if pos != "absolute":
        raise ConfigError(f"position_embedding_type {pos!r} is not supported; only "
                          f"'absolute' position embeddings are")
    refuse_decoders(d)
    return EncoderConfig.known(d, model_type="bert", positions="absolute", attention="standard",
                            feed_forward="mlp", pre_norm=False)


EMBEDDINGS = {
    "embeddings.word_embeddings.weight": "embeddings.word.weight",
    "embeddings.position_embeddings.weight": "embeddings.position.weight",
    "embeddings.token_type_embeddings.weight": "embeddings.token_type.weight",
    "embeddings.LayerNorm.weight": "embeddings.norm.weight",
    "embeddings.LayerNorm.bias": "embeddings.norm.bias",
}
LAYERS = {
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
KEYS = {**EMBEDDINGS, **LAYERS}
HEADS = {"mlm": (("cls.predictions.",), {
    "cls.predictions.transform.dense.weight": "mlm.dense.weight",
    "cls.predictions.transform.dense.bias": "mlm.dense.bias",
    "cls.predictions.transform.LayerNorm.weight": "mlm.norm.weight",
    "cls.predictions.transform.LayerNorm.bias": "mlm.norm.bias",
    "cls.predictions.bias": "mlm.bias",
})}
TIED = {
    "cls.predictions.decoder.weight": "embeddings.word_embeddings.weight",
    "cls.predictions.decoder.bias": "cls.predictions.bias",
}
FAMILY = Family("BERT", ("bert",), "bert.", read_config, lambda cfg: KEYS, HEADS, TIED,
                summary="the reference: learned positions, segments A/B, post-LN, GELU")
