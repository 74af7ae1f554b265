"""Corpus search (exBERT's): the tokens of a corpus whose hidden state at one layer is most like a
chosen token's (cosine similarity), with their sentences, and what each of them attends to in
that layer's heads.

The corpus is any list of sentences (the presets, pasted lines, a treebank's sentences); a line
with a typed [SEP] is a pair, read as everywhere else (Model.encode). Indexing runs it through
the model in padded batches (attention_mask), sentences of similar length together; it keeps,
per token, the unit-length hidden state and its top attention targets in every head of the
layer. Searching is a matrix-vector product (in chunks) and numpy's argpartition.

The index is stored compactly, since a worker holds several (headscope/ui/budget.py counts them):
each vector as int8 with one float32 scale per row (a quarter of float32: 252k tokens x 384 are
97 MB, not 387 MB), weights as float16, positions as int32. Nearest neighbours barely move:
`bench/bounds.py --only recall` measures the recall@10 kept against float32 (docs/limits.md).

Layers are 0-based indices of encoder layers here: layer l's hidden state is the output of
layer l (hidden_states[l + 1]) and its heads are the ones that produced it (attentions[l]).

Shape letters: N indexed tokens, B batch, T tokens, D hidden size, H heads, K top targets.
"""

from dataclasses import dataclass

import numpy as np
import torch

TOP_TARGETS = 3  # attention targets kept per token and head
CHUNK = 16_384  # rows scored at a time: the float32 copy of a chunk is 25 MB at D = 384
BYTES_PER_TOKEN_EXTRA = 4 + 4 + 4 + 8  # scale, sentence, position, spans (int32 x 2)


def quantise(v: np.ndarray, dtype=np.int8) -> tuple:
    """(stored, scales): rows of v (N, D) as `dtype`, with v[i] ~= stored[i] * scales[i]. int8
    scales each row by its largest |value| / 127; float16 and float32 keep scale 1."""
    if np.dtype(dtype) != np.int8:
        return v.astype(dtype), np.ones(len(v), np.float32)
    scales = np.abs(v).max(axis=1) / 127.0  # (N,)
    scales[scales == 0] = 1.0
    stored = np.rint(v / scales[:, None]).astype(np.int8)  # (N, D)
    return stored, scales.astype(np.float32)


def index_bytes(n_tokens: int, D: int, H: int, dtype=np.int8) -> int:
    """The bytes an index of n_tokens tokens holds (its arrays; the lines' text is extra)."""
    return n_tokens * (D * np.dtype(dtype).itemsize + H * TOP_TARGETS * (2 + 2)
                       + BYTES_PER_TOKEN_EXTRA)


@dataclass(frozen=True)
class CorpusIndex:
    layer: int  # 0-based encoder layer
    sentences: tuple  # the corpus lines, as given
    vectors: np.ndarray  # (N, D) int8 (or float16/float32), unit length once scaled
    scales: np.ndarray  # (N,) float32: row i is vectors[i] * scales[i]
    sentence: np.ndarray  # (N,) which line each vector comes from
    position: np.ndarray  # (N,) its token index in that line's encoding
    spans: np.ndarray  # (N, 2) its characters in the line (start, end)
    top_keys: np.ndarray  # (N, H, K) token indices of its top attention targets in each head
    top_weights: np.ndarray  # (N, H, K) float16: their weights
    tokens: tuple  # per line, its tokens (to name the targets)
    skipped: int  # lines with no token to index (blank, or nothing the tokenizer reads)

    def __len__(self):
        return len(self.vectors)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.vectors, self.scales, self.sentence, self.position,
                                      self.spans, self.top_keys, self.top_weights))


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


def encode_lines(bert, sentences, max_length: int = 128) -> list:
    """Each line's encoding as build_index reads it (before any forward pass: cheap)."""
    return [bert.encode(s, max_length=max_length) for s in sentences]


def indexed_tokens(encs) -> int:
    """How many tokens build_index keeps of these encodings (the non-special ones)."""
    return sum(len(e.special) - sum(e.special) for e in encs)


