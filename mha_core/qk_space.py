"""One head's query/key space, as AttentionViz (Yeh et al. 2023) draws it: every token's query
and key vector of that head over many sentences, in one joint 2-D projection.

    space = qk_vectors(bert, texts, layer=2, head=8)     # queries (N, K), keys (N, K), tokens
    q, k = normalise(space.queries, space.keys)          # AttentionViz's translation and scale
    xy = project(q, k, "t-SNE")                          # (2N, 2): queries first, then keys

Normalisation: the keys are translated so that their centroid is the queries' centroid (each
query's logits all shift by one constant, so the softmax is unchanged), then queries are scaled
by c and keys by 1/c so that both have the same mean norm (every dot product is unchanged).
Distance in the plot then tracks the dot product that decides the attention.

Shape letters: N tokens, K = D / H the head's size, L layers, H heads, T tokens of a sentence.
"""

from dataclasses import dataclass

import numpy as np
import torch

METHODS = ("PCA", "t-SNE")
MAX_TOKENS = 2000  # queries + keys = 4000 points at most


@dataclass(frozen=True)
class QKSpace:
    queries: np.ndarray  # (N, K)
    keys: np.ndarray  # (N, K)
    tokens: list  # N token strings
    sentence: np.ndarray  # (N,) which text each token comes from
    position: np.ndarray  # (N,) the token's position in its text
    texts: list  # the texts used, in order
    attention: list  # per text: (T, T) this head's attention map (row = query)
    truncated: bool  # True when MAX_TOKENS was reached before the last text


@torch.no_grad()
def qk_vectors(bert, texts, layer: int, head: int, max_tokens: int = MAX_TOKENS,
               progress=None) -> QKSpace:
    """Queries and keys (with their biases) of head `head` in run layer `layer` (both from 0)
    for every token of the texts, in order, until max_tokens tokens, read from the encoder's
    forward cache as the scores read them (ModernBERT: rotated). Texts the tokenizer reduces to
    [CLS] and [SEP] are skipped. progress(done, total) after each text."""
    qs, ks, tokens, sent, pos, used, maps = [], [], [], [], [], [], []
    n, truncated = 0, False
    for i, text in enumerate(texts):
        if n >= max_tokens:
            truncated = True
            break
        res, cache = bert.run_with_cache(text, names=("q", "k"), layers=[layer])
        if all(res.special):
            continue
        q, k = (cache[n, layer].to("cpu") for n in ("q", "k"))  # (1, H, T, K) each
        T = min(len(res.labels), max_tokens - n)
        qs.append(q[0, head, :T].numpy())
        ks.append(k[0, head, :T].numpy())
        tokens += res.labels[:T]
        sent += [len(used)] * T
        pos += list(range(T))
        used.append(text)
        maps.append(res.attentions[layer, head].numpy())  # (T, T)
        n += T
        truncated = truncated or T < len(res.labels)
        if progress:
            progress(i + 1, len(texts))
    if not used:
        raise ValueError("none of these texts has a token besides [CLS] and [SEP]")
    return QKSpace(np.concatenate(qs), np.concatenate(ks), tokens, np.array(sent),
                   np.array(pos), used, maps, truncated)


def normalise(queries: np.ndarray, keys: np.ndarray):
    """AttentionViz's normalisation: keys translated onto the queries' centroid, then queries
    times c and keys divided by c with c chosen so that their mean norms are equal. Returns
    (queries, keys) as new arrays; q . k' differs from q . k by a constant per query."""
    q = np.asarray(queries, dtype=np.float64)
    k = np.asarray(keys, dtype=np.float64)
    k = k - k.mean(axis=0) + q.mean(axis=0)
    mq, mk = np.linalg.norm(q, axis=1).mean(), np.linalg.norm(k, axis=1).mean()
    c = np.sqrt(mk / mq) if mq > 0 and mk > 0 else 1.0
    return q * c, k / c


def project(queries: np.ndarray, keys: np.ndarray, method: str = "PCA", seed: int = 0):
    """Queries and keys projected jointly to 2-D with scikit-learn: (2N, 2), queries first."""
    points = np.concatenate([queries, keys]).astype(np.float64)  # (2N, K)
    if method == "PCA":
        from sklearn.decomposition import PCA

        return PCA(n_components=2, random_state=seed).fit_transform(points)
    if method == "t-SNE":
        from sklearn.manifold import TSNE

        perplexity = float(min(30, max(2, (len(points) - 1) // 3)))
        return TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed,
                    max_iter=500).fit_transform(points)
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")
