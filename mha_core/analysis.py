"""Numbers worth looking at, computed from attention maps. No Streamlit, no plotting.

Shape letters: L layers, H heads, T tokens. Maps are (..., T, T): row = query, column = key.
"""

import torch


def entropy(att: torch.Tensor) -> torch.Tensor:
    """Mean row entropy in nats: (..., T, T) -> (...). Uniform over T keys gives log T."""
    p = att.clamp_min(0)
    h = -(p * torch.log(p.clamp_min(1e-12))).sum(dim=-1)  # (..., T)
    return h.mean(dim=-1)


def keep_tokens(att: torch.Tensor, keep) -> torch.Tensor:
    """Drop the rows and columns not in `keep` (T bools) and renormalise each row to sum to 1.
    (..., T, T) -> (..., T', T'). A row whose kept weights are all 0 stays 0."""
    idx = torch.as_tensor([i for i, k in enumerate(keep) if k], dtype=torch.long)
    sub = att.index_select(-2, idx).index_select(-1, idx)  # (..., T', T')
    total = sub.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, sub / total.clamp_min(1e-12), sub)


# --- All heads, head lab, two readings
#
# Metrics are averaged over every query row of a map (special tokens included, as Clark et al.
# 2019 do). Inputs are (..., T, T) attention maps; outputs keep the leading dims, e.g. (L, H).

# (imported here so that this section stays self-contained)
import math  # noqa: E402
import unicodedata  # noqa: E402

import numpy as np  # noqa: E402

# Clark et al. 2019 measured 3.8 nats on 128-token segments. log(128) = 4.85 nats, so "broad"
# there means at least 3.8 / log(128) = 0.78 of the largest possible entropy. We compare the
# entropy as a fraction of log T with that ratio, so the rule means the same for 10 tokens.
BROAD_FRACTION = 3.8 / math.log(128)

# One table, checked top to bottom; the first rule a head passes gives its label.
# (label, metric, threshold, where the number comes from)
PATTERN_RULES = (
    ("[CLS]-sink", "cls", 0.6, "Clark et al. 2019: > 0.6 on [CLS] is a special-token head"),
    ("[SEP]-sink", "sep", 0.6, "Clark et al. 2019: > 0.6 on [SEP] is a special-token head"),
    ("punctuation", "punct", 0.6, "Clark et al. 2019 found deep heads on '.' and ','; "
                                  "we reuse their special-token threshold"),
    ("previous-token", "prev", 0.5, "Clark et al. 2019: > 0.5 on the previous token"),
    ("next-token", "next", 0.5, "Clark et al. 2019: > 0.5 on the next token"),
    ("self/diagonal", "self", 0.5, "Kovaleva et al. 2019 'diagonal'; we reuse Clark's 0.5"),
    ("broad", "entropy_frac", BROAD_FRACTION, "Clark et al. 2019: entropy > 3.8 nats on "
                                              "128 tokens, i.e. > 0.78 of log T"),
)
HETEROGENEOUS = "heterogeneous"
LABELS = tuple(r[0] for r in PATTERN_RULES) + (HETEROGENEOUS,)
# Each label's place among Kovaleva et al. 2019's five types (block needs a sentence pair).
KOVALEVA_TYPE = {"[CLS]-sink": "vertical", "[SEP]-sink": "vertical", "punctuation": "vertical",
                 "previous-token": "diagonal", "next-token": "diagonal",
                 "self/diagonal": "diagonal", "broad": "heterogeneous (broad)",
                 HETEROGENEOUS: "heterogeneous"}
# Our choice: a heterogeneous head with at least this much on [CLS]/[SEP]/punctuation AND on
# one diagonal (previous, next or itself) is Kovaleva's "vertical+diagonal".
MIXED_SHARE = 0.3
SHORT_LABEL = {"[CLS]-sink": "CLS", "[SEP]-sink": "SEP", "punctuation": "punct",
               "previous-token": "prev", "next-token": "next", "self/diagonal": "self",
               "broad": "broad", HETEROGENEOUS: "het"}

