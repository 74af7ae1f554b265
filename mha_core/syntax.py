"""Which heads track which dependency relations: Clark et al. 2019's experiment, batched.

    scores = score_treebank(bert, read_treebank("en_ewt-ud-dev.conllu"))
    scores.rows()        # per relation and "all": the best head, its accuracy, the baseline
    scores.accuracy()    # (R, L, H, 2) every head, both directions

The protocol (Clark et al. 2019, "What Does BERT Look At?", Sec. 4.2 and their code):
- the treebank's own words are tokenised with the checkpoint's fast tokenizer
  (is_split_into_words); sentences over MAX_PIECES pieces ([CLS] and [SEP] included) are skipped;
- word-level attention: attention TO a word is the sum over its pieces, attention FROM a word the
  mean over its pieces; the [CLS]/[SEP] rows and columns are dropped; the diagonal is zeroed;
- each head predicts every word's head in two directions: the word it attends to most
  ("dependent->head", the argmax of its row) and the word that attends to it most
  ("head<-dependent", the argmax of its column);
- `punct` and `root` arcs are not scored; relations are universal (nmod:poss -> nmod);
  relations with fewer than MIN_ARCS scored arcs are not reported;
- the baseline is the best fixed offset in -3..+3 per relation (an offset that points outside the
  sentence is wrong).

Shape letters: B sentences in a batch, L layers, H heads, T pieces, W words, R relations.
Command line: python -m mha_core.syntax TREEBANK.conllu [--model DIR] [--json OUT]
"""

from dataclasses import dataclass

import numpy as np
import torch

from .text import encode_words

DIRECTIONS = ("dependent->head", "head<-dependent")
SKIPPED = frozenset({"punct", "root"})
OFFSETS = (-3, -2, -1, 1, 2, 3)
MAX_PIECES = 128
MIN_ARCS = 100
ALL = "all"
# A batch holds at most this many pieces (B * T): small batches keep the activations in the CPU's
# cache, which runs the encoder several times faster than batches of thousands of pieces
BATCH_PIECES = 512


@dataclass(frozen=True)
class SyntaxScores:
    relations: tuple  # R names: "all" first, then by number of scored arcs
    counts: np.ndarray  # (R,) scored arcs
    correct: np.ndarray  # (R, L, H, 2) arcs each head predicted right, per direction
    offset_correct: np.ndarray  # (R, len(OFFSETS)) arcs each fixed offset predicted right
    used: int  # sentences scored
    skipped_long: int  # sentences over the piece limit
    skipped_empty: int  # sentences with a word the tokenizer turns into no piece at all

    def accuracy(self) -> np.ndarray:
        """(R, L, H, 2): the share of each relation's arcs each head predicts, per direction."""
        return self.correct / np.maximum(self.counts, 1)[:, None, None, None]

    def reported(self, min_arcs: int = MIN_ARCS) -> list:
        """Indices of the relations with at least min_arcs scored arcs."""
        return [r for r, n in enumerate(self.counts) if n >= min_arcs]

    def best(self, r: int):
        """(layer, head, direction) from 0 of relation r's best head; ties go to the first in
        (layer, head, direction) order."""
        acc = self.accuracy()[r]  # (L, H, 2)
        return tuple(int(i) for i in np.unravel_index(int(np.argmax(acc)), acc.shape))

    def rows(self, min_arcs: int = MIN_ARCS) -> list:
        """One dict per reported relation: rel, n, layer and head (from 1), direction, acc,
        baseline, offset (accuracies as fractions)."""
        acc, base = self.accuracy(), self.offset_correct / np.maximum(self.counts, 1)[:, None]
        out = []
        for r in self.reported(min_arcs):
            layer, head, d = self.best(r)
            o = int(np.argmax(base[r]))
            out.append(dict(rel=self.relations[r], n=int(self.counts[r]), layer=layer + 1,
                            head=head + 1, direction=DIRECTIONS[d],
                            acc=float(acc[r, layer, head, d]), baseline=float(base[r, o]),
                            offset=OFFSETS[o]))
        return out


def _gold(sentence, relations: dict):
    """(W,) gold head index from 0 (-1: the root) and (W,) relation index (-1: not scored)."""
    heads = np.array(sentence.heads, dtype=np.int64) - 1
    rel = np.array([relations.get(r, -1) for r in sentence.relations], dtype=np.int64)
    return heads, rel


