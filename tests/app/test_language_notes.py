"""What the tokenizer does to a text's language is said above the charts: accents stripped by an
uncased model, words it cannot read at all, and words it reads only letter by letter. English
gets no warning, and a cased model is never called uncased."""

import pytest

from testkit.apptest import open_app, survives
from testkit.models import save_tiny_bert


def warnings(at) -> str:
    return " | ".join(w.value for w in at.warning)


@pytest.mark.parametrize("page", ["explorer", "all_heads", "head_lab", "inside_mha"])
def test_french_loses_its_accents_and_the_page_says_so(bundled, page):
    at = open_app(page, text="Le café est très chaud à Paris.")
    survives(at)
    said = warnings(at)
    assert "strips accents" in said and "“café” as “cafe”" in said and "“très” as “tres”" in said
    assert "trained on English" in said


def test_chinese_words_become_unknown_and_the_page_says_how_many(bundled):
    text = "我看见了一个人"
    enc = bundled.encode(text)
    unknown = sum(t == "[UNK]" for t in enc.tokens)
    at = open_app("explorer", text=text)
    survives(at)
    assert unknown >= 2  # counted here from the tokenizer itself
    assert f"{unknown} of {len(enc.tokens) - 2} words" in warnings(at)
    assert "placeholder tokens" in warnings(at)


def test_russian_is_read_letter_by_letter_and_the_page_says_so(bundled):
    text = "Привет мир, как дела"
    words = text.replace(",", "").split()
    spelled = [w for w in words if all(len(t.removeprefix("##")) == 1
                                       for t in bundled.tokenizer.tokenize(w))]
    at = open_app("explorer", text=text)
    survives(at)
    assert len(spelled) == 4  # counted here: every piece one letter
    assert "4 of 5 words (80%) in this text are read letter by letter" in warnings(at)


def test_plain_english_gets_no_warning_only_a_note_on_capitals(bundled):
    # a capital that carries something (a name, not a sentence's first letter) is what the
    # uncased model loses: the note is due (mha_core.text.normalisation)
    at = open_app("explorer", text="The cat sat on the mat with Anna.")
    survives(at)
    assert not at.warning
    assert any("This model is uncased" in c.value for c in at.caption)
    for text in ("The cat sat on the mat 😀 today.", "foo\u200bbar a\x00b Tab\xadle sat."):
        at = open_app("explorer", text=text)
        assert not at.warning, text  # invisible characters are not a language note


def test_a_cased_model_is_not_called_uncased(tmp_path, monkeypatch):
    path = save_tiny_bert(tmp_path / "cased", lowercase=False)
    monkeypatch.setenv("HEADSCOPE_MODELS", f"cased={path}")
    at = open_app("explorer", model="cased", text="The cat sat on the mat.")
    survives(at)
    assert not any("This model is uncased" in c.value for c in at.caption)
    assert "strips accents" not in warnings(at)


def language_warnings(at) -> list:
    return [w.value for w in at.warning if "trained on English" in w.value]


def test_german_gets_one_notice_that_says_english_and_what_the_pieces_mean(bundled):
    text = "Ich sehe den Mann mit dem Fernglas."
    pieces = bundled.tokenizer.tokenize("Fernglas")  # counted here from the tokenizer itself
    assert pieces == ["fern", "##gl", "##as"]
    at = open_app("explorer", text=text)
    survives(at)
    said = language_warnings(at)
    assert len(said) == 1 and len(at.warning) == 1  # ONE notice, not one per finding
    assert "`fern ##gl ##as`" in said[0]  # a code span: shown as typed, no escapes
    assert "`##` marks a piece glued to the one before it" in said[0]


def test_french_gets_its_findings_in_one_notice(bundled):
    at = open_app("explorer", text="Le café est très chaud à Paris.")
    assert len(language_warnings(at)) == 1 and len(at.warning) == 1


@pytest.mark.parametrize("page", ["explorer", "head_view"])
def test_the_masked_lm_notice_appears_once_per_page(bundled, page):
    at = open_app(page, text="I saw the man with a telescope.")
    survives(at)
    shown = [e.value for kind in ("caption", "info", "warning", "markdown")
             for e in getattr(at, kind) if "masked-LM head (the" in e.value]
    assert len(shown) == 1
