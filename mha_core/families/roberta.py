"""RoBERTa (also XLM-R, CamemBERT): BERT's layers and key names; positions counted from
pad + 1 over real tokens; one token-type row added to every token; a pair is read through
</s></s> without segment embeddings; its own masked-LM head names."""

from ..config import EncoderConfig
from . import bert
from .base import Family, refuse_decoders


def read_config(d: dict) -> EncoderConfig:
    refuse_decoders(d)
    return EncoderConfig.known(d, model_type="roberta", positions="offset", attention="standard",
                            feed_forward="mlp", pre_norm=False, pairs=True, mlm_act="gelu")


KEYS = bert.KEYS  # the same names below the `roberta.` prefix
HEADS = {"mlm": (("lm_head.",), {
    "lm_head.dense.weight": "mlm.dense.weight",
    "lm_head.dense.bias": "mlm.dense.bias",
    "lm_head.layer_norm.weight": "mlm.norm.weight",
    "lm_head.layer_norm.bias": "mlm.norm.bias",
    "lm_head.bias": "mlm.bias",
})}
TIED = {
    "lm_head.decoder.weight": "embeddings.word_embeddings.weight",
    "lm_head.decoder.bias": "lm_head.bias",
}
FAMILY = Family("RoBERTa", ("roberta", "xlm-roberta", "camembert"), "roberta.", read_config,
                lambda cfg: KEYS, HEADS, TIED,
                summary="positions from pad + 1; one token type; pairs through </s></s>")
