"""BERT's masked-language-model head, from scratch: what word belongs at a [MASK]?

    logits = LN(act(h W_t + b_t)) E^T + b     (transformers' BertLMPredictionHead)

h is the last layer's hidden state at a position, W_t/b_t the transform's dense layer, act the
config's hidden_act, LN a LayerNorm, E the word embeddings (the decoder is tied to them) and b
one bias per vocabulary entry.

Shape letters: B batch, T tokens, D hidden size, V vocabulary.
"""

import torch
import torch.nn as nn

from .config import BertConfig


class MaskedLMHead(nn.Module):
    """The transform (dense, activation, LayerNorm) and the bias; the decoder's weight is the
    word-embedding matrix, passed in at call time, so nothing is copied or kept twice."""

    def __init__(self, cfg: BertConfig):
        super().__init__()
        from .bert import ACT_FNS  # bert imports this module

        self.dense = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.act = ACT_FNS[cfg.hidden_act]
        self.norm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        self.bias = nn.Parameter(torch.zeros(cfg.vocab_size))

    def forward(self, hidden: torch.Tensor, word_embeddings: torch.Tensor) -> torch.Tensor:
        """hidden (..., D), word_embeddings (V, D) -> logits (..., V)."""
        x = self.norm(self.act(self.dense(hidden)))  # (..., D)
        return x @ word_embeddings.T + self.bias  # (..., V)
