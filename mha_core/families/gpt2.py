"""GPT-2: a decoder with learned absolute positions, pre-norm LayerNorm with biases, BERT's
multi-head attention under a causal mask, a GELU (tanh) feed-forward, a final norm and a
next-word head tied to the word embeddings. Its Conv1D layers store weights as (in, out) and the
attention's q, k and v as one c_attn: fuse() transposes and splits them."""

from ..config import ConfigError, EncoderConfig
from .base import Family


def read_config(d: dict) -> EncoderConfig:
    for flag, ok in (("scale_attn_weights", True), ("scale_attn_by_inverse_layer_idx", False),
                     ("add_cross_attention", False)):
        if d.get(flag, ok) != ok:
            raise ConfigError(f"{flag} is {d[flag]!r}; headscope runs GPT-2 with {ok}")
    D = d.get("n_embd", 768)
    names = dict(vocab_size=d.get("vocab_size"), hidden_size=D,
                 num_hidden_layers=d.get("n_layer"), num_attention_heads=d.get("n_head"),
                 intermediate_size=d.get("n_inner") or 4 * D,
                 hidden_act=d.get("activation_function", "gelu_new"),
                 max_position_embeddings=d.get("n_positions"),
                 layer_norm_eps=d.get("layer_norm_epsilon"))
    return EncoderConfig.known(
        names, model_type="gpt2", type_vocab_size=0, positions="absolute", attention="standard",
        feed_forward="mlp", norm="layer", pre_norm=True, embed_norm=False, final_norm=True,
        causal=True, pairs=False,
        lm_head="tied" if d.get("tie_word_embeddings", True) else "separate")


LAYER = {"ln_1": "attn_norm", "attn.q": "attn.query", "attn.k": "attn.key",
         "attn.v": "attn.value", "attn.c_proj": "attn.out", "ln_2": "ffn_norm",
         "mlp.c_fc": "ffn_in", "mlp.c_proj": "ffn_out"}
KEYS = {
    "wte.weight": "embeddings.word.weight",
    "wpe.weight": "embeddings.position.weight",
    **{f"h.{{i}}.{hf}.{p}": f"layers.{{i}}.{ours}.{p}"
       for hf, ours in LAYER.items() for p in ("weight", "bias")},
    "ln_f.weight": "final_norm.weight",
    "ln_f.bias": "final_norm.bias",
}
CONV1D = ("attn.c_proj", "mlp.c_fc", "mlp.c_proj")  # stored (in, out): transposed to (out, in)


def keys(cfg: EncoderConfig) -> dict:
    return {**KEYS, "lm_head.weight": "lm_head.weight"} if cfg.lm_head == "separate" else KEYS


def tied(cfg: EncoderConfig) -> dict:
    return {"lm_head.weight": "wte.weight"} if cfg.lm_head == "tied" else {}


def fuse(sd: dict, cfg: EncoderConfig) -> dict:
    """Conv1D weights transposed to nn.Linear's (out, in); c_attn (D, 3D) split into q, k, v;
    the causal-mask buffers older checkpoints saved (attn.bias, attn.masked_bias) dropped."""
    out = {}
    for k, v in sd.items():
        head, _, rest = k.partition(".")  # "h", "{i}.attn.c_attn.weight"
        i, _, rest = rest.partition(".")  # "{i}", "attn.c_attn.weight"
        if head != "h" or rest in ("attn.bias", "attn.masked_bias"):
            if head != "h":
                out[k] = v
            continue
        part, _, p = rest.rpartition(".")  # "attn.c_attn", "weight"
        if part == "attn.c_attn":
            if v.size(-1) % 3:
                raise ConfigError(f"{k} has shape {tuple(v.shape)}: not q, k and v stacked")
            for name, t in zip("qkv", v.chunk(3, dim=-1)):  # weight (D, D) as (in, out); bias (D,)
                out[f"h.{i}.attn.{name}.{p}"] = t.T.contiguous() if p == "weight" else t
        elif part in CONV1D and p == "weight":
            out[k] = v.T.contiguous()  # (out, in)
        else:
            out[k] = v
    return out


FAMILY = Family("GPT-2", ("gpt2",), "transformer.", read_config, keys, tied=tied, fuse=fuse,
                summary="decoder: causal, learned positions, pre-LN, GELU")
