"""The text that names the current model's special tokens and piece marks follows the family
(issue 21): on a tiny RoBERTa (byte-level BPE) the Explorer's switch and caption name `<s>` and
`</s>`, on a tiny ALBERT (SentencePiece/Unigram) `[CLS]` and `[SEP]`, each as its tokenizer
writes them; a text cut into pieces gets the tokenizer's own mark explained (`Ġ`, `▁`), never
WordPiece's `##` note. The bundled BERT keeps its old text."""

import pytest

from testkit.apptest import messages, open_app, survives
from testkit.families import save_tiny_family

# no word of it is in the tiny tokenizers' training sentences (testkit.families.CORPUS): each is
# cut into pieces
CUT = "Zebras juggle xylophones quickly."
MARKS = {"roberta": ("</s>", "`Ġ` stands for the space before a piece"),
         "albert": ("[SEP]", "`▁` marks a piece that starts a word")}


@pytest.fixture(scope="module")
def offered(tmp_path_factory):
    return {f: save_tiny_family(f, tmp_path_factory.mktemp(f) / f) for f in MARKS}


def shown_switch(at, key):
    [t] = [t for t in at.toggle if t.key == key]
    return t.label


@pytest.mark.slow
@pytest.mark.parametrize("family", MARKS)
def test_the_explorer_names_the_familys_own_tokens(offered, family, monkeypatch):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(offered[family]))
    cls, sep = tok.cls_token, tok.sep_token
    assert sep == MARKS[family][0]  # the tokenizer's own, as the family writes it
    monkeypatch.setenv("HEADSCOPE_MODELS", f"tiny-{family}={offered[family]}")
    at = open_app("explorer", model=f"tiny-{family}", text=CUT, nospecial="1")
    survives(at)
    assert shown_switch(at, "ex_nospecial") == f"Hide {cls}/{sep}"
    assert any(c.value.startswith(f"{cls} and {sep} are hidden") for c in at.caption)
    # the words are cut (counted from the tokenizer), and the notice says what its mark means
    assert all(len(tok.tokenize(w)) >= 2 for w in CUT.rstrip(".").split())
    said = messages(at)
    assert MARKS[family][1] in said, said  # the notice of cut (or spelled-out) words
    assert "##" not in said
    if family == "roberta":
        assert "[SEP]" not in said and "[CLS]" not in said


@pytest.mark.slow
def test_bert_keeps_its_text(bundled):
    at = open_app("explorer", text="I saw the man.", nospecial="1")
    survives(at)
    assert shown_switch(at, "ex_nospecial") == "Hide [CLS]/[SEP]"
    assert any(c.value.startswith("[CLS] and [SEP] are hidden") for c in at.caption)
