"""Text in, token ids out, through the checkpoint's own fast tokenizer; plus word grouping.

Shape letters: T tokens (subwords), G word groups.
"""

import contextlib
import functools
import threading
import unicodedata
import weakref
from dataclasses import dataclass
from pathlib import Path

import torch

# The Rust tokenizer is not safe to call from two threads at once while its truncation
# settings change ("Already borrowed"). Streamlit serves every session from threads.
_TOKENIZER_LOCK = threading.Lock()


class TokenizerError(RuntimeError):
    """A checkpoint directory whose tokenizer cannot be used."""


def load_tokenizer(path: Path):
    from transformers import AutoTokenizer

    if not ((path / "tokenizer.json").exists() or (path / "vocab.txt").exists()):
        # transformers would otherwise build an empty vocabulary and turn every word into [UNK]
        raise TokenizerError(f"cannot load the tokenizer from {path}: it has neither "
                             f"tokenizer.json nor vocab.txt")
    try:
        tok = AutoTokenizer.from_pretrained(str(path), use_fast=True)
    except Exception as e:
        raise TokenizerError(f"cannot load the tokenizer from {path} ({type(e).__name__}: "
                             f"{str(e)[:200]}); the directory needs tokenizer.json or "
                             f"vocab.txt with tokenizer_config.json") from None
    if not getattr(tok, "is_fast", False):
        raise TokenizerError(f"the tokenizer in {path} is not a fast tokenizer, so it gives no "
                             f"character offsets; add its tokenizer.json")
    return tok


@dataclass(frozen=True)
class TextPair:
    """What the model reads from one or two text boxes (split_pair)."""
    text: str  # sentence A
    pair: str | None  # sentence B, or None for a single sentence
    sep_typed: bool = False  # a [SEP] typed in the text was read as the separator
    blank_pair: bool = False  # a second text was given but is blank: read alone
    kept_seps: int = 0  # typed [SEP]s left inside a sentence (read as [SEP] tokens there)


def per_tokenizer(fn):
    """fn(tokenizer) computed once per tokenizer and kept while the tokenizer lives (a weak
    reference: a model the app drops takes its tokenizer with it). For facts read off a
    tokenizer's template at every encoding, where a tokenizer call costs ~0.2 ms."""
    known = weakref.WeakKeyDictionary()

    @functools.wraps(fn)
    def cached(tokenizer):
        try:
            return known[tokenizer]
        except (KeyError, TypeError):  # not seen, or not weakly referable
            pass
        value = fn(tokenizer)
        with contextlib.suppress(TypeError):
            known[tokenizer] = value
        return value
    return cached


@per_tokenizer
def pair_seps(tokenizer) -> int:
    """How many separator tokens the tokenizer puts between sentence A and sentence B: 1 for
    BERT's [CLS] A [SEP] B [SEP], 2 for RoBERTa's <s> A </s></s> B </s> (read off the
    tokenizer's own pair template, so every family follows its tokenizer)."""
    try:
        with _TOKENIZER_LOCK:
            seq = tokenizer("a", "b").sequence_ids()
    except (ValueError, TypeError, AttributeError):  # a slow tokenizer: no sequence_ids
        return 1
    a_end, b_start = max(i for i, s in enumerate(seq) if s == 0), seq.index(1)
    return max(1, b_start - a_end - 1)


@per_tokenizer
def pair_reading(tokenizer) -> str:
    """The tokenizer's own pair template with A and B for the sentences, e.g.
    "[CLS] A [SEP] B [SEP]" or "<s> A </s></s> B </s>" (the separator written as it is typed)."""
    with _TOKENIZER_LOCK:
        enc = tokenizer("a", "b")
    toks = tokenizer.convert_ids_to_tokens(enc["input_ids"])
    parts = [("A" if s == 0 else "B") if s is not None else t
             for t, s in zip(toks, enc.sequence_ids())]
    out = []
    for p in parts:
        if out and p == tokenizer.sep_token and out[-1] == p:
            out[-1] += p  # RoBERTa's </s></s>, written as it is typed
        elif not out or p != out[-1]:  # one A, one B however many pieces "a" and "b" became
            out.append(p)
    return " ".join(out)


