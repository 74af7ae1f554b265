"""What every family module declares (the Family record) and the checks they share; the
package's __init__ collects the families."""

from collections.abc import Callable
from dataclasses import dataclass, field

from ..config import ConfigError, EncoderConfig


def one_slot_per_layer(cfg: EncoderConfig) -> list:
    """The format arguments of each weight layer's keys: {"i": 0}, {"i": 1}, ..."""
    return [{"i": i} for i in range(cfg.n_weight_layers)]


@dataclass(frozen=True)
class Family:
    name: str  # as shown: "RoBERTa"
    model_types: tuple  # config.json's model_type values
    prefix: str  # the encoder's keys in a checkpoint saved with a head: "roberta."
    read_config: Callable  # dict -> EncoderConfig
    keys: Callable  # cfg -> {hf: ours} with "{i}" (ALBERT also "{g}", "{j}")
    heads: dict = field(default_factory=dict)  # name -> (prefixes, {hf: ours})
    tied: dict = field(default_factory=dict)  # copy -> twin
    slots: Callable = one_slot_per_layer  # cfg -> format arguments per weight layer
    summary: str = ""  # one line: what differs from BERT


def refuse_decoders(d: dict):
    for flag in ("is_decoder", "add_cross_attention"):
        if d.get(flag):
            raise ConfigError(f"{flag} is true; headscope runs bidirectional encoders only (a "
                              f"decoder would need a causal mask)")
