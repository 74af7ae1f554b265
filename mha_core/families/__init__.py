"""The families of BERT-like encoders headscope runs, one small module each.

Every family module declares the same four things, so two of them can be diffed by eye:
  read_config(d)  config.json -> BertConfig, naming the parts that differ (built in mha_core.bert)
  KEYS            the flat key table, Hugging Face name -> ours ("{i}": the weight layer)
  HEADS           optional heads: name -> (the checkpoint prefixes that say it is there, its keys)
  TIED            stored copies of tied weights -> the key they must equal
and a FAMILY record that collects them with the prefix a checkpoint with a head puts before the
encoder's keys (`roberta.`, ...) and what the app says about the family.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from ..config import BertConfig, ConfigError


def one_slot_per_layer(cfg: BertConfig) -> list:
    """The format arguments of each weight layer's keys: {"i": 0}, {"i": 1}, ..."""
    return [{"i": i} for i in range(cfg.n_weight_layers)]


@dataclass(frozen=True)
class Family:
    name: str  # as shown: "RoBERTa"
    model_types: tuple  # config.json's model_type values
    prefix: str  # the encoder's keys in a checkpoint saved with a head: "roberta."
    read_config: Callable  # dict -> BertConfig
    keys: Callable  # cfg -> {hf: ours} with "{i}" (ALBERT also "{g}", "{j}")
    heads: dict = field(default_factory=dict)  # name -> (prefixes, {hf: ours})
    tied: dict = field(default_factory=dict)  # copy -> twin
    slots: Callable = one_slot_per_layer  # cfg -> format arguments per weight layer
    summary: str = ""  # one line: what differs from BERT


def _families() -> dict:
    from . import albert, bert, deberta, distilbert, electra, modernbert, roberta

    return {m.FAMILY.model_types[0]: m.FAMILY
            for m in (bert, roberta, distilbert, electra, albert, deberta, modernbert)}


def supported() -> list:
    """Every model_type headscope runs."""
    return [t for f in _families().values() for t in f.model_types]


def family_of(d: dict) -> Family:
    """The family of a config.json's dict; ConfigError naming the supported types otherwise."""
    model_type = d.get("model_type", "bert")
    for fam in _families().values():
        if model_type in fam.model_types:
            return fam
    raise ConfigError(f"model_type is {model_type!r}; headscope runs these encoders: "
                      f"{', '.join(supported())}")


def refuse_decoders(d: dict):
    for flag in ("is_decoder", "add_cross_attention"):
        if d.get(flag):
            raise ConfigError(f"{flag} is true; headscope runs bidirectional encoders only (a "
                              f"decoder would need a causal mask)")
