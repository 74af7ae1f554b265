"""Text in, token ids out, through the checkpoint's own fast tokenizer; plus word grouping.

Shape letters: T tokens (subwords), G word groups.
"""

import threading
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
class Encoded:
    input_ids: torch.Tensor  # (T,)
    token_type_ids: torch.Tensor  # (T,)
    tokens: list  # T strings
    offsets: list  # T (start, end) character spans; (0, 0) for special tokens
    sequence_ids: list  # T of 0 (text), 1 (text_pair) or None (special token)
    word_ids: list  # T of int or None (special token)
    special: list  # T bools: [CLS], [SEP], ...
    truncated: bool  # the text did not fit and was cut
    n_tokens_full: int  # how many tokens the whole text would have needed
    max_length: int


def encode(tokenizer, text: str, text_pair: str | None = None, max_length: int = 512) -> Encoded:
    """Tokenise one text (or a pair), cutting it to max_length tokens and saying so."""
    kwargs = dict(return_offsets_mapping=True, return_special_tokens_mask=True,
                  return_token_type_ids=True, verbose=False)
    with _TOKENIZER_LOCK:
        enc = tokenizer(text, text_pair, truncation=False, **kwargs)
        n_full = len(enc["input_ids"])
        if n_full > max_length:
            enc = tokenizer(text, text_pair, truncation="longest_first", max_length=max_length,
                            **kwargs)
    ids = enc["input_ids"]
    return Encoded(
        input_ids=torch.tensor(ids, dtype=torch.long),
        token_type_ids=torch.tensor(enc["token_type_ids"], dtype=torch.long),
        tokens=tokenizer.convert_ids_to_tokens(ids),
        offsets=[tuple(o) for o in enc["offset_mapping"]],
        sequence_ids=enc.sequence_ids(),
        word_ids=enc.word_ids(),
        special=[bool(s) for s in enc["special_tokens_mask"]],
        truncated=n_full > max_length,
        n_tokens_full=n_full,
        max_length=max_length,
    )


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
    return sorted({t for t, s, seq, (a, b) in zip(enc.tokens, enc.special, enc.sequence_ids,
                                                  enc.offsets)
                   if not s and t in specials and seq is not None and source[seq][a:b] == t})


def first_tokens(text: str, enc: Encoded, n: int) -> str:
    """The start of `text` that tokenises to at most n tokens, [CLS] and [SEP] included (cut at
    the end of the (n-2)-th word piece); the text itself when it is that short already."""
    if len(enc.tokens) <= n:
        return text
    last = max(b for seq, (_, b) in zip(enc.sequence_ids[1:n - 1], enc.offsets[1:n - 1])
               if seq == 0)
    return text[:last]


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
            labels[g] = s[start:end] or enc.tokens[members[0]]
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
