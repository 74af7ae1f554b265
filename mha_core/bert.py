"""BERT's encoder, from scratch: embeddings, encoder layers, and the model that returns every head.

Shape letters: B batch, T tokens, D hidden size, H heads, L layers, F feed-forward size.
"""

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .attention import MultiHeadSelfAttention, additive_mask
from .config import BertConfig
from .mlm import MaskedLMHead

ACT_FNS = {
    "gelu": F.gelu,  # exact erf GELU, as in the original BERT
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "relu": F.relu,
    "silu": F.silu,
    "swish": F.silu,
    "tanh": torch.tanh,
}


class Embeddings(nn.Module):
    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.word = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.position = nn.Embedding(cfg.max_position_embeddings, cfg.hidden_size)
        self.token_type = nn.Embedding(cfg.type_vocab_size, cfg.hidden_size)
        self.norm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)

    def forward(self, input_ids, token_type_ids):
        T = input_ids.size(1)
        pos = torch.arange(T, device=input_ids.device)  # (T,)
        x = self.word(input_ids) + self.position(pos) + self.token_type(token_type_ids)  # (B, T, D)
        return self.norm(x)


class EncoderLayer(nn.Module):
    """Post-LayerNorm BERT layer: x = LN(x + attn(x)); x = LN(x + FFN(x))."""

    def __init__(self, cfg: BertConfig, mode="wide"):
        super().__init__()
        self.attn = MultiHeadSelfAttention(cfg.hidden_size, cfg.num_attention_heads, mode=mode)
        self.attn_norm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.ffn_in = nn.Linear(cfg.hidden_size, cfg.intermediate_size)
        self.ffn_out = nn.Linear(cfg.intermediate_size, cfg.hidden_size)
        self.ffn_norm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.act = ACT_FNS[cfg.hidden_act]

    def forward(self, x, mask=None, head_mask=None, attention_only=False):
        """attention_only: stop after the attention block (its maps are all the caller wants
        from this layer) and return its normalised output without the feed-forward block."""
        a, probs = self.attn(x, mask, head_mask)  # (B, T, D), (B, H, T, T)
        x = self.attn_norm(x + a)  # (B, T, D)
        if attention_only:
            return x, probs
        h = self.ffn_out(self.act(self.ffn_in(x)))  # (B, T, F) -> (B, T, D)
        return self.ffn_norm(x + h), probs


@dataclass(frozen=True)
class EncoderOutput:
    last_hidden_state: torch.Tensor  # (B, T, D)
    hidden_states: tuple  # L+1 tensors (B, T, D): the embeddings, then each layer's output
    attentions: tuple  # L tensors (B, H, T, T)


class BertModel(nn.Module):
    """The encoder; with mlm_head=True also the masked-LM head (mlm_logits)."""

    def __init__(self, cfg: BertConfig, mode="wide", mlm_head=False):
        super().__init__()
        self.config = cfg
        self.embeddings = Embeddings(cfg)
        self.layers = nn.ModuleList(EncoderLayer(cfg, mode) for _ in range(cfg.num_hidden_layers))
        self.mlm = MaskedLMHead(cfg) if mlm_head else None

    def mlm_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """The masked-LM head on last-layer hidden states: (..., D) -> (..., V). The decoder is
        tied to the word embeddings."""
        if self.mlm is None:
            raise ValueError("this checkpoint has no masked-LM head (no cls.predictions.* "
                             "weights), so it cannot predict masked words")
        return self.mlm(hidden, self.embeddings.word.weight)

    def forward(self, input_ids, attention_mask=None, head_mask=None, *, token_type_ids=None,
                output_attentions=True, n_layers=None, maps_only=False):
        """input_ids (B, T); attention_mask (B, T) of 1/0; head_mask (L, H) or (B, L, H) of 0/1,
        applied to this call only; token_type_ids (B, T), 0 for segment A and 1 for B.
        output_attentions=False keeps no layer's maps (attentions is then ()): a batch of many
        ablations at T tokens would otherwise hold B * L * H * T * T floats at once.
        n_layers: run only the first n_layers layers (hidden_states then has n_layers + 1
        entries): what a lower layer computes does not depend on the layers above it.
        maps_only=True skips the last layer's feed-forward block, which no map depends on (the
        last hidden state is then that layer's attention-block output): ~1/9 less work on a
        6-layer model, for callers that want the maps alone (mha_core.syntax)."""
        cfg = self.config
        if input_ids.size(1) > cfg.max_position_embeddings:
            raise ValueError(f"{input_ids.size(1)} tokens is more than this model's "
                             f"max_position_embeddings ({cfg.max_position_embeddings})")
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        elif token_type_ids.numel() and int(token_type_ids.max()) >= cfg.type_vocab_size:
            raise ValueError(f"token type {int(token_type_ids.max())} is out of range: this "
                             f"model's type_vocab_size is {cfg.type_vocab_size}")
        x = self.embeddings(input_ids, token_type_ids)  # (B, T, D)
        mask = additive_mask(attention_mask, x.dtype)  # (B, 1, 1, T) or None
        hidden, attns = [x], []
        run = self.layers[:n_layers]
        last = len(run) - 1
        for i, layer in enumerate(run):
            hm = None if head_mask is None else head_mask[..., i, :]  # (H,) or (B, H)
            x, probs = layer(x, mask, hm, maps_only and i == last)  # (B, T, D), (B, H, T, T)
            hidden.append(x)
            if output_attentions:
                attns.append(probs)
        return EncoderOutput(x, tuple(hidden), tuple(attns))

    def single_heads(self, hidden_states, attention_mask=None):
        """Each layer's collapsed single head, from that layer's own input: (L, B, T, T)."""
        mask = additive_mask(attention_mask, hidden_states[0].dtype)
        return torch.stack([layer.attn.single_head(h, mask)
                            for layer, h in zip(self.layers, hidden_states)])  # (L, B, T, T)
