"""What the tokenizer does to a text's language is said above the charts: accents stripped by an
uncased model, and words it cannot read at all. English gets no warning."""

import pytest

from testkit.apptest import open_app, survives


def warnings(at) -> str:
    return " | ".join(w.value for w in at.warning)


@pytest.mark.parametrize("page", ["explorer", "all_heads", "head_lab", "inside_mha"])
def test_french_loses_its_accents_and_the_page_says_so(bundled, page):
    at = open_app(page, text="Le café est très chaud à Paris.")
    survives(at)
    said = warnings(at)
    assert "drops accents" in said and "“café” as “cafe”" in said and "“très” as “tres”" in said
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


def test_plain_english_gets_no_warning_only_a_note_on_capitals(bundled):
    at = open_app("explorer", text="The cat sat on the mat.")
    survives(at)
    assert not at.warning
    assert any("uncased" in c.value for c in at.caption)
    one_emoji = open_app("explorer", text="The cat sat on the mat 😀 today.")
    assert not one_emoji.warning  # 1 unknown word of 8: a caption, not a warning
    assert any("token(s) are `[UNK]`" in c.value for c in one_emoji.caption)
