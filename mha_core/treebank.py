"""Dependency treebanks in CoNLL-U, read with the `conllu` library: words, gold heads, relations.

    sentences = read_conllu(text)        # or read_treebank(path)
    s = sentences[0]
    s.words      # ('I', 'saw', 'the', 'man', ...)
    s.heads      # (2, 0, 4, 2, ...): 1-based, 0 = the root
    s.relations  # ('nsubj', 'root', 'det', 'obj', ...): universal relations (nmod:poss -> nmod)

Multiword-token ranges (1-2) and empty nodes (3.1) are skipped: only syntactic words count.
A malformed file raises TreebankError, whose message names the line and the reason.
"""

from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).parent / "data"
# The app's default: ~150 simple English sentences annotated by hand for headscope (UD v2)
DEFAULT_TREEBANK = DATA / "headscope-sample.conllu"
MAX_BYTES = 10 * 1024 * 1024  # a file larger than this is refused before it is read
# The caps an upload is read with (docs/limits.md): no model here reads more than 512 pieces, so
# a longer sentence cannot be scored, and the longest sentences of UD English are ~160 words;
# the app scores 3,000 sentences, and UD English-EWT's train file holds 12,544.
MAX_UPLOAD_WORDS = 1_000
MAX_UPLOAD_SENTENCES = 20_000


class TreebankError(ValueError):
    """A file that is not a usable CoNLL-U treebank. str(e) says where (line) and why."""

    def __init__(self, reason: str, line: int | None = None):
        self.line, self.reason = line, reason
        super().__init__(f"line {line}: {reason}" if line else reason)


@dataclass(frozen=True)
class Sentence:
    sent_id: str
    text: str  # the `# text` comment, or the words joined by spaces
    words: tuple  # W word forms
    heads: tuple  # W heads, 1-based; 0 = the root
    deprels: tuple  # W relations as written (e.g. "nmod:poss")
    line: int  # the file line where the sentence starts (from 1)

    @property
    def relations(self) -> tuple:
        """The universal relations: the part before ':' ("nmod:poss" -> "nmod")."""
        return tuple(universal(r) for r in self.deprels)


def universal(deprel: str) -> str:
    return deprel.split(":", 1)[0]


def decode(data: bytes | str) -> str:
    """Bytes of an upload as text: UTF-8 (a byte-order mark is dropped), or TreebankError."""
    if isinstance(data, str):
        return data.lstrip("\ufeff")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise TreebankError(f"this is not UTF-8 text (byte {e.start + 1}); CoNLL-U files are "
                            f"UTF-8", line) from None


def _blocks(text: str):
    """(first line number, [(line number, line), ...]) for each blank-line separated block."""
    block = []
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            block.append((n, line))
        elif block:
            yield block[0][0], block
            block = []
    if block:
        yield block[0][0], block


def _token(n: int, line: str):
    """One word line parsed by conllu, with the checks conllu leaves out (ten columns)."""
    from conllu.exceptions import ParseException
    from conllu.parser import DEFAULT_FIELDS, parse_line

    columns = line.rstrip("\r").split("\t")
    if len(columns) != 10:
        raise TreebankError(f"expected 10 tab-separated columns (ID FORM LEMMA UPOS XPOS FEATS "
                            f"HEAD DEPREL DEPS MISC), found {len(columns)}", n)
    try:
        return parse_line(line.strip(), DEFAULT_FIELDS)
    except ParseException as e:
        raise TreebankError(str(e), n) from None


def check_tree(heads, lines) -> None:
    """TreebankError unless every word reaches the root (heads: 1-based, 0 = the root; lines:
    each word's file line). Linear time: each word is walked once, and a walk stops at the first
    word already known to reach the root."""
    state = [0] * (len(heads) + 1)  # 0 not seen, 1 on the current walk, 2 reaches the root
    state[0] = 2
    for i in range(1, len(heads) + 1):
        path, j = [], i
        while state[j] == 0:
            state[j] = 1
            path.append(j)
            j = heads[j - 1]
        if state[j] == 1:  # the walk came back to itself
            raise TreebankError(f"word {i}'s HEADs form a cycle, so this is not a tree",
                                lines[i - 1])
        for k in path:
            state[k] = 2


