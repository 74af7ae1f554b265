"""The masked-language-model head, from scratch: what word belongs at a [MASK]?

    logits = LN(act(h W_t + b_t)) E^T + b     (transformers' BertLMPredictionHead)

h is the last layer's hidden state at a position, W_t/b_t the transform's dense layer (D -> W:
W = E for ELECTRA's generator and ALBERT, D elsewhere), act the family's activation, LN a
LayerNorm, E the word embeddings (the decoder is tied to them) and b one bias per vocabulary
entry. Also ELECTRA's discriminator head: per token, a logit that the token was replaced.

Shape letters: B batch, T tokens, D hidden size, W head width, V vocabulary.
"""

import torch
import torch.nn as nn

from .act import ACT_FNS
from .config import EncoderConfig


class MaskedLMHead(nn.Module):
    """The transform (dense, activation, LayerNorm) and the bias; the decoder's weight is the
    word-embedding matrix, passed in at call time, so nothing is copied or kept twice."""

    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        W = cfg.mlm_width or cfg.hidden_size
        self.dense = nn.Linear(cfg.hidden_size, W, bias=cfg.bias)
        self.act = ACT_FNS[cfg.mlm_act or cfg.hidden_act]
        self.norm = nn.LayerNorm(W, eps=cfg.mlm_norm_eps or cfg.layer_norm_eps, bias=cfg.bias)
        self.bias = nn.Parameter(torch.zeros(cfg.vocab_size))

    def forward(self, hidden: torch.Tensor, word_embeddings: torch.Tensor) -> torch.Tensor:
        """hidden (..., D), word_embeddings (V, W) -> logits (..., V)."""
        x = self.norm(self.act(self.dense(hidden)))  # (..., W)
        return x @ word_embeddings.T + self.bias  # (..., V)


class ReplacedTokenHead(nn.Module):
    """ELECTRA's discriminator: act(h W_1 + b_1) w_2 + b_2, one logit per token (sigmoid > 0.5:
    the model thinks the token was put there by the generator, not written by the author)."""

    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.dense = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.act = ACT_FNS[cfg.hidden_act]
        self.prediction = nn.Linear(cfg.hidden_size, 1)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.prediction(self.act(self.dense(hidden)))[..., 0]  # (...,)
