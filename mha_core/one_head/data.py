"""The data a layer is fitted on: a corpus of sentences, split by sentence into a fit part and
a held-out part, and each layer's real input X and attention output Y = MHA_l(X) (after the
output projection, before the residual and LayerNorm).

Shape letters: B sentences, T tokens (padded), D hidden size, L layers.
"""

from dataclasses import dataclass
from pathlib import Path

import torch

from ..attention import additive_mask
from ..treebank import read_treebank


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
    """Padded sentences: input_ids, token_type_ids and keep (1 token / 0 padding), all (B, T)."""
    input_ids: torch.Tensor
    token_type_ids: torch.Tensor
    keep: torch.Tensor

    @property
    def mask(self):
        return additive_mask(self.keep)  # (B, 1, 1, T)

    @property
    def n_tokens(self) -> int:
        return int(self.keep.sum())


def batch(bert, texts, max_tokens: int = 128) -> Batch:
    """Tokenise texts as the model reads them, each cut to max_tokens, padded to one length."""
    encs = [bert.encode(t, max_length=max_tokens) for t in texts]
    T = max(e.input_ids.numel() for e in encs)
    ids = torch.zeros(len(encs), T, dtype=torch.long)  # (B, T)
    types = torch.zeros_like(ids)  # (B, T)
    keep = torch.zeros_like(ids)  # (B, T)
    for i, e in enumerate(encs):
        n = e.input_ids.numel()
        ids[i, :n], types[i, :n], keep[i, :n] = e.input_ids, e.token_type_ids, 1
    return Batch(ids, types, keep)


@torch.no_grad()
def layer_io(model, b: Batch) -> list:
    """For each layer l, (X_l, Y_l): its input and its attention block's output MHA_l(X_l),
    both (B, T, D), computed by the model's own layers."""
    x = model.embeddings(b.input_ids, b.token_type_ids)  # (B, T, D)
    mask = b.mask
    out = []
    for layer in model.layers:
        y, _ = layer.attn(x, mask)  # (B, T, D)
        out.append((x, y))
        x, _ = layer(x, mask)  # (B, T, D)
    return out
