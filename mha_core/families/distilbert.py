"""DistilBERT: its own config names (dim, n_layers, ...), no token types, LayerNorm eps fixed at
1e-12, q_lin/k_lin/v_lin/out_lin; sinusoidal positions are stored as weights, so they load."""

from ..config import EncoderConfig
from .base import Family, refuse_decoders

EPS = 1e-12  # fixed in transformers' code, whatever config.json says


def read_config(d: dict) -> EncoderConfig:
    refuse_decoders(d)
    names = dict(vocab_size=d.get("vocab_size"), hidden_size=d.get("dim"),
                 num_hidden_layers=d.get("n_layers"), num_attention_heads=d.get("n_heads"),
                 intermediate_size=d.get("hidden_dim"), hidden_act=d.get("activation"),
                 max_position_embeddings=d.get("max_position_embeddings"),
                 pad_token_id=d.get("pad_token_id"))
    return EncoderConfig.known(names, model_type="distilbert", type_vocab_size=0,
                            layer_norm_eps=EPS, mlm_norm_eps=EPS, positions="absolute",
                            attention="standard", feed_forward="mlp", pre_norm=False, pairs=True)


LAYER = "transformer.layer.{i}."
KEYS = {
    "embeddings.word_embeddings.weight": "embeddings.word.weight",
    "embeddings.position_embeddings.weight": "embeddings.position.weight",
    "embeddings.LayerNorm.weight": "embeddings.norm.weight",
    "embeddings.LayerNorm.bias": "embeddings.norm.bias",
    **{LAYER + hf + "." + p: "layers.{i}." + ours + "." + p
       for hf, ours in (("attention.q_lin", "attn.query"), ("attention.k_lin", "attn.key"),
                        ("attention.v_lin", "attn.value"), ("attention.out_lin", "attn.out"),
                        ("sa_layer_norm", "attn_norm"), ("ffn.lin1", "ffn_in"),
                        ("ffn.lin2", "ffn_out"), ("output_layer_norm", "ffn_norm"))
       for p in ("weight", "bias")},
}
HEADS = {"mlm": (("vocab_transform.", "vocab_layer_norm.", "vocab_projector."), {
    "vocab_transform.weight": "mlm.dense.weight",
    "vocab_transform.bias": "mlm.dense.bias",
    "vocab_layer_norm.weight": "mlm.norm.weight",
    "vocab_layer_norm.bias": "mlm.norm.bias",
    "vocab_projector.bias": "mlm.bias",
})}
TIED = {"vocab_projector.weight": "embeddings.word_embeddings.weight"}
FAMILY = Family("DistilBERT", ("distilbert",), "distilbert.", read_config, lambda cfg: KEYS,
                HEADS, TIED, summary="BERT distilled: no token types, own key names")
