"""The data a layer is fitted on: a corpus of sentences, split by sentence into a fit part and
a held-out part, and for each attention layer run what the encoder's own forward recorded
(mha_core.hooks): the attention block's input X (after a pre-norm), its output Y = MHA_l(X)
(after the output projection, before the residual and LayerNorm), its mask (padding, and
ModernBERT's band), each head's z and values, and its summed-head weights.

Shape letters: B sentences, T tokens (padded), D hidden size, H heads, K head size.
"""

from dataclasses import dataclass
from pathlib import Path

import torch

from ..treebank import read_treebank

RECORDED = ("attn_in", "attn_out", "mask", "z", "v", "single_head")


def read_corpus(path) -> list:
    """The sentences of a .conllu file (their text) or of a text file (one sentence a line,
    blank lines skipped)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file (give a .conllu treebank or a text file of one "
                         "sentence a line)")
    if path.suffix.lower() == ".conllu":
        return [s.text for s in read_treebank(path)]
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    return [line.strip() for line in lines if line.strip()]


def split_sentences(n: int, held_out: float, seed: int):
    """A random split of n sentence indices (fit, held_out), fixed by the seed; each part keeps
    at least one sentence."""
    if n < 2:
        raise ValueError(f"the corpus has {n} sentence(s); the fit needs at least 2 "
                         "(one to fit, one held out)")
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()
    k = min(n - 1, max(1, round(n * held_out)))
    return sorted(order[k:]), sorted(order[:k])


@dataclass(frozen=True)
class Batch:
    """Padded sentences on the model's device: input_ids, token_type_ids and keep (1 token /
    0 padding), all (B, T)."""
    input_ids: torch.Tensor
    token_type_ids: torch.Tensor
    keep: torch.Tensor

    @property
    def n_tokens(self) -> int:
        return int(self.keep.sum())

    def inputs(self, input_ids=None) -> dict:
        """The model's keyword arguments for this batch (other ids: a masked copy)."""
        return {"input_ids": self.input_ids if input_ids is None else input_ids,
                "token_type_ids": self.token_type_ids, "attention_mask": self.keep}


def batch(bert, texts, max_tokens: int = 128) -> Batch:
    """Tokenise texts as the model reads them, each cut to max_tokens, padded to one length, on
    the model's device."""
    x = bert.inputs([bert.encode(t, max_length=max_tokens) for t in texts])
    return Batch(x["input_ids"], x["token_type_ids"], x["attention_mask"])


@dataclass(frozen=True)
class LayerIO:
    """One run layer's attention block as the forward ran it on a batch."""
    x: torch.Tensor  # (B, T, D) what the attention read
    y: torch.Tensor  # (B, T, D) what it wrote (with b_O)
    mask: torch.Tensor | None  # additive, as the layer added it to its scores
    z: torch.Tensor  # (B, H, T, K) each head's weighted values
    v: torch.Tensor  # (B, H, T, K) the values
    single_head: torch.Tensor  # (B, T, T) the summed head's weights
    keep: torch.Tensor  # (B, T) 1 token / 0 padding

    def part(self):
        """(X, Y, keep, mask): what a fitted layer is trained or scored on."""
        return self.x, self.y, self.keep, self.mask


@torch.no_grad()
def layer_io(bert, b: Batch) -> list:
    """For each attention layer run, its LayerIO, read from one forward of the model with the
    cache on (ALBERT's shared layers: one entry per run)."""
    _, cache = bert.model.run_with_cache(**b.inputs(), names=RECORDED)
    return [LayerIO(*(cache[n, i] for n in RECORDED), keep=b.keep)
            for i in cache.layers("attn_out")]
