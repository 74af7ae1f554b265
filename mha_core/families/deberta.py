"""DeBERTa-v3 (model_type deberta-v2): no absolute positions and no token types; disentangled
attention (mha_core.disentangled) with log-bucketed relative positions shared by every layer;
the embeddings zero padded tokens; query/key/value named *_proj; eps from config (1e-7)."""

from ..config import ConfigError, EncoderConfig
from . import bert
from .base import Family, refuse_decoders


def read_config(d: dict) -> EncoderConfig:
    refuse_decoders(d)
    terms = d.get("pos_att_type") or []
    terms = terms.split("|") if isinstance(terms, str) else terms
    if not d.get("relative_attention") or not d.get("share_att_key", True):
        raise ConfigError("headscope runs DeBERTa with relative_attention and share_att_key "
                          "(DeBERTa-v3's settings) only")
    if set(terms) - {"c2p", "p2c"} or d.get("conv_kernel_size", 0):
        raise ConfigError(f"pos_att_type {terms} or conv_kernel_size is not supported; "
                          f"DeBERTa-v3 uses ['p2c', 'c2p'] and no convolution")
    if d.get("embedding_size") not in (None, d.get("hidden_size")):
        raise ConfigError("embedding_size other than hidden_size is not supported for DeBERTa")
    if "layer_norm" not in str(d.get("norm_rel_ebd", "none")):
        raise ConfigError("norm_rel_ebd must be 'layer_norm' (DeBERTa-v3's setting)")
    max_rel = d.get("max_relative_positions", -1)
    max_rel = max_rel if max_rel and max_rel >= 1 else d.get("max_position_embeddings", 512)
    return EncoderConfig.known(
        d, model_type="deberta-v2", type_vocab_size=d.get("type_vocab_size") or 0,
        positions="absolute" if d.get("position_biased_input", True) else "none",
        attention="disentangled", feed_forward="mlp", pre_norm=False, pairs=True,
        max_relative_positions=max_rel, position_buckets=max(0, d.get("position_buckets", -1)),
        pos_att_type=tuple(terms))


KEYS = {
    **{hf: ours for hf, ours in bert.EMBEDDINGS.items()},
    "encoder.rel_embeddings.weight": "relative.embeddings.weight",
    "encoder.LayerNorm.weight": "relative.norm.weight",
    "encoder.LayerNorm.bias": "relative.norm.bias",
    **{hf.replace("self.query.", "self.query_proj.").replace("self.key.", "self.key_proj.")
       .replace("self.value.", "self.value_proj."): ours for hf, ours in bert.LAYERS.items()},
}


def keys(cfg: EncoderConfig) -> dict:
    drop = {"embeddings.position_embeddings.weight"} if cfg.positions == "none" else set()
    if not cfg.type_vocab_size:
        drop.add("embeddings.token_type_embeddings.weight")
    return {hf: ours for hf, ours in KEYS.items() if hf not in drop}


HEADS = bert.HEADS  # DebertaV2ForMaskedLM (legacy): BERT's cls.predictions.* names
TIED = bert.TIED
FAMILY = Family("DeBERTa-v3", ("deberta-v2",), "deberta.", read_config, keys, HEADS, TIED,
                summary="relative positions inside the scores (c2p, p2c); no position rows")
