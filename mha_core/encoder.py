"""The transformer of every family, from scratch: embeddings, one layer loop, and the model that
returns every head. Encoders of the BERT family and decoders (Llama, Qwen2, GPT-2) are the same
loop; the parts that differ are named in the config (read by mha_core/families/*.py) and built
here: positions, score rule (mha_core.attention for BERT and GPT-2, mha_core.disentangled for
DeBERTa, mha_core.rotary for ModernBERT, mha_core.grouped for Llama and Qwen2), causal mask,
norm (LayerNorm or RMSNorm) and its placement, feed-forward, shared layers, and the heads on
top (masked-LM, replaced-token, next-word).

Shape letters: B batch, T tokens, D hidden size, E embedding width, H heads, L layers,
F feed-forward size.
"""

from dataclasses import dataclass

import torch
import torch.nn as nn

from .act import ACT_FNS
from .attention import MultiHeadSelfAttention
from .config import EncoderConfig
from .disentangled import DisentangledAttention, RelativePositions
from .grouped import GroupedAttention
from .hooks import NAMES, ForwardCache, HookError, Tap
from .mlm import MaskedLMHead, ReplacedTokenHead
from .rotary import RotaryAttention


def layer_norm(cfg: EncoderConfig, width: int | None = None, eps: float | None = None):
    """The family's norm: LayerNorm, or RMSNorm x / sqrt(mean(x^2) + eps) * w (Llama, Qwen2)."""
    if cfg.norm == "rms":
        return nn.RMSNorm(width or cfg.hidden_size, eps=eps or cfg.layer_norm_eps)
    return nn.LayerNorm(width or cfg.hidden_size, eps=eps or cfg.layer_norm_eps, bias=cfg.bias)


class Embeddings(nn.Module):
    """word (+ position) (+ token type), LayerNorm (not in decoders), then E -> D when E < D
    (ELECTRA, ALBERT)."""

    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        E = cfg.embedding_width
        self.cfg = cfg
        self.word = nn.Embedding(cfg.vocab_size, E)
        if cfg.positions != "none":
            self.position = nn.Embedding(cfg.max_position_embeddings, E)
        if cfg.type_vocab_size:
            self.token_type = nn.Embedding(cfg.type_vocab_size, E)
        self.norm = layer_norm(cfg, E) if cfg.embed_norm else nn.Identity()
        if E != cfg.hidden_size:
            self.project = nn.Linear(E, cfg.hidden_size)

    def position_ids(self, input_ids):
        """(B, T) or (T,): 0..T-1; RoBERTa: pad + 1, pad + 2, ... over real tokens, pad at pads."""
        if self.cfg.positions == "offset":
            real = input_ids.ne(self.cfg.pad_token_id).long()  # (B, T)
            return real.cumsum(dim=1) * real + self.cfg.pad_token_id  # (B, T)
        return torch.arange(input_ids.size(1), device=input_ids.device)  # (T,)

    def forward(self, input_ids, token_type_ids, attention_mask=None):
        x = self.word(input_ids)  # (B, T, E)
        if self.cfg.positions != "none":
            x = x + self.position(self.position_ids(input_ids))  # (B, T, E)
        if self.cfg.type_vocab_size:
            x = x + self.token_type(token_type_ids)  # (B, T, E)
        x = self.norm(x)
        if self.cfg.attention == "disentangled" and attention_mask is not None:
            x = x * attention_mask[..., None].to(x.dtype)  # DeBERTa zeroes padded rows here
        return self.project(x) if hasattr(self, "project") else x  # (B, T, D)


# config.attention -> the module that scores (its own projections, score rule and mask)
ATTENTIONS = {"standard": MultiHeadSelfAttention, "disentangled": DisentangledAttention,
              "rotary": RotaryAttention, "grouped": GroupedAttention}


def make_attention(cfg: EncoderConfig, i: int):
    """The attention module of weight layer i (every head reads the whole input: "wide")."""
    if cfg.attention == "standard":
        return MultiHeadSelfAttention(cfg.hidden_size, cfg.num_attention_heads,
                                      causal=cfg.causal)
    return ATTENTIONS[cfg.attention](cfg, i)