METRICS = {  # name: what it means, for tables and tooltips
    "entropy": "mean row entropy (nats)",
    "entropy_frac": "entropy / log T (1 = uniform)",
    "distance": "mean |query - key| distance in tokens",
    "cls": "share on [CLS]", "sep": "share on [SEP]", "punct": "share on punctuation",
    "prev": "share on the previous token", "next": "share on the next token",
    "self": "share on itself", "confidence": "mean of the row maximum (Voita et al. 2019)",
}


def is_punctuation(token: str) -> bool:
    """A token made only of punctuation characters (Unicode category P*), e.g. '.', ',', '?!'."""
    return bool(token) and all(unicodedata.category(c).startswith("P") for c in token)


def token_kinds(tokens, special) -> dict:
    """T bools each for [CLS], [SEP] and punctuation (non-special) tokens."""
    cls = np.array([s and t == "[CLS]" for t, s in zip(tokens, special)], dtype=bool)
    sep = np.array([s and t == "[SEP]" for t, s in zip(tokens, special)], dtype=bool)
    punct = np.array([not s and is_punctuation(t) for t, s in zip(tokens, special)], dtype=bool)
    return {"cls": cls, "sep": sep, "punct": punct}


def head_metrics(att, kinds: dict) -> dict:
    """Every metric of METRICS for each map: att (..., T, T) -> {name: (...) float array}.

    Needs T >= 2 (BERT always has [CLS] and [SEP]). prev/next are averaged over the rows that
    have a previous/next token (T-1 rows each)."""
    att = torch.as_tensor(att, dtype=torch.float32)
    T = att.size(-1)
    idx = torch.arange(T, dtype=torch.float32)
    dist = (idx[:, None] - idx[None, :]).abs()  # (T, T)
    diag = att.diagonal(dim1=-2, dim2=-1)  # (..., T)
    out = {
        "entropy": entropy(att),
        "entropy_frac": entropy(att) / math.log(T),
        "distance": (att * dist).sum(-1).mean(-1),
        "self": diag.mean(-1),
        "prev": att.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1),  # (..., T-1) -> (...)
        "next": att.diagonal(offset=1, dim1=-2, dim2=-1).mean(-1),
        "confidence": att.max(dim=-1).values.mean(-1),
    }
    for name in ("cls", "sep", "punct"):
        cols = torch.as_tensor(kinds[name], dtype=torch.float32)  # (T,)
        out[name] = (att @ cols).mean(-1)  # (..., T) -> (...)
    return {k: v.numpy().astype(np.float64) for k, v in out.items()}


def label_heads(metrics: dict) -> np.ndarray:
    """One label per head from PATTERN_RULES (first rule passed wins): (...) array of str."""
    shape = np.shape(metrics["entropy"])
    labels = np.full(shape, HETEROGENEOUS, dtype=object)
    done = np.zeros(shape, dtype=bool)
    for label, metric, threshold, _ in PATTERN_RULES:
        hit = ~done & (np.asarray(metrics[metric]) > threshold)
        labels[hit] = label
        done |= hit
    return labels


def kovaleva_types(metrics: dict, labels) -> np.ndarray:
    """Kovaleva et al. 2019's type for each head: KOVALEVA_TYPE, plus vertical+diagonal for
    heterogeneous heads that are both (MIXED_SHARE on each side). (...) array of str."""
    types = np.vectorize(KOVALEVA_TYPE.get, otypes=[object])(labels)
    vertical = metrics["cls"] + metrics["sep"] + metrics["punct"]
    diagonal = np.maximum(np.maximum(metrics["prev"], metrics["next"]), metrics["self"])
    mixed = (np.asarray(labels) == HETEROGENEOUS) & (vertical >= MIXED_SHARE) & (
        diagonal >= MIXED_SHARE)
    types[mixed] = "vertical+diagonal"
    return types


def result_metrics(res) -> dict:
    """head_metrics of an AttentionResult: {name: (L, H)}."""
    return head_metrics(res.attentions, token_kinds(res.tokens, res.special))


def mean_metrics(per_sentence: list) -> dict:
    """Average a list of {name: (L, H)} dicts: the corpus profile of every head."""
    return {k: np.mean([m[k] for m in per_sentence], axis=0) for k in per_sentence[0]}


