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
    tied: dict | Callable = field(default_factory=dict)  # copy -> twin (or cfg -> that)
    slots: Callable = one_slot_per_layer  # cfg -> format arguments per weight layer
    summary: str = ""  # one line: what differs from BERT
    # (state dict, cfg) -> the state dict with weights the checkpoint keeps apart (or fused, or
    # transposed) put as ours are, before the key table is read (decoders)
    fuse: Callable | None = None

    def tied_keys(self, cfg) -> dict:
        return self.tied(cfg) if callable(self.tied) else self.tied


def refuse_decoders(d: dict):
    for flag in ("is_decoder", "add_cross_attention"):
        if d.get(flag):
            raise ConfigError(f"{flag} is true: a BERT-style encoder used as a decoder is not "
                              f"supported; headscope runs bidirectional encoders and the "
                              f"decoders Llama, Qwen2 and GPT-2")