class EncoderLayer(nn.Module):
    """Post-LN (BERT): x = LN(x + attn(x)); x = LN(x + FFN(x)).
    Pre-LN (ModernBERT, the decoders): x = x + attn(LN(x)); x = x + FFN(LN(x)).
    FFN: act(x W_in) W_out, or gated (act(a) * g) W_out: GeGLU with a, g = the halves of
    x W_in (ModernBERT's fused Wi), SwiGLU with a = x W_gate and g = x W_in (Llama's gate_proj
    and up_proj, kept apart: two matmuls of F outputs run faster here than one of 2F)."""

    def __init__(self, cfg: EncoderConfig, i: int = 0):
        super().__init__()
        D, Fw = cfg.hidden_size, cfg.intermediate_size
        self.pre_norm, self.glu = cfg.pre_norm, cfg.feed_forward == "geglu"
        self.attn = make_attention(cfg, i)
        # ModernBERT's first layer reads the embeddings' norm directly: no attn_norm of its own
        self.attn_norm = nn.Identity() if not cfg.first_attn_norm and i == 0 else layer_norm(cfg)
        fb = cfg.bias if cfg.ffn_bias is None else cfg.ffn_bias
        self.ffn_in = nn.Linear(D, 2 * Fw if self.glu else Fw, bias=fb)
        if cfg.feed_forward == "swiglu":
            self.ffn_gate = nn.Linear(D, Fw, bias=fb)
        self.ffn_out = nn.Linear(Fw, D, bias=fb)
        self.ffn_norm = layer_norm(cfg)
        self.act = ACT_FNS[cfg.hidden_act]

    def feed_forward(self, x, tap=None):
        h = self.ffn_in(x)  # (B, T, F) or (B, T, 2F)
        if self.glu:
            a, g = h.chunk(2, dim=-1)  # (B, T, F) each
            h = self.act(a) * g  # (B, T, F)
        elif hasattr(self, "ffn_gate"):
            h = self.act(self.ffn_gate(x)) * h  # (B, T, F)
        else:
            h = self.act(h)  # (B, T, F)
        if tap is not None:
            h = tap("ffn_act", h)
        return self.ffn_out(h)  # (B, T, D)

    def forward(self, x, mask=None, head_mask=None, attention_only=False, tap=None):
        """attention_only: stop after the attention block (its maps are all the caller wants
        from this layer) and return its output without the feed-forward block. tap: the run's
        hook points (mha_core.hooks), or None."""
        a_in = self.attn_norm(x) if self.pre_norm else x  # (B, T, D)
        if tap is not None:
            a_in = tap("attn_in", a_in)
        a, probs = self.attn(a_in, mask, head_mask, tap=tap)  # (B, T, D), (B, H, T, T)
        x = x + a if self.pre_norm else self.attn_norm(x + a)  # (B, T, D)
        if tap is not None:
            x = tap("resid_mid", x)
        if attention_only:
            return x, probs
        f = self.feed_forward(self.ffn_norm(x) if self.pre_norm else x, tap)  # (B, T, D)
        if tap is not None:
            f = tap("ffn_out", f)
        x = x + f if self.pre_norm else self.ffn_norm(x + f)  # (B, T, D)
        if tap is not None:
            x = tap("resid_post", x)
        return x, probs


@dataclass(frozen=True)
class EncoderOutput:
    last_hidden_state: torch.Tensor  # (B, T, D)
    hidden_states: tuple  # L+1 tensors (B, T, D): the embeddings, then each layer's output
    attentions: tuple  # L tensors (B, H, T, T)


