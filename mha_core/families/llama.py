"""Llama (SmolLM2, TinyLlama, Llama 2 and 3 shapes; Mistral without its window): a decoder.
Causal, pre-norm with RMSNorm, no position embeddings but RoPE on q and k, grouped-query heads,
a SwiGLU feed-forward (gate_proj and up_proj: ffn_gate and ffn_in), a final norm and a
next-word head, tied to the word embeddings or its own."""

from ..config import ConfigError, EncoderConfig
from .base import Family


def rope(d: dict) -> dict:
    """RoPE's base from transformers 5's rope_parameters or 4's rope_theta, and Llama 3.1's
    schedule ("llama3"); other scaled RoPE (linear, dynamic, YaRN, ...) is refused by name."""
    params = d.get("rope_parameters") or d.get("rope_scaling") or {}
    if not isinstance(params, dict):
        raise ConfigError(f"rope_parameters must be an object, got {params!r}")
    kind = params.get("rope_type", params.get("type", "default"))
    if kind not in (None, "default", "llama3"):
        raise ConfigError(f"rope type {kind!r} is not supported; headscope runs the default "
                          f"RoPE and Llama 3's ('llama3')")
    theta = float(params.get("rope_theta") or d.get("rope_theta") or 10000.0)
    llama3 = ()
    if kind == "llama3":
        names = ("factor", "low_freq_factor", "high_freq_factor",
                 "original_max_position_embeddings")
        try:
            llama3 = tuple(float(params[k]) for k in names)
        except (KeyError, TypeError, ValueError):
            raise ConfigError(f"rope type 'llama3' needs the numbers {', '.join(names)}; got "
                              f"{params!r}") from None
    return dict(rope_theta=theta, rope_llama3=llama3)


def decoder_config(d: dict, model_type: str, **parts) -> EncoderConfig:
    """What every RoPE decoder shares (Llama, Qwen2), with the family's parts."""
    H, D = d.get("num_attention_heads", 12), d.get("hidden_size", 768)  # EncoderConfig's
    if d.get("head_dim") not in (None, D // H):
        raise ConfigError(f"head_dim {d['head_dim']} differs from hidden_size / "
                          f"num_attention_heads ({D // H}); headscope's heads split d_model "
                          f"evenly")
    for flag in ("mlp_bias", "use_sliding_window", "sliding_window"):
        if d.get(flag) and (flag != "sliding_window" or d.get("use_sliding_window", True)):
            raise ConfigError(f"{flag} is set; headscope runs {model_type} without it")
    return EncoderConfig.known(
        d, model_type=model_type, type_vocab_size=0, positions="none", attention="grouped",
        feed_forward="swiglu", norm="rms", pre_norm=True, embed_norm=False, final_norm=True,
        causal=True, pairs=False, layer_norm_eps=d.get("rms_norm_eps", 1e-6),
        hidden_act=d.get("hidden_act", "silu"), **rope(d),
        lm_head="tied" if d.get("tie_word_embeddings", False) else "separate", **parts)


def read_config(d: dict) -> EncoderConfig:
    """attention_bias: q, k, v and o have biases (the feed-forward never: mlp_bias is refused)."""
    bias = bool(d.get("attention_bias", False))
    return decoder_config(d, "llama", bias=bias, qkv_bias=bias, ffn_bias=False)


def keys(cfg: EncoderConfig) -> dict:
    """Below the `model.` prefix; biases where the config has them (Qwen2's q, k, v)."""
    table = {
        "embed_tokens.weight": "embeddings.word.weight",
        "layers.{i}.input_layernorm.weight": "layers.{i}.attn_norm.weight",
        "layers.{i}.self_attn.q_proj.weight": "layers.{i}.attn.query.weight",
        "layers.{i}.self_attn.k_proj.weight": "layers.{i}.attn.key.weight",
        "layers.{i}.self_attn.v_proj.weight": "layers.{i}.attn.value.weight",
        "layers.{i}.self_attn.o_proj.weight": "layers.{i}.attn.out.weight",
        "layers.{i}.post_attention_layernorm.weight": "layers.{i}.ffn_norm.weight",
        "layers.{i}.mlp.gate_proj.weight": "layers.{i}.ffn_gate.weight",
        "layers.{i}.mlp.up_proj.weight": "layers.{i}.ffn_in.weight",
        "layers.{i}.mlp.down_proj.weight": "layers.{i}.ffn_out.weight",
        "norm.weight": "final_norm.weight",
    }
    qkv_bias = cfg.bias if cfg.qkv_bias is None else cfg.qkv_bias
    for hf, ours in (("q_proj", "query"), ("k_proj", "key"), ("v_proj", "value")):
        if qkv_bias:
            table[f"layers.{{i}}.self_attn.{hf}.bias"] = f"layers.{{i}}.attn.{ours}.bias"
    if cfg.bias:
        table["layers.{i}.self_attn.o_proj.bias"] = "layers.{i}.attn.out.bias"
    if cfg.lm_head == "separate":
        table["lm_head.weight"] = "lm_head.weight"
    return table


def tied(cfg: EncoderConfig) -> dict:
    return {"lm_head.weight": "embed_tokens.weight"} if cfg.lm_head == "tied" else {}


def fuse(sd: dict, cfg: EncoderConfig) -> dict:
    """RoPE's inv_freq buffers, which older checkpoints saved, dropped (they are no weights)."""
    return {k: v for k, v in sd.items() if not k.endswith("rotary_emb.inv_freq")}


FAMILY = Family("Llama", ("llama", "mistral"), "model.", read_config, keys, tied=tied,
                fuse=fuse, summary="decoder: causal, RMSNorm, RoPE, grouped-query heads, "
                                   "SwiGLU")
