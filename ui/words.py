"""Counted nouns, spelled right: "1 run", "3 runs", never "3 run(s)"."""


def plural(n: int, noun: str, many: str | None = None) -> str:
    """f"{n:,} {noun}" with the noun's plural (noun + "s", or `many`) unless n is 1."""
    return f"{n:,} {noun if n == 1 else (many or noun + 's')}"


# --- the loaded model's own special tokens and piece marks, for the text that names them --------

def special_names(tokenizer) -> tuple:
    """(cls, sep) as this model's tokenizer writes them: ("[CLS]", "[SEP]") for BERT, ALBERT and
    DeBERTa, ("<s>", "</s>") for RoBERTa and ModernBERT."""
    return tokenizer.cls_token or "[CLS]", tokenizer.sep_token or "[SEP]"


def piece_kind(tokenizer) -> str:
    """The tokenizer's model: "WordPiece", "BPE", "Unigram" (its backend's class name), or ""
    for a tokenizer without a fast backend."""
    backend = getattr(getattr(tokenizer, "backend_tokenizer", None), "model", None)
    return type(backend).__name__ if backend is not None else ""


# what the mark in a cut word's pieces means, per kind of tokenizer
PIECE_MARKS = {
    "WordPiece": ("`##` marks a piece glued to the one before it (a word the vocabulary does not "
                  "hold is cut into pieces it does), not a character of the text."),
    "BPE": ("`Ġ` stands for the space before a piece: a piece without it continues the word "
            "before it (a word the vocabulary does not hold is cut into pieces it does)."),
    "Unigram": ("`▁` marks a piece that starts a word: a piece without it continues the word "
                "before it (a word the vocabulary does not hold is cut into pieces it does)."),
}


def piece_mark_note(tokenizer) -> str:
    """What the mark in this tokenizer's pieces means, or "" for a kind without a known mark."""
    return PIECE_MARKS.get(piece_kind(tokenizer), "")