class Encoder(nn.Module):
    """The model of any supported family; with mlm_head=True also the masked-LM head
    (mlm_logits), with replaced_head=True ELECTRA's replaced-token head (replaced_logits); a
    decoder (config.lm_head "tied" or "separate") has its next-word head (lm_logits).

    Per-layer API: model.layer(i) is the module run as layer i (ALBERT: shared weights); what
    its .attn read and wrote in a run is the forward cache's "attn_in" and "attn_out"
    (run_with_cache, mha_core.hooks).
    """

    def __init__(self, cfg: EncoderConfig, mlm_head=False, replaced_head=False):
        super().__init__()
        self.config = cfg
        self.embeddings = Embeddings(cfg)
        self.layers = nn.ModuleList(EncoderLayer(cfg, i) for i in range(cfg.n_weight_layers))
        if cfg.attention == "disentangled":  # one table of relative positions for every layer
            self.relative = RelativePositions(cfg)
            for layer in self.layers:
                layer.attn.use_positions(self.relative)
        if cfg.final_norm:
            self.final_norm = layer_norm(cfg)
        self.mlm = MaskedLMHead(cfg) if mlm_head else None
        self.replaced = ReplacedTokenHead(cfg) if replaced_head else None
        if cfg.lm_head == "separate":
            self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)

    def unembedding(self) -> torch.Tensor:
        """The next-word head's matrix W_U (V, D): its own, or the word embeddings (tied)."""
        if self.config.lm_head == "none":
            raise ValueError("this model has no next-word head: it is an encoder, not a "
                             "decoder (a causal language model)")
        return self.lm_head.weight if self.config.lm_head == "separate" \
            else self.embeddings.word.weight

    def lm_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """A decoder's next-word logits from final (normed) hidden states: (..., D) -> (..., V)."""
        return nn.functional.linear(hidden, self.unembedding())  # (..., V)

    def layer(self, i: int) -> EncoderLayer:
        """The module run as layer i (0-based); ALBERT runs the same weights several times."""
        w = self.config.layer_weights
        return self.layers[w[i] if w else i]

    def mlm_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """The masked-LM head on last-layer hidden states: (..., D) -> (..., V). The decoder is
        tied to the word embeddings."""
        if self.mlm is None:
            raise ValueError("this checkpoint has no masked-LM head, so it cannot predict "
                             "masked words")
        return self.mlm(hidden, self.embeddings.word.weight)

    def replaced_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """ELECTRA's discriminator: (..., D) -> (...,) logit that the token was replaced."""
        if self.replaced is None:
            raise ValueError("this checkpoint has no replaced-token head")
        return self.replaced(hidden)

    def mask(self, attention_mask, dtype=torch.float32):
        """The additive mask every layer gets: (B, 1, 1, T) on keys, or DeBERTa's (B, 1, T, T)
        on query and key; None without an attention mask."""
        if attention_mask is None:
            return None
        return ATTENTIONS[self.config.attention].padding_mask(attention_mask, dtype)

    def forward(self, input_ids, attention_mask=None, head_mask=None, *, token_type_ids=None,
                output_attentions=True, n_layers=None, maps_only=False, hooks=None, tap=None):
        """input_ids (B, T); attention_mask (B, T) of 1/0; head_mask (L, H) or (B, L, H) of 0/1,
        applied to this call only; token_type_ids (B, T), 0 for segment A and 1 for B. Every
        tensor given must be on the model's device (Model.attend moves them).
        output_attentions=False keeps no layer's maps (attentions is then ()): a batch of many
        ablations at T tokens would otherwise hold B * L * H * T * T floats at once.
        n_layers: run only the first n_layers layers (hidden_states then has n_layers + 1
        entries): what a lower layer computes does not depend on the layers above it.
        maps_only=True skips the last layer's feed-forward block, which no map depends on (the
        last hidden state is then that layer's attention-block output): ~1/9 less work on a
        6-layer model, for callers that want the maps alone (mha_core.syntax).
        hooks: {name or (name, layer): fn(value, layer)} replacing named values during this run
        (mha_core.hooks); tap: a Tap that also records (run_with_cache makes one).
        hidden_states are each layer's input and the model's output (after ModernBERT's final
        norm, as transformers gives it)."""
        cfg = self.config
        if hooks and tap is not None:
            raise HookError("give hooks or a tap, not both (run_with_cache takes hooks too)")
        if hooks:
            tap = Tap(hooks=hooks)
        if tap is not None:
            tap.check_layers(cfg.num_hidden_layers)
        limit = cfg.max_position_embeddings - (cfg.pad_token_id + 1) * (cfg.positions == "offset")
        if cfg.positions != "none" and input_ids.size(1) > limit:
            usable = f", {limit} usable from pad + 1" if limit < cfg.max_position_embeddings else ""
            raise ValueError(f"{input_ids.size(1)} tokens is more than this model's "
                             f"max_position_embeddings ({cfg.max_position_embeddings}{usable})")
        if token_type_ids is None or not cfg.type_vocab_size:
            token_type_ids = torch.zeros_like(input_ids)
        elif token_type_ids.numel() and int(token_type_ids.max()) >= cfg.type_vocab_size:
            raise ValueError(f"token type {int(token_type_ids.max())} is out of range: this "
                             f"model's type_vocab_size is {cfg.type_vocab_size}")
        x = self.embeddings(input_ids, token_type_ids, attention_mask)  # (B, T, D)
        if tap is not None:
            x = tap("embed", x)
        mask = self.mask(attention_mask, x.dtype)
        hidden, attns = [x], []
        run = range(cfg.num_hidden_layers)[:n_layers]
        last = len(run) - 1
        for i in run:
            hm = None if head_mask is None else head_mask[..., i, :]  # (H,) or (B, H)
            if tap is not None:
                tap.layer = i
            x, probs = self.layer(i)(x, mask, hm, maps_only and i == last, tap)  # (B, T, D)
            hidden.append(x)
            if output_attentions:
                attns.append(probs)
        if tap is not None:
            tap.layer = None
        if cfg.final_norm and not maps_only and n_layers in (None, cfg.num_hidden_layers):
            x = hidden[-1] = self.final_norm(x)  # (B, T, D)
        return EncoderOutput(x, tuple(hidden), tuple(attns))

    def run_with_cache(self, input_ids, attention_mask=None, head_mask=None, *, names=None,
                       layers=None, hooks=None, everywhere=(), **kw):
        """The forward with the named values recorded (mha_core.hooks.NAMES; None: all but the
        costly "head_out"), in the run layers asked for (None: all): (EncoderOutput,
        ForwardCache). Values stay on the model's device; hooks replace values as in forward."""
        names = [n for n in NAMES if n != "head_out"] if names is None else list(names)
        tap = Tap(names, hooks, layers, everywhere)
        out = self(input_ids, attention_mask, head_mask, tap=tap, **kw)
        return out, ForwardCache(tap.cache)


BertModel = Encoder  # BERT's name for it, kept for code written against it