def build_index(bert, sentences, layer: int, max_length: int = 128,
                max_batch_tokens: int = 2048, dtype=np.int8, encs=None,
                progress=None) -> CorpusIndex:
    """Index every non-special token of every sentence (each cut to max_length tokens) at
    `layer` (0-based). Padded batches with an attention mask; the model is not changed.
    Vectors are stored as `dtype` (quantise); encs: encode_lines' result, if already made;
    progress(i, n) is called after each batch with the lines done."""
    L = bert.config.num_hidden_layers
    if not 0 <= layer < L:
        raise ValueError(f"layer must be in 0..{L - 1} (0-based), got {layer}")
    sentences = tuple(sentences)
    sep = bert.tokenizer.sep_token or "[SEP]"
    encs = encs if encs is not None else encode_lines(bert, sentences, max_length)
    pad = bert.tokenizer.pad_token_id or 0
    rows = dict(vectors=[], scales=[], sentence=[], position=[], spans=[], keys=[], weights=[])
    done = 0
    for batch in _batches([len(e.tokens) for e in encs], max_batch_tokens):
        done += len(batch)
        if progress is not None:
            progress(done, len(encs))
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
            out = bert.model(ids.to(bert.device), attention_mask=mask.to(bert.device),
                             token_type_ids=types.to(bert.device), n_layers=layer + 1)
        hidden = out.hidden_states[layer + 1].cpu()[keep]  # (n, D)
        att = out.attentions[layer].cpu().transpose(1, 2)[keep]  # (B, T, H, T) -> (n, H, T)
        # (n, H, K): padded keys weigh 0, and so do a decoder's later tokens; a batch of
        # lines shorter than K tokens (a decoder adds no [CLS]/[SEP]) pads with weight 0
        k = min(TOP_TARGETS, T)
        top = att.topk(k, dim=-1)
        top_keys = torch.nn.functional.pad(top.indices, (0, TOP_TARGETS - k))
        top_weights = torch.nn.functional.pad(top.values, (0, TOP_TARGETS - k))
        b_idx, t_idx = keep.nonzero(as_tuple=True)  # (n,) each
        line = torch.tensor(batch)[b_idx]  # (n,)
        stored, scales = quantise(torch.nn.functional.normalize(hidden, dim=-1).numpy(), dtype)
        rows["vectors"].append(stored)
        rows["scales"].append(scales)
        rows["sentence"].append(line.numpy().astype(np.int32))
        rows["position"].append(t_idx.numpy().astype(np.int32))
        rows["keys"].append(top_keys.numpy().astype(np.int16))
        rows["weights"].append(top_weights.numpy().astype(np.float16))
        spans = {i: _line_spans(encs[i], sentences[i], sep) for i in batch}
        rows["spans"].append(np.array([spans[i][t] for i, t in zip(line.tolist(),
                                                                   t_idx.tolist())],
                                      dtype=np.int32).reshape(-1, 2))
    D, H = bert.config.hidden_size, bert.config.num_attention_heads
    empty = dict(vectors=np.zeros((0, D), dtype), scales=np.zeros(0, np.float32),
                 sentence=np.zeros(0, np.int32), position=np.zeros(0, np.int32),
                 spans=np.zeros((0, 2), np.int32), keys=np.zeros((0, H, TOP_TARGETS), np.int16),
                 weights=np.zeros((0, H, TOP_TARGETS), np.float16))
    # one order whatever the batching: by line, then position. One array at a time, so that
    # the peak is the batches plus one array's copy, not two copies of everything
    def joined(k):
        parts = rows.pop(k)
        return np.concatenate(parts) if parts else empty[k]

    arrays = dict(position=joined("position"), sentence=joined("sentence"))
    order = np.lexsort((arrays["position"], arrays["sentence"]))
    for k in ("position", "sentence"):
        arrays[k] = arrays[k][order]
    for k in list(rows):
        arrays[k] = joined(k)[order]
    for v in arrays.values():
        v.setflags(write=False)  # shared between sessions: nobody may change it
    indexed = set(arrays["sentence"].tolist())
    return CorpusIndex(layer, sentences, arrays["vectors"], arrays["scales"], arrays["sentence"],
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
    scores = np.empty(len(index), np.float32)  # (N,)
    for a in range(0, len(index), CHUNK):  # a chunk's float32 copy at a time, not the whole
        b = min(a + CHUNK, len(index))
        scores[a:b] = (index.vectors[a:b].astype(np.float32) @ q) * index.scales[a:b]
    k = min(k, len(scores))
    if k == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    rows = np.argpartition(-scores, k - 1)[:k]
    rows = rows[np.argsort(-scores[rows], kind="stable")]
    return rows, np.clip(scores[rows], -1.0, 1.0)  # int8 rows can overshoot 1 by ~1e-3


def matches(index: CorpusIndex, rows, scores, head: int) -> list:
    """The search's rows as Matches, with each token's top targets in `head` of the layer."""
    out = []
    for row, score in zip(rows, scores):
        line, t = int(index.sentence[row]), int(index.position[row])
        text, (a, b) = index.sentences[line], index.spans[row]
        names = index.tokens[line]
        targets = [(names[int(key)], float(w))  # no target with weight 0 (padding, or a
                   for key, w in zip(index.top_keys[row, head], index.top_weights[row, head])
                   if w > 0 and int(key) < len(names)]  # decoder's token it cannot see)
        out.append(Match(float(score), line, t, text[:a], text[a:b], text[b:], targets))
    return out
