"""The sentences a reproduction reads: the bundled sample treebank by default
(mha_core/data/headscope-sample.conllu, 153 hand-made sentences), or --corpus FILE, plain text
(a sentence a line) or CoNLL-U (read by mha_core.treebank, with the `conllu` library).

Every sentence runs alone, as the model reads one text ([CLS] s [SEP] for BERT; a decoder's
text as it is). Bounds: files up to MAX_BYTES, at most MAX_SENTENCES sentences, and sentences
over MAX_TOKENS tokens are skipped (Clark et al.'s limit), counted in the report.
"""

from dataclasses import dataclass, replace
from pathlib import Path

from ..treebank import DEFAULT_TREEBANK, TreebankError, decode, read_conllu, size_text

MAX_BYTES = 10 * 2**20
MAX_SENTENCES = 2_000  # the most any run reads, whatever --sentences asks
MAX_TOKENS = 128  # tokens per sentence, special tokens included
CONLLU_SUFFIXES = (".conllu", ".conll")


class CorpusError(ValueError):
    """A corpus file that cannot be read: str(e) says which and why."""


@dataclass(frozen=True)
class Corpus:
    name: str  # the file's name, for the reports
    texts: tuple  # the sentences, in file order
    treebank: tuple | None = None  # mha_core.treebank.Sentence per text (CoNLL-U), or None

    def head(self, n: int) -> "Corpus":
        """The first n sentences (at most MAX_SENTENCES)."""
        n = max(0, min(int(n), MAX_SENTENCES))
        return replace(self, texts=self.texts[:n],
                       treebank=None if self.treebank is None else self.treebank[:n])


def looks_like_conllu(text: str) -> bool:
    """Whether the first line that is neither blank nor a comment has CoNLL-U's 10 columns."""
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line.count("\t") == 9
    return False


def read_corpus(path=None) -> Corpus:
    """The corpus at path (None: the bundled sample). CorpusError for a file that is missing,
    too large, not UTF-8, malformed CoNLL-U, or without a sentence."""
    path = Path(DEFAULT_TREEBANK if path is None else path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise CorpusError(f"{path} is not a file")
        if size > MAX_BYTES:
            raise CorpusError(f"{path.name} is {size_text(size)}, more than the "
                              f"{size_text(MAX_BYTES)} a corpus may be")
        text = decode(path.read_bytes())
    except FileNotFoundError:
        raise CorpusError(f"no corpus file at {path}") from None
    except (OSError, TreebankError) as e:
        raise CorpusError(f"{path.name}: {e}") from None
    if path.suffix.lower() in CONLLU_SUFFIXES or looks_like_conllu(text):
        try:
            sentences = read_conllu(text, max_sentences=MAX_SENTENCES)
        except TreebankError as e:
            raise CorpusError(f"{path.name} is not usable CoNLL-U: {e}") from None
        return Corpus(path.name, tuple(s.text for s in sentences), tuple(sentences))
    lines = tuple(line.strip() for line in text.splitlines() if line.strip())
    if not lines:
        raise CorpusError(f"{path.name} has no sentence (plain text: one sentence a line)")
    return Corpus(path.name, lines[:MAX_SENTENCES])


def encode_corpus(model, texts, max_tokens: int = MAX_TOKENS, min_tokens: int = 2):
    """Each text as the model reads it alone: (kept, skipped) with kept a list of (index,
    Encoded) and skipped {"too_long": n, "too_short": n, "unreadable": n} (over max_tokens
    tokens; under min_tokens tokens, or no token but special ones; a text the model refuses,
    such as a typed [SEP] pair for a model without pairs)."""
    kept, skipped = [], {"too_long": 0, "too_short": 0, "unreadable": 0}
    for i, text in enumerate(texts):
        try:
            enc = model.encode(text, max_length=max_tokens)
        except ValueError:
            skipped["unreadable"] += 1
            continue
        if enc.truncated:
            skipped["too_long"] += 1
        elif len(enc.tokens) < min_tokens or all(enc.special):
            skipped["too_short"] += 1
        else:
            kept.append((i, enc))
    return kept, skipped
