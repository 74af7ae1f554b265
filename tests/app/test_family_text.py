"""The text that names the current model's special tokens and piece marks follows the family: on a
tiny RoBERTa (byte-level BPE) the Explorer component is sent `<s>` and `</s>` to name its switch
and note, on a tiny ALBERT (SentencePiece/Unigram) `[CLS]` and `[SEP]`, each as its tokenizer
writes them. A word cut
into pieces is quoted with its pieces as the maps show them (BPE's `Ġ` and SentencePiece's `▁`
decoded away); the mark is explained only where a piece is nothing but the mark (ALBERT's lone `▁`),
and WordPiece's `##` note never shows. The bundled BERT keeps WordPiece's text."""

import pytest

from testkit.apptest import component, messages, open_app, survives
from testkit.families import save_tiny_family

# "cats" and "mats" are not in the tiny tokenizers' vocabularies (trained on
# testkit.families.CORPUS): they are cut into pieces
CUT = "The cats sat on the mats."
MARKS = {"roberta": ("</s>", None),  # byte-level BPE: "cats" is c at s, no lone Ġ
         "albert": ("[SEP]", "`▁` alone is a piece that only marks where a word starts")}


@pytest.fixture(scope="module")
def offered(tmp_path_factory):
    return {f: save_tiny_family(f, tmp_path_factory.mktemp(f) / f) for f in MARKS}


def special_names(at) -> list:
    """The [CLS] and [SEP] the Explorer component is sent: its switch ("Hide <s>/</s>") and its
    note on hidden special tokens are written from them in the browser."""
    d = component(at, "ex_view")
    assert d["impose"]["hide"] is True  # the link's nospecial=1 reaches the component
    return d["names"]


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
    assert special_names(at) == [cls, sep]
    # the notice quotes a cut word as the tokenizer cuts it (counted here from the tokenizer),
    # each piece without its mark unless it is nothing but the mark
    cats = [p.lstrip("Ġ▁") or p for p in tok.tokenize(" cats")]
    assert len(cats) >= 3
    said = messages(at)
    assert f"“cats” as `{' '.join(cats)}`" in said, said
    note = MARKS[family][1]
    assert (note in said) if note else ("Ġ" not in said), said
    assert "##" not in said
    if family == "roberta":
        assert "[SEP]" not in said and "[CLS]" not in said


@pytest.mark.slow
def test_bert_keeps_its_text(bundled):
    at = open_app("explorer", text="I saw the man.", nospecial="1")
    survives(at)
    assert special_names(at) == ["[CLS]", "[SEP]"]