def split_pair(text: str, text_pair: str | None = None, sep: str = "[SEP]",
               allow_pair: bool = True, seps: int = 1) -> TextPair:
    """THE one reading of a sentence pair, used by every caller (Model.encode calls it).

    A [SEP] typed inside a single text box is the pair separator: the text before the first one
    is sentence A, the rest sentence B (BERT was trained on [CLS] A [SEP] B [SEP]). With a
    second text given, or a model with one segment type (allow_pair=False), typed [SEP]s stay
    inside their sentence, where the tokenizer reads them as [SEP] tokens. A blank second text
    (or nothing after the [SEP]) means a single sentence. Idempotent: splitting the result
    again changes nothing. The strings are cut, never edited, so offsets still index them.
    seps (pair_seps): a family that separates A and B by several separators (RoBERTa:
    </s></s>) takes them typed together, spaces between allowed, as the one separator."""
    blank = text_pair is not None and not text_pair.strip()
    pair = None if blank else text_pair
    if pair is None and allow_pair and sep in text:
        a, _, b = text.partition(sep)
        for _ in range(seps - 1):  # RoBERTa's second </s> belongs to the separator
            rest = b.lstrip()
            if rest.startswith(sep):
                b = rest[len(sep):]
        b_or_none = b if b.strip() else None
        return TextPair(a, b_or_none, sep_typed=True, blank_pair=blank,
                        kept_seps=b.count(sep) if b_or_none is not None else 0)
    return TextPair(text, pair, blank_pair=blank,
                    kept_seps=text.count(sep) + (pair or "").count(sep))


@dataclass(frozen=True)
class Encoded:
    input_ids: torch.Tensor  # (T,)
    token_type_ids: torch.Tensor  # (T,)
    tokens: list  # T readable labels: the pieces as a reader reads them (text.readable)
    offsets: list  # T (start, end) character spans; (0, 0) for special tokens
    sequence_ids: list  # T of 0 (text), 1 (text_pair) or None (special token the tokenizer added)
    word_ids: list  # T of int or None (special token)
    # T bools: [CLS] and [SEP], whether the tokenizer added them or they were typed (a typed
    # [MASK] or [UNK] stands for a word, so it is not special here)
    special: list
    truncated: bool  # the text did not fit and was cut
    n_tokens_full: int  # how many tokens the whole text would have needed
    max_length: int
    segments_full: tuple = (0, 0)  # the word pieces of A and of B before any cut
    masks: tuple = ()  # positions of [MASK] tokens kept, in order
    n_masks_full: int = 0  # [MASK] tokens before the cut (more than len(masks): some were cut)
    source: TextPair | None = None  # what was encoded (set by Model.encode)
    pieces: tuple = ()  # T of the tokenizer's own tokens (convert_ids_to_tokens: Ġ, ▁, ## kept)

    def segment_lengths(self) -> tuple:
        """The word pieces of A and of B that the model reads (without [CLS] and [SEP])."""
        return tuple(sum(1 for s in self.sequence_ids if s == k) for k in (0, 1))


def _pieces(enc, k: int) -> int:
    return sum(1 for s in enc.sequence_ids() if s == k)


def token_ids(tokenizer, text: str) -> list:
    """The ids of a bare text, no special tokens, under the tokenizer lock (a fast tokenizer's
    truncation state is shared by every thread that calls it)."""
    with _TOKENIZER_LOCK:
        return tokenizer(text, add_special_tokens=False, truncation=False,
                         verbose=False)["input_ids"]