def _sentence(start: int, block, index: int, max_words: int | None = None) -> Sentence | None:
    """The syntactic words of one block, checked as a tree; None for a block without words."""
    from conllu.parser import parse_comment_line

    if max_words is not None:
        n_rows = sum(not line.lstrip().startswith("#") for _, line in block)
        if n_rows > max_words:  # counted before any line is parsed (ranges count too: a bound)
            raise TreebankError(f"this sentence has {n_rows:,} word lines; sentences are limited "
                                f"to {max_words:,} words (no model here reads more than 512 "
                                f"pieces)", start)
    meta, words = {}, []  # words: (line number, token)
    for n, line in block:
        if line.lstrip().startswith("#"):
            meta.update(dict(parse_comment_line(line.strip())))
            continue
        tok = _token(n, line)
        if isinstance(tok["id"], int):
            words.append((n, tok))  # a tuple id is a multiword range (1-2) or an empty node (3.1)
    if not words:
        return None
    W = len(words)
    for i, (n, tok) in enumerate(words, start=1):
        if tok["id"] != i:
            raise TreebankError(f"word IDs must run 1, 2, 3, … in order; expected {i}, "
                                f"found {tok['id']}", n)
        if not tok["form"]:
            raise TreebankError(f"word {i} has an empty FORM", n)
        if tok["head"] is None:
            raise TreebankError(f"word {i} has no HEAD (column 7 is '_'); scoring needs "
                                f"dependency trees", n)
        if not 0 <= tok["head"] <= W:
            raise TreebankError(f"word {i}'s HEAD {tok['head']} is outside the sentence "
                                f"(0 or 1–{W})", n)
        if tok["head"] == i:
            raise TreebankError(f"word {i} is its own HEAD", n)
        if not tok["deprel"] or tok["deprel"] == "_":
            raise TreebankError(f"word {i} has no DEPREL (column 8)", n)
    heads = [tok["head"] for _, tok in words]
    roots = [i for i, h in enumerate(heads, start=1) if h == 0]
    if len(roots) != 1:
        raise TreebankError(f"a sentence needs exactly one word with HEAD 0, this one has "
                            f"{len(roots)}", start)
    check_tree(heads, [n for n, _ in words])  # every word must reach the root: no cycles
    forms = tuple(tok["form"] for _, tok in words)
    return Sentence(sent_id=str(meta.get("sent_id") or index + 1),
                    text=str(meta.get("text") or " ".join(forms)), words=forms,
                    heads=tuple(heads), deprels=tuple(tok["deprel"] for _, tok in words),
                    line=start)


def read_conllu(data: bytes | str, max_words: int | None = None,
                max_sentences: int | None = None) -> list:
    """Every sentence of a CoNLL-U text (str or UTF-8 bytes), or TreebankError saying which line
    is wrong and why. Blocks that hold only multiword-token ranges or empty nodes have no
    syntactic words and are skipped; a file with no words at all is an error. With caps (the
    app's uploads: MAX_UPLOAD_WORDS, MAX_UPLOAD_SENTENCES), a longer sentence or file is an
    error."""
    text = decode(data)
    if not text.strip():
        raise TreebankError("the file is empty")
    sentences, wordless = [], 0
    for start, block in _blocks(text):
        s = _sentence(start, block, len(sentences), max_words)
        if max_sentences is not None and s is not None and len(sentences) == max_sentences:
            raise TreebankError(f"the file has more than {max_sentences:,} sentences, the "
                                f"most an upload may hold; score it with the command line "
                                f"(python -m mha_core.syntax FILE.conllu)", start)
        if s is None:
            wordless += 1
        else:
            sentences.append(s)
    if not sentences:
        if wordless:
            raise TreebankError("the file has no syntactic words: only comments, multiword-"
                                "token ranges (like 1-2) or empty nodes (like 3.1), which are "
                                "not scored")
        raise TreebankError("the file has no sentences")
    return sentences


def size_text(n: int) -> str:
    """A file size for messages: "50.0 MB", "2.0 KB"."""
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 2**10:.1f} KB"


def read_treebank(path, max_bytes: int = MAX_BYTES) -> list:
    """read_conllu of a file, refused before reading when it is larger than max_bytes."""
    path = Path(path)
    size = path.stat().st_size
    if size > max_bytes:
        raise TreebankError(f"{path.name} is {size_text(size)}, more than the "
                            f"{size_text(max_bytes)} allowed")
    return read_conllu(path.read_bytes())


def find_sentences(sentences, text: str) -> list:
    """The treebank sentences whose text is `text`, ignoring case and spacing ("I saw the man
    with a telescope." finds both of the sample's readings)."""
    def key(s: str) -> str:
        return "".join(s.split()).casefold()

    want = key(text)
    return [s for s in sentences if want and (key(s.text) == want or key("".join(s.words)) == want)]