def rollout(att) -> torch.Tensor:
    """Attention rollout (Abnar & Zuidema 2020): att (L, H, T, T) -> (L, T, T).

    A_l = 0.5 mean_h(W_l) + 0.5 I, rows renormalised; R_1 = A_1, R_l = A_l R_{l-1}.
    Row i of R_l: how much token i at layer l draws from each input token; rows sum to 1."""
    att = torch.as_tensor(att, dtype=torch.float64)
    T = att.size(-1)
    a = 0.5 * att.mean(dim=1) + 0.5 * torch.eye(T, dtype=att.dtype)  # (L, T, T)
    a = a / a.sum(dim=-1, keepdim=True)
    out, r = [], torch.eye(T, dtype=att.dtype)
    for layer in a:
        r = layer @ r  # (T, T)
        out.append(r)
    return torch.stack(out).float()  # (L, T, T)


def output_change(intact, changed) -> torch.Tensor:
    """1 - cosine between final hidden states, per token: (T, D), (..., T, D) -> (..., T).
    Clamped at 0: identical vectors can give -1e-7 in float32."""
    cos = torch.nn.functional.cosine_similarity(changed, intact.expand_as(changed), dim=-1)
    return (1 - cos).clamp_min(0)


def _batched_last_hidden(bert, enc, masks, max_tokens=8192, max_map_bytes=2**26):
    """The final hidden state for each head mask: masks (N, L, H) -> (N, T, D). One forward
    serves many masks, in chunks of at most max_tokens tokens and one layer's maps of at most
    max_map_bytes (no layer's maps are kept); the model is untouched."""
    T, H = enc.input_ids.numel(), bert.config.num_attention_heads
    step = max(1, min(max_tokens // T, max_map_bytes // (4 * H * T * T)))
    outs = []
    with torch.inference_mode():
        for start in range(0, masks.size(0), step):
            m = masks[start:start + step]  # (B, L, H)
            ids = enc.input_ids[None].expand(m.size(0), T)  # (B, T)
            types = enc.token_type_ids[None].expand(m.size(0), T)  # (B, T)
            out = bert.model(ids, token_type_ids=types, head_mask=m, output_attentions=False)
            outs.append(out.last_hidden_state)
    return torch.cat(outs)  # (N, T, D)


def ablation_change(bert, text, head_mask, text_pair=None) -> torch.Tensor:
    """Per token, 1 - cosine between the final hidden states with and without head_mask (L, H).
    Returns (T,)."""
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    enc = bert.encode(text, text_pair)
    masks = torch.stack([torch.ones(L, H), torch.as_tensor(head_mask, dtype=torch.float32)])
    last = _batched_last_hidden(bert, enc, masks)  # (2, T, D)
    return output_change(last[0], last[1])


def head_importance(bert, text, text_pair=None) -> np.ndarray:
    """Michel et al. 2019 in ablation form: switch off each head alone and measure the mean
    1 - cosine of the final hidden states against the intact model. Returns (L, H)."""
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    enc = bert.encode(text, text_pair)
    masks = torch.ones(1 + L * H, L * H)  # row 0 intact; row 1 + i switches head i off
    masks[1:] -= torch.eye(L * H)
    last = _batched_last_hidden(bert, enc, masks.view(-1, L, H))  # (1 + L*H, T, D)
    change = output_change(last[0], last[1:]).mean(-1)  # (L*H,)
    return change.view(L, H).numpy().astype(np.float64)  # (L, H)


def pruning_curve(bert, text, importance, text_pair=None) -> np.ndarray:
    """Switch heads off cumulatively, least important first: entry k is the mean output change
    with the k least important heads off, k = 0 .. L*H. Returns (L*H + 1,)."""
    L, H = bert.config.num_hidden_layers, bert.config.num_attention_heads
    order = np.argsort(np.asarray(importance).ravel(), kind="stable")  # least important first
    masks = torch.ones(L * H + 1, L * H)
    for k in range(1, L * H + 1):
        masks[k:, order[k - 1]] = 0
    enc = bert.encode(text, text_pair)
    last = _batched_last_hidden(bert, enc, masks.view(-1, L, H))  # (L*H + 1, T, D)
    return output_change(last[0], last).mean(-1).numpy().astype(np.float64)


def top_k_mask(importance, k: int) -> np.ndarray:
    """Keep the k most important heads of each layer: (L, H) of 0/1."""
    imp = np.asarray(importance)
    mask = np.zeros_like(imp)
    if k > 0:
        keep = np.argsort(-imp, axis=1, kind="stable")[:, :k]  # (L, k)
        np.put_along_axis(mask, keep, 1.0, axis=1)
    return mask


def map_change(intact, changed) -> np.ndarray:
    """How far each head's map moved: mean over rows of the total variation distance
    0.5 * sum_k |a - b|. (..., T, T) twice -> (...); 0 = unchanged, 1 = disjoint."""
    a, b = torch.as_tensor(intact), torch.as_tensor(changed)
    return (0.5 * (a - b).abs().sum(-1)).mean(-1).numpy().astype(np.float64)


def _norm_word(w: str) -> str:
    return w.strip().lower()


def find_word(labels, word: str):
    """Index of the first word-level label equal to word (case-insensitive), or None."""
    target = _norm_word(word)
    return next((i for i, w in enumerate(labels) if _norm_word(w) == target), None)


def by_word(rows, labels):
    """Sum a focus row's attention over identical words: rows (..., G) -> ({word: (...)}).
    '[CLS]', '[SEP]' and each word form (lower-cased) are one target each."""
    rows = np.asarray(rows)
    out = {}
    for g, w in enumerate(labels):
        key = _norm_word(w)
        out[key] = out.get(key, 0) + rows[..., g]
    return out


def reading_difference(rows_a, labels_a, rows_b, labels_b) -> np.ndarray:
    """Total variation between where the focus word attends in two sentences, with targets
    matched by word: 0.5 * sum_w |p_a(w) - p_b(w)| over the union of words. A word in only one
    sentence counts in full. rows (..., G_a) and (..., G_b) -> (...), in [0, 1]."""
    pa, pb = by_word(rows_a, labels_a), by_word(rows_b, labels_b)
    zero = np.zeros(np.shape(rows_a)[:-1])
    words = list(dict.fromkeys([*pa, *pb]))
    return 0.5 * sum(np.abs(pa.get(w, zero) - pb.get(w, zero)) for w in words)


# --- Explorer


def head_divergence(att: torch.Tensor) -> torch.Tensor:
    """How much the heads of each layer disagree, in nats: (L, H, T, T) -> (L,).

    The generalised Jensen-Shannon divergence of the H heads' rows with equal weights,
    entropy(mean of the heads) - mean(entropy of each head), averaged over query rows. It is 0
    when every head draws the same map and grows as heads look at different keys, whatever
    those keys are; it is at most log H."""
    return entropy(att.mean(dim=1)) - entropy(att).mean(dim=1)


def explorer_view(att: torch.Tensor, res, word_level=False, hide_special=False):
    """The maps as the Explorer shows them: att (..., T, T) of the AttentionResult res.

    word_level: merge subwords into words (Clark et al. 2019: attention to a word is summed over
    its pieces, attention from it averaged, so rows still sum to 1).
    hide_special: drop the [CLS]/[SEP] rows and columns and renormalise each row to sum to 1.
    Returns (maps (..., G, G), labels G, special G)."""
    labels, special = list(res.tokens), list(res.special)
    if word_level:
        labels, groups = res.words()
        att = res.word_level(att)  # (..., G, G)
        special = [all(special[t] for t in members) for members in groups]
    if hide_special and not all(special):
        keep = [not s for s in special]
        att = keep_tokens(att, keep)  # (..., G', G')
        labels = [x for x, k in zip(labels, keep) if k]
        special = [False] * len(labels)
    return att, list(labels), list(special)


def focus_targets(att: torch.Tensor, query: int):
    """Where one query token attends in every head: att (L, H, T, T) -> (top (L, H) key index,
    weight (L, H) on that key, rows (L, H, T) the query's full rows)."""
    rows = att[..., query, :]  # (L, H, T)
    weight, top = rows.max(dim=-1)  # (L, H) each
    return top, weight, rows