def encode(tokenizer, text: str, text_pair: str | None = None, max_length: int = 512,
           source: TextPair | None = None) -> Encoded:
    """Tokenise one text (or a pair), cutting it to max_length tokens and saying so. A pair
    that is too long loses pieces from its longer sentence first ("longest_first", as
    transformers does)."""
    kwargs = dict(return_offsets_mapping=True, return_special_tokens_mask=True,
                  return_token_type_ids=True, verbose=False)
    mask_id = tokenizer.mask_token_id
    with _TOKENIZER_LOCK:
        enc = tokenizer(text, text_pair, truncation=False, **kwargs)
        n_full = len(enc["input_ids"])
        segments_full = (_pieces(enc, 0), _pieces(enc, 1))
        n_masks_full = sum(1 for i in enc["input_ids"] if i == mask_id)
        if n_full > max_length:
            enc = tokenizer(text, text_pair, truncation="longest_first", max_length=max_length,
                            **kwargs)
    ids = enc["input_ids"]
    structural = {tokenizer.cls_token_id, tokenizer.sep_token_id} - {None}
    return Encoded(
        input_ids=torch.tensor(ids, dtype=torch.long),
        token_type_ids=torch.tensor(enc["token_type_ids"], dtype=torch.long),
        tokens=readable(tokenizer, tokenizer.convert_ids_to_tokens(ids)),
        offsets=[tuple(o) for o in enc["offset_mapping"]],
        sequence_ids=enc.sequence_ids(),
        word_ids=enc.word_ids(),
        special=[bool(s) or i in structural for s, i in zip(enc["special_tokens_mask"], ids)],
        truncated=n_full > max_length,
        n_tokens_full=n_full,
        max_length=max_length,
        segments_full=segments_full,
        masks=tuple(t for t, i in enumerate(ids) if i == mask_id),
        n_masks_full=n_masks_full,
        source=source or TextPair(text, text_pair),
        pieces=tuple(tokenizer.convert_ids_to_tokens(ids)),
    )


def piece_kind(tokenizer) -> str:
    """The tokenizer's model: "WordPiece", "BPE", "Unigram" (its backend's class name), or ""
    for a tokenizer without a fast backend."""
    backend = getattr(getattr(tokenizer, "backend_tokenizer", None), "model", None)
    return type(backend).__name__ if backend is not None else ""


def readable(tokenizer, tokens: list) -> list:
    """Pieces as a reader reads them: a byte-level BPE's `Ġ` (a leading space) and bytes
    (`Ã©` for é), and SentencePiece's `▁` (a word start) decoded by the tokenizer itself;
    WordPiece's `##` and every special token (<s>, </s>, [CLS]) kept as they are. A piece
    that is only a marker keeps it (an empty label would be unreadable)."""
    if piece_kind(tokenizer) in ("", "WordPiece"):
        return tokens
    specials = set(tokenizer.all_special_tokens)
    return [t if t in specials else (tokenizer.convert_tokens_to_string([t]).strip() or t)
            for t in tokens]


def encode_words(tokenizer, sentences) -> list:
    """Tokenise pre-split words (a treebank's own words) in one batch call: for each sentence
    (input ids T, word index of each piece T: -1 for [CLS]/[SEP]). No truncation: the caller
    decides what is too long."""
    if not sentences:
        return []
    with _TOKENIZER_LOCK:
        enc = tokenizer([list(words) for words in sentences], is_split_into_words=True,
                        truncation=False, verbose=False)
    return [(ids, [-1 if w is None else w for w in enc.word_ids(i)])
            for i, ids in enumerate(enc["input_ids"])]


def typed_special(enc: Encoded, tokenizer, text: str, text_pair: str | None = None) -> list:
    """Special tokens typed in the text itself ("[SEP]", "[MASK]" as letters): the tokenizer
    reads them as the special tokens, as transformers does. Not an [UNK] the tokenizer made of
    an unknown word: the text at the token's offsets must spell the token. Sorted, each once."""
    specials, source = set(tokenizer.all_special_tokens), (text, text_pair)
    return sorted({t for t, seq, (a, b) in zip(enc.tokens, enc.sequence_ids, enc.offsets)
                   if t in specials and seq is not None and source[seq][a:b] == t})


