"""Corpus search (exBERT's): the tokens of a corpus whose hidden state at one layer is most like a
chosen token's (cosine similarity), with their sentences, and what each of them attends to in
that layer's heads.

The corpus is any list of sentences (the presets, pasted lines, a treebank's sentences); a line
with a typed [SEP] is a pair, read as everywhere else (Bert.encode). Indexing runs it through
the model in padded batches (attention_mask), sentences of similar length together; it keeps,
per token, the unit-length hidden state and its top attention targets in every head of the
layer. Searching is one matrix-vector product and numpy's argpartition.

Layers are 0-based indices of encoder layers here: layer l's hidden state is the output of
layer l (hidden_states[l + 1]) and its heads are the ones that produced it (attentions[l]).

Shape letters: N indexed tokens, B batch, T tokens, D hidden size, H heads, K top targets.
"""

from dataclasses import dataclass

import numpy as np
import torch

TOP_TARGETS = 3  # attention targets kept per token and head


@dataclass(frozen=True)
class CorpusIndex:
    layer: int  # 0-based encoder layer
    sentences: tuple  # the corpus lines, as given
    vectors: np.ndarray  # (N, D) float32, unit length (read-only)
    sentence: np.ndarray  # (N,) which line each vector comes from
    position: np.ndarray  # (N,) its token index in that line's encoding
    spans: np.ndarray  # (N, 2) its characters in the line (start, end)
    top_keys: np.ndarray  # (N, H, K) token indices of its top attention targets in each head
    top_weights: np.ndarray  # (N, H, K) their weights
    tokens: tuple  # per line, its tokens (to name the targets)
    skipped: int  # lines with no token to index (blank, or nothing the tokenizer reads)

    def __len__(self):
        return len(self.vectors)


def _line_spans(enc, line: str, sep: str) -> list:
    """Each token's (start, end) in the original line: B's offsets shifted past A and the
    [SEP] that split the line (split_pair cuts, never edits, so this is exact)."""
    src = enc.source
    shift = len(src.text) + len(sep) if src.sep_typed else 0
    return [(a + shift, b + shift) if seq == 1 else (a, b)
            for seq, (a, b) in zip(enc.sequence_ids, enc.offsets)]


def _batches(lengths, max_tokens: int):
    """Line indices grouped by similar length (sorted), each group at most max_tokens padded
    tokens (B * T_max), so one batch's maps stay small."""
    order = np.argsort(lengths, kind="stable")
    batch, longest = [], 0
    for i in order:
        n = int(lengths[i])
        if batch and max(longest, n) * (len(batch) + 1) > max_tokens:
            yield batch
            batch, longest = [], 0
        batch.append(int(i))
        longest = max(longest, n)
    if batch:
        yield batch


