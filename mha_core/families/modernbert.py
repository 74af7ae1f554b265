"""ModernBERT: pre-LN without biases, rotary positions (theta per layer kind), local layers
with a band of half-width local_attention // 2 between global ones, GeGLU feed-forward, a
final norm; no position or type embeddings; fused Wqkv."""

from ..config import EncoderConfig
from .base import Family, refuse_decoders


def read_config(d: dict) -> EncoderConfig:
    refuse_decoders(d)
    L = d.get("num_hidden_layers", 22)
    every = d.get("global_attn_every_n_layers", 3)
    types = d.get("layer_types") or ["sliding_attention" if i % every else "full_attention"
                                     for i in range(L)]
    rope = d.get("rope_parameters") or {}
    theta = {kind: (rope.get(kind) or {}).get("rope_theta", d.get(key, default))
             for kind, key, default in (("full_attention", "global_rope_theta", 160000.0),
                                        ("sliding_attention", "local_rope_theta", 10000.0))}
    act = d.get("hidden_activation", "gelu")
    return EncoderConfig.known(
        d, model_type="modernbert", type_vocab_size=0, positions="none", attention="rotary",
        feed_forward="geglu", pre_norm=True, bias=False, final_norm=True, pairs=True,
        first_attn_norm=False,
        layer_norm_eps=d.get("norm_eps", 1e-5), hidden_act=act,
        mlm_act=d.get("classifier_activation", act),
        local_layers=tuple(i for i, t in enumerate(types) if t == "sliding_attention"),
        local_window=d.get("local_attention", 128) // 2,
        global_rope_theta=float(theta["full_attention"]),
        local_rope_theta=float(theta["sliding_attention"]))


KEYS = {
    "embeddings.tok_embeddings.weight": "embeddings.word.weight",
    "embeddings.norm.weight": "embeddings.norm.weight",
    "layers.{i}.attn_norm.weight": "layers.{i}.attn_norm.weight",
    "layers.{i}.attn.Wqkv.weight": "layers.{i}.attn.qkv.weight",
    "layers.{i}.attn.Wo.weight": "layers.{i}.attn.out.weight",
    "layers.{i}.mlp_norm.weight": "layers.{i}.ffn_norm.weight",
    "layers.{i}.mlp.Wi.weight": "layers.{i}.ffn_in.weight",
    "layers.{i}.mlp.Wo.weight": "layers.{i}.ffn_out.weight",
    "final_norm.weight": "final_norm.weight",
}


def keys(cfg: EncoderConfig) -> dict:
    """Layer 0 has no attn_norm (it reads the embeddings' norm)."""
    return {**KEYS, "layers.0.attn_norm.weight": None}


HEADS = {"mlm": (("decoder.",), {
    "head.dense.weight": "mlm.dense.weight",
    "head.norm.weight": "mlm.norm.weight",
    "decoder.bias": "mlm.bias",
})}
TIED = {"decoder.weight": "embeddings.tok_embeddings.weight"}
FAMILY = Family("ModernBERT", ("modernbert",), "model.", read_config, keys, HEADS, TIED,
                summary="pre-LN, no biases, rotary positions, local/global layers, GeGLU")