def word_groups(enc: Encoded, text: str, text_pair: str | None = None):
    """Group subword pieces into words. Returns (labels, groups): G labels taken from the original
    text (special tokens keep their own name), and G lists of token indices."""
    labels, groups, index = [], [], {}
    for t, (seq, word) in enumerate(zip(enc.sequence_ids, enc.word_ids)):
        if word is None or seq is None:
            labels.append(enc.tokens[t])
            groups.append([t])
            continue
        key = (seq, word)
        if key not in index:
            index[key] = len(groups)
            labels.append(None)
            groups.append([])
        groups[index[key]].append(t)
    source = (text, text_pair)
    for g, members in enumerate(groups):
        if labels[g] is None:
            s = source[enc.sequence_ids[members[0]]]
            start, end = enc.offsets[members[0]][0], enc.offsets[members[-1]][1]
            labels[g] = s[start:end].strip() or enc.tokens[members[0]]  # BPE's offsets: " saw"
    return labels, groups


def group_matrix(groups, T: int) -> torch.Tensor:
    """(G, T) one-hot: row g marks the tokens of word g."""
    P = torch.zeros(len(groups), T)
    for g, members in enumerate(groups):
        P[g, members] = 1.0
    return P


def to_word_level(att: torch.Tensor, groups) -> torch.Tensor:
    """Clark et al. 2019: attention TO a word is the SUM over its pieces; attention FROM a word is
    the MEAN over its pieces. att (..., T, T) -> (..., G, G); rows that summed to 1 still do."""
    P = group_matrix(groups, att.size(-1)).to(att.dtype)  # (G, T)
    to_words = att @ P.T  # (..., T, G): summed over each word's key pieces
    mean_from = P / P.sum(dim=1, keepdim=True)  # (G, T): averages over each word's query pieces
    return mean_from @ to_words  # (..., G, G)


def normalisation(tokenizer, text: str) -> dict:
    """What the tokenizer's normaliser does to this text's letters before splitting it: an
    uncased BERT lowers capitals and strips accents. {"lowercases": a word of this text that
    does not start a sentence lost its capitals, "strips": the normaliser strips accents,
    "examples": up to 3 (word, as read) pairs of this text that lost accents}. Other changes
    (control or zero-width characters removed) are not counted here: they are not about the
    language."""
    norm = getattr(getattr(tokenizer, "backend_tokenizer", None), "normalizer", None)
    if norm is None:
        return {"lowercases": False, "strips": False, "examples": []}
    lower, strip = getattr(norm, "lowercase", None), getattr(norm, "strip_accents", None)
    if lower is None:  # not a BertNormalizer: ask it
        lower, strip = norm.normalize_str("A") == "a", norm.normalize_str("é") == "e"
    elif strip is None:  # BERT's rule: accents are stripped when the text is lowercased
        strip = lower
    lower, strip = bool(lower), bool(strip)
    lowercases, examples, starts = False, [], True
    for word in text.split()[:2000]:
        # capitals that carry something (a name, "Paris"): not a sentence's first letter
        lowercases |= lower and not starts and word != word.lower()
        starts = word[-1] in ".!?"
        accented = any(unicodedata.combining(c) for c in unicodedata.normalize("NFD", word))
        if strip and accented and len(examples) < 3:
            examples.append((word, norm.normalize_str(word).replace(" ", "")))
    return {"lowercases": lowercases, "strips": strip, "examples": examples}


def word_pieces(enc: Encoded) -> list:
    """The pieces of every word of the text(s), in order: [[token, ...], ...]."""
    pieces = {}
    for t, (seq, word) in enumerate(zip(enc.sequence_ids, enc.word_ids)):
        if seq is not None and word is not None:
            pieces.setdefault((seq, word), []).append(enc.tokens[t])
    return list(pieces.values())


def unknown_words(enc: Encoded, unk_token: str) -> tuple:
    """(words whose every piece is the unknown token, words read letter by letter, words): how
    much of a text the vocabulary cannot read at all, and how much only as single letters (a
    word of 3 or more pieces of one character each, e.g. Cyrillic in an English vocabulary)."""
    words = word_pieces(enc)
    unknown = sum(all(p == unk_token for p in w) for w in words)
    spelled = sum(len(w) >= 3 and all(len(p.removeprefix("##")) == 1 for p in w)
                  for w in words)
    return unknown, spelled, len(words)
