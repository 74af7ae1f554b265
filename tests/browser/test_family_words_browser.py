"""The Explorer in chromium on a tiny byte-level BPE model (RoBERTa) and a SentencePiece/Unigram
model (ALBERT), offered through HEADSCOPE_MODELS (conftest's family_app: one server for every
tiny family): the grid is drawn (data-drawn), and with "Whole words" on it shows one label per
word exactly as the tokenizer's word_ids() groups the pieces (computed here from the
tokenizer, not from headscope's code)."""

from urllib.parse import quote

import pytest

from testkit.browser import FIND

FAMILIES = ["roberta", "albert"]
TEXT = "The animal didn't cross the street."
SHOWS = f"""([sel, drawn]) => {FIND}(sel)?.dataset.drawn === drawn"""
GRID = ".st-key-ex_grid [data-drawn]"


def expected_labels(tok, text, words: bool) -> list:
    """The tokens, or one label per (sequence, word_ids()) group, from the tokenizer alone."""
    enc = tok(text, return_offsets_mapping=True)
    toks = tok.convert_ids_to_tokens(enc["input_ids"])
    if not words:
        return toks
    labels, seen = [], {}
    for t, w in enumerate(enc.word_ids()):
        if w is None:
            labels.append(toks[t])
        elif w not in seen:
            seen[w] = len(labels)
            labels.append([t, t])
        else:
            labels[seen[w]][1] = t
    off = enc["offset_mapping"]
    return [x if isinstance(x, str) else text[off[x[0]][0]:off[x[1]][1]].strip() for x in labels]


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_word_level_groups_pieces_as_the_tokenizer_does(family_app, page, family):
    from transformers import AutoTokenizer

    url, saved = family_app
    tok = AutoTokenizer.from_pretrained(str(saved[family]))
    words = expected_labels(tok, TEXT, words=True)
    assert len(words) < len(expected_labels(tok, TEXT, words=False))  # some word is cut
    page.goto(f"{url}/?model=tiny-{family}&words=1&text={quote(TEXT)}")
    page.wait_for_function(SHOWS, arg=[GRID, " ".join(words)], polling="raf", timeout=90_000)
    assert page.locator(GRID).get_attribute("data-drawn") == " ".join(words)
