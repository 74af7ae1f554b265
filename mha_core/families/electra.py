"""ELECTRA: BERT's layers and key names; embeddings of width embedding_size, projected to
hidden_size when narrower; two heads: the discriminator's replaced-token logit and the
generator's masked-LM head (of width embedding_size)."""

from ..config import EncoderConfig
from . import bert
from .base import Family


def read_config(d: dict) -> EncoderConfig:
    cfg = bert.read_config(d)
    E = d.get("embedding_size") or cfg.hidden_size
    return EncoderConfig.known(d, model_type="electra", positions="absolute", attention="standard",
                            feed_forward="mlp", pre_norm=False,
                            embedding_size=E if E != cfg.hidden_size else None,
                            mlm_width=E, mlm_act="gelu")


PROJECT = {"embeddings_project.weight": "embeddings.project.weight",
           "embeddings_project.bias": "embeddings.project.bias"}


def keys(cfg: EncoderConfig) -> dict:
    return {**bert.KEYS, **(PROJECT if cfg.embedding_size else {})}


HEADS = {
    "replaced": (("discriminator_predictions.",), {
        "discriminator_predictions.dense.weight": "replaced.dense.weight",
        "discriminator_predictions.dense.bias": "replaced.dense.bias",
        "discriminator_predictions.dense_prediction.weight": "replaced.prediction.weight",
        "discriminator_predictions.dense_prediction.bias": "replaced.prediction.bias",
    }),
    "mlm": (("generator_predictions.", "generator_lm_head."), {
        "generator_predictions.dense.weight": "mlm.dense.weight",
        "generator_predictions.dense.bias": "mlm.dense.bias",
        "generator_predictions.LayerNorm.weight": "mlm.norm.weight",
        "generator_predictions.LayerNorm.bias": "mlm.norm.bias",
        "generator_lm_head.bias": "mlm.bias",
    }),
}
TIED = {"generator_lm_head.weight": "embeddings.word_embeddings.weight"}
FAMILY = Family("ELECTRA", ("electra",), "electra.", read_config, keys, HEADS, TIED,
                summary="narrow embeddings projected up; replaced-token head or generator")
