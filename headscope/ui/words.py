"""Counted nouns, spelled right: "1 run", "3 runs", never "3 run(s)"."""

from mha_core.text import piece_kind


def plural(n: int, noun: str, many: str | None = None) -> str:
    """f"{n:,} {noun}" with the noun's plural (noun + "s", or `many`) unless n is 1."""
    return f"{n:,} {noun if n == 1 else (many or noun + 's')}"


# --- the loaded model's own special tokens and piece marks, for the text that names them --------

def special_names(tokenizer) -> tuple:
    """(cls, sep) as this model's tokenizer writes them: ("[CLS]", "[SEP]") for BERT, ALBERT and
    DeBERTa, ("<s>", "</s>") for RoBERTa and ModernBERT."""
    return tokenizer.cls_token or "[CLS]", tokenizer.sep_token or "[SEP]"


# each kind's mark and what it means: WordPiece's ## shows on every piece that continues a word;
# byte-level BPE's Ġ and SentencePiece's ▁ are decoded away (mha_core.text.readable) and show only
# as a piece that is nothing but the mark
PIECE_MARKS = {
    "WordPiece": ("##", "`##` marks a piece glued to the one before it (a word the vocabulary does "
                        "not hold is cut into pieces it does), not a character of the text."),
    "BPE": ("Ġ", "`Ġ` alone is a piece that stands only for the space before a word."),
    "Unigram": ("▁", "`▁` alone is a piece that only marks where a word starts."),
}


def piece_mark(tokenizer) -> tuple:
    """(mark, what it means) for this tokenizer's kind, or ("", "") for a kind without one."""
    return PIECE_MARKS.get(piece_kind(tokenizer), ("", ""))
