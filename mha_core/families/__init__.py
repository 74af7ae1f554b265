"""The families headscope runs, one small module each: BERT-like encoders and decoders (Llama,
Qwen2, GPT-2).

Every family module declares the same four things, so two of them can be diffed by eye:
  read_config(d)  config.json -> EncoderConfig, naming the parts that differ (built in
                  mha_core.encoder)
  KEYS            the flat key table, Hugging Face name -> ours ("{i}": the weight layer)
  HEADS           optional heads: name -> (the checkpoint prefixes that say it is there, its keys)
  TIED            stored copies of tied weights -> the key they must equal
and a FAMILY record that collects them with the prefix a checkpoint with a head puts before the
encoder's keys (`roberta.`, ...) and what the app says about the family.
"""

from ..config import ConfigError
from . import albert, bert, deberta, distilbert, electra, gpt2, llama, modernbert, qwen2, roberta
from .base import Family, one_slot_per_layer, refuse_decoders

__all__ = ["Family", "one_slot_per_layer", "refuse_decoders", "family_of", "supported",
           "read_config"]


def _families() -> dict:
    return {m.FAMILY.model_types[0]: m.FAMILY
            for m in (bert, roberta, distilbert, electra, albert, deberta, modernbert,
                      llama, qwen2, gpt2)}


def supported() -> list:
    """Every model_type headscope runs."""
    return [t for f in _families().values() for t in f.model_types]


def family_of(d: dict) -> Family:
    """The family of a config.json's dict; ConfigError naming the supported types otherwise."""
    model_type = d.get("model_type", "bert")
    for fam in _families().values():
        if model_type in fam.model_types:
            return fam
    raise ConfigError(f"model_type is {model_type!r}; headscope runs these: "
                      f"{', '.join(supported())}")




def read_config(d: dict):
    """The EncoderConfig of any supported family's config.json dict (dispatch on model_type)."""
    return family_of(d).read_config(d)