def word_maps(att: torch.Tensor, piece_word: torch.Tensor, n_words: int) -> torch.Tensor:
    """att (B, ..., T, T) (e.g. (B, H, T, T) of one layer, or (B, L*H, T, T)) -> (B, ..., W, W)
    word-level maps (Clark et al.: summed over the pieces a word receives, averaged over the
    pieces it sends); [CLS]/[SEP]/padding pieces (piece_word -1, (B, T)) belong to no word, so
    their rows and columns are dropped."""
    words = torch.arange(n_words)
    P = (piece_word[:, None, :] == words[None, :, None]).to(att.dtype)  # (B, W, T)
    B, W, T = P.shape
    lead = (B,) + (1,) * (att.dim() - 3)  # broadcast over the map dims between B and (T, T)
    to_words = att @ P.transpose(1, 2).reshape(*lead, T, W)  # (B, ..., T, W)
    mean_from = P / P.sum(-1, keepdim=True).clamp_min(1)  # (B, W, T)
    return mean_from.reshape(*lead, *mean_from.shape[1:]) @ to_words  # (B, ..., W, W)


def predict(maps: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each word's predicted head from word-level maps (B, ..., W, W) as Clark et al.: the
    diagonal zeroed, then the argmax of the word's row (direction 0) and of its column
    (direction 1). lengths (B,) words per sentence; padded words are never predicted.
    Returns (B, ..., 2, W) word indices from 0."""
    W = maps.size(-1)
    m = maps.clone()
    m.diagonal(dim1=-2, dim2=-1).zero_()
    pad = torch.arange(W)[None, :] >= lengths[:, None]  # (B, W)
    lead = (maps.size(0),) + (1,) * (maps.dim() - 3)
    m = m.masked_fill(pad.reshape(*lead, 1, W), -1.0)  # padded keys: below any weight
    m = m.masked_fill(pad.reshape(*lead, W, 1), -1.0)  # padded queries
    return torch.stack([m.argmax(-1), m.argmax(-2)], dim=-2)  # (B, ..., 2, W)


def prepare(tokenizer, sentences, max_pieces: int):
    """Tokenise every sentence's words at once: ([(index, ids, piece_word)], long, empty) with
    the sentences that fit, and how many were too long or had a word with no piece."""
    kept, long, empty = [], 0, 0
    for i, (ids, piece_word) in enumerate(encode_words(tokenizer, [s.words for s in sentences])):
        if len(ids) > max_pieces:
            long += 1
        elif len(set(w for w in piece_word if w >= 0)) < len(sentences[i].words):
            empty += 1
        else:
            kept.append((i, ids, piece_word))
    return kept, long, empty


def batches(kept, pieces: int = BATCH_PIECES):
    """Sentences grouped by length (little padding), at most `pieces` pieces (B * T) a batch."""
    order = sorted(kept, key=lambda k: len(k[1]))
    batch = []
    for item in order:
        T = len(item[1])
        if batch and (len(batch) + 1) * T > pieces:
            yield batch
            batch = []
        batch.append(item)
    if batch:
        yield batch


def _tensors(batch, pad_id: int):
    """Padded (B, T) input ids, attention mask (1 = piece, 0 = padding) and piece -> word."""
    T = max(len(ids) for _, ids, _ in batch)
    ids = torch.full((len(batch), T), pad_id, dtype=torch.long)  # (B, T)
    mask = torch.zeros((len(batch), T), dtype=torch.long)  # (B, T)
    piece_word = torch.full((len(batch), T), -1, dtype=torch.long)  # (B, T)
    for b, (_, seq, pw) in enumerate(batch):
        ids[b, :len(seq)] = torch.tensor(seq)
        mask[b, :len(seq)] = 1
        piece_word[b, :len(pw)] = torch.tensor(pw)
    return ids, mask, piece_word


@torch.inference_mode()
def batch_predictions(bert, batch):
    """The predicted heads of a batch of prepared sentences: (L, B, H, 2, W) and lengths (B,)."""
    ids, mask, piece_word = _tensors(batch, bert.tokenizer.pad_token_id or 0)
    lengths = piece_word.max(dim=1).values + 1  # (B,) words per sentence
    out = bert.model(ids.to(bert.device), attention_mask=mask.to(bert.device), maps_only=True)
    att = torch.stack(out.attentions, dim=1).cpu()  # (B, L, H, T, T): every layer in one go
    pred = predict(word_maps(att, piece_word, int(lengths.max())), lengths)  # (B, L, H, 2, W)
    return pred.transpose(0, 1), lengths  # (L, B, H, 2, W)


def sentence_predictions(bert, words, max_pieces: int = MAX_PIECES):
    """One sentence's words -> (L, H, 2, W) predicted head of each word (from 0), or None when
    the sentence has more than max_pieces pieces or a word the tokenizer drops."""
    from .treebank import Sentence

    s = Sentence("", " ".join(words), tuple(words), (0,) * len(words), ("dep",) * len(words), 0)
    kept, _, _ = prepare(bert.tokenizer, [s], min(max_pieces, bert.max_length))
    if not kept:
        return None
    pred, _ = batch_predictions(bert, kept)
    return pred[:, 0].numpy()  # (L, H, 2, W)


def score_treebank(bert, sentences, max_pieces: int = MAX_PIECES, progress=None) -> SyntaxScores:
    """Clark et al.'s scores of every head of `bert` on the sentences (mha_core.treebank).
    progress(done, total) is called after each batch."""
    cfg = bert.config
    L, H = cfg.num_hidden_layers, cfg.num_attention_heads
    kept, long, empty = prepare(bert.tokenizer, sentences, min(max_pieces, bert.max_length))
    used = [sentences[i] for i, _, _ in kept]
    counts = {}
    for s in used:
        for r in s.relations:
            if r not in SKIPPED:
                counts[r] = counts.get(r, 0) + 1
    names = [ALL] + sorted(counts, key=lambda r: (-counts[r], r))
    index = {r: i for i, r in enumerate(names)}
    R = len(names)
    n = np.array([sum(counts.values())] + [counts[r] for r in names[1:]], dtype=np.int64)
    correct = np.zeros((R, L, H, 2), dtype=np.int64)
    offset_correct = np.zeros((R, len(OFFSETS)), dtype=np.int64)
    done = 0
    for batch in batches(kept):
        pred, lengths = batch_predictions(bert, batch)  # (L, B, H, 2, W)
        W = pred.size(-1)
        gold = np.full((len(batch), W), -2, dtype=np.int64)  # (B, W): -2 never matches
        rel = np.full((len(batch), W), -1, dtype=np.int64)
        for b, (i, _, _) in enumerate(batch):
            g, r = _gold(sentences[i], index)
            gold[b, :len(g)], rel[b, :len(r)] = g, r
        onehot = np.zeros((len(batch), W, R))  # (B, W, R): each scored arc's relation and "all"
        scored = rel >= 0
        onehot[scored, rel[scored]] = 1
        onehot[scored, 0] = 1
        hit = (pred.numpy() == gold[None, :, None, None, :]).astype(np.float64)  # (L,B,H,2,W)
        correct += np.rint(np.einsum("lbhdw,bwr->rlhd", hit, onehot)).astype(np.int64)
        pos = np.arange(W)[None, :]  # (1, W)
        for k, o in enumerate(OFFSETS):
            offset_correct[:, k] += np.rint(((pos + o) == gold)[..., None] * onehot).sum(
                axis=(0, 1)).astype(np.int64)
        done += len(batch)
        if progress:
            progress(done, len(kept))
    return SyntaxScores(tuple(names), n, correct, offset_correct, len(used), long, empty)


def main(argv=None):
    import argparse
    import json

    from .api import add_device_argument, load_model
    from .loading import CheckpointError
    from .treebank import TreebankError, read_treebank

    ap = argparse.ArgumentParser(prog="python -m mha_core.syntax",
                                 description="Score every attention head against the dependency "
                                             "trees of a CoNLL-U treebank (Clark et al. 2019).")
    ap.add_argument("treebank", help="a .conllu file")
    ap.add_argument("--model", default=None,
                    help="a checkpoint directory, a .gguf file, or bundled-decoder (default: the "
                         "bundled all-MiniLM-L6-v2)")
    ap.add_argument("--json", default=None, help="write the result to this file")
    ap.add_argument("--min-arcs", type=int, default=MIN_ARCS,
                    help=f"report relations with at least this many arcs (default {MIN_ARCS})")
    add_device_argument(ap)
    args = ap.parse_args(argv)
    try:
        sentences = read_treebank(args.treebank, max_bytes=2**40)
        bert = load_model(args.model, device=args.device)
    except (ValueError, OSError, TreebankError, CheckpointError) as e:
        ap.error(str(e))
    scores = score_treebank(bert, sentences)
    rows = scores.rows(args.min_arcs)
    print(f"{bert}: {scores.used} of {len(sentences)} sentences scored ({scores.skipped_long} "
          f"over {MAX_PIECES} pieces, {scores.skipped_empty} with a word of no piece)")
    print(f"{'relation':<10}{'arcs':>7}  {'best head':<10}{'direction':<17}{'acc':>6}  "
          f"{'baseline':>8} {'offset':>6}")
    for row in rows:
        print(f"{row['rel']:<10}{row['n']:>7}  L{row['layer']} H{row['head']:<6}"
              f"{row['direction']:<17}{100 * row['acc']:>6.1f}  {100 * row['baseline']:>8.1f} "
              f"{row['offset']:>+6d}")
    if args.json:
        acc = scores.accuracy()
        out = dict(model=str(args.model or "bundled"), treebank=str(args.treebank),
                   used=scores.used, sentences=len(sentences),
                   skipped_long=scores.skipped_long, skipped_empty=scores.skipped_empty,
                   rows=rows,
                   heads={scores.relations[r]: np.round(acc[r], 4).tolist()
                          for r in scores.reported(args.min_arcs)})
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