def build_index(bert, sentences, layer: int, max_length: int = 128,
                max_batch_tokens: int = 2048) -> CorpusIndex:
    """Index every non-special token of every sentence (each cut to max_length tokens) at
    `layer` (0-based). Padded batches with an attention mask; the model is not changed."""
    L = bert.config.num_hidden_layers
    if not 0 <= layer < L:
        raise ValueError(f"layer must be in 0..{L - 1} (0-based), got {layer}")
    sentences = tuple(sentences)
    sep = bert.tokenizer.sep_token or "[SEP]"
    encs = [bert.encode(s, max_length=max_length) for s in sentences]
    pad = bert.tokenizer.pad_token_id or 0
    rows = dict(vectors=[], sentence=[], position=[], spans=[], keys=[], weights=[])
    for batch in _batches([len(e.tokens) for e in encs], max_batch_tokens):
        T = max(len(encs[i].tokens) for i in batch)
        ids = torch.full((len(batch), T), pad, dtype=torch.long)  # (B, T)
        types = torch.zeros(len(batch), T, dtype=torch.long)  # (B, T)
        mask = torch.zeros(len(batch), T, dtype=torch.long)  # (B, T)
        keep = torch.zeros(len(batch), T, dtype=torch.bool)  # (B, T): tokens to index
        for b, i in enumerate(batch):
            e = encs[i]
            n = len(e.tokens)
            ids[b, :n], types[b, :n], mask[b, :n] = e.input_ids, e.token_type_ids, 1
            keep[b, :n] = ~torch.tensor(e.special)
        if not keep.any():  # only lines the tokenizer found nothing in ([CLS] [SEP])
            continue
        with torch.inference_mode():
            # the layers above `layer` do not change its hidden state: they are not run
            out = bert.model(ids, attention_mask=mask, token_type_ids=types, n_layers=layer + 1)
        hidden = out.hidden_states[layer + 1][keep]  # (n, D)
        att = out.attentions[layer].transpose(1, 2)[keep]  # (B, T, H, T) -> (n, H, T)
        top = att.topk(TOP_TARGETS, dim=-1)  # (n, H, K): T >= 3 here; padded keys weigh 0
        b_idx, t_idx = keep.nonzero(as_tuple=True)  # (n,) each
        line = torch.tensor(batch)[b_idx]  # (n,)
        rows["vectors"].append(torch.nn.functional.normalize(hidden, dim=-1).numpy())
        rows["sentence"].append(line.numpy())
        rows["position"].append(t_idx.numpy())
        rows["keys"].append(top.indices.numpy().astype(np.int16))
        rows["weights"].append(top.values.numpy().astype(np.float32))
        spans = {i: _line_spans(encs[i], sentences[i], sep) for i in batch}
        rows["spans"].append(np.array([spans[i][t] for i, t in zip(line.tolist(),
                                                                   t_idx.tolist())],
                                      dtype=np.int64).reshape(-1, 2))
    D, H = bert.config.hidden_size, bert.config.num_attention_heads
    empty = dict(vectors=np.zeros((0, D), np.float32), sentence=np.zeros(0, np.int64),
                 position=np.zeros(0, np.int64), spans=np.zeros((0, 2), np.int64),
                 keys=np.zeros((0, H, TOP_TARGETS), np.int16),
                 weights=np.zeros((0, H, TOP_TARGETS), np.float32))
    arrays = {k: np.concatenate(v) if v else empty[k] for k, v in rows.items()}
    # one order whatever the batching: by line, then position
    order = np.lexsort((arrays["position"], arrays["sentence"]))
    arrays = {k: v[order] for k, v in arrays.items()}
    for v in arrays.values():
        v.setflags(write=False)  # shared between sessions: nobody may change it
    indexed = set(arrays["sentence"].tolist())
    return CorpusIndex(layer, sentences, arrays["vectors"], arrays["sentence"],
                       arrays["position"], arrays["spans"], arrays["keys"], arrays["weights"],
                       tuple(tuple(e.tokens) for e in encs),
                       sum(1 for i in range(len(sentences)) if i not in indexed))


@dataclass(frozen=True)
class Match:
    score: float  # cosine similarity with the query
    line: int  # which corpus line
    position: int  # token index in that line's encoding
    before: str  # the line up to the token
    token: str  # the token's own characters in the line
    after: str  # the rest of the line
    targets: list  # [(token, weight)] its top attention targets in the chosen head


def search(index: CorpusIndex, query, k: int = 10) -> tuple:
    """The k indexed tokens most similar to query (D,) by cosine: (rows (k,), scores (k,)),
    most similar first."""
    q = np.asarray(query, dtype=np.float32)
    q = q / max(float(np.linalg.norm(q)), 1e-12)
    scores = index.vectors @ q  # (N,)
    k = min(k, len(scores))
    if k == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    rows = np.argpartition(-scores, k - 1)[:k]
    rows = rows[np.argsort(-scores[rows], kind="stable")]
    return rows, scores[rows]


def matches(index: CorpusIndex, rows, scores, head: int) -> list:
    """The search's rows as Matches, with each token's top targets in `head` of the layer."""
    out = []
    for row, score in zip(rows, scores):
        line, t = int(index.sentence[row]), int(index.position[row])
        text, (a, b) = index.sentences[line], index.spans[row]
        names = index.tokens[line]
        targets = [(names[int(key)], float(w))
                   for key, w in zip(index.top_keys[row, head], index.top_weights[row, head])]
        out.append(Match(float(score), line, t, text[:a], text[a:b], text[b:], targets))
    return out
