"""THE one reading of a sentence pair (mha_core.text.split_pair): a [SEP] typed in a single text
box starts sentence B; every other case is spelled out here."""

import pytest

from mha_core.text import TextPair, split_pair


@pytest.mark.parametrize("text,pair,want", [
    ("I saw him.", None, TextPair("I saw him.", None)),
    ("I saw him. [SEP] He ran.", None, TextPair("I saw him. ", " He ran.", sep_typed=True)),
    ("a[SEP]b", None, TextPair("a", "b", sep_typed=True)),
    ("a [SEP] b [SEP] c", None, TextPair("a ", " b [SEP] c", sep_typed=True, kept_seps=1)),
    ("I saw him. [SEP]  ", None, TextPair("I saw him. ", None, sep_typed=True)),
    ("[SEP] b", None, TextPair("", " b", sep_typed=True)),
    ("a [SEP] b", "c", TextPair("a [SEP] b", "c", kept_seps=1)),
    ("a", "c [SEP] d", TextPair("a", "c [SEP] d", kept_seps=1)),
    ("a", "", TextPair("a", None, blank_pair=True)),
    ("a", " \n", TextPair("a", None, blank_pair=True)),
    ("a [SEP] b", "  ", TextPair("a ", " b", sep_typed=True, blank_pair=True)),
    ("a [sep] b", None, TextPair("a [sep] b", None)),  # the tokenizer matches [SEP] exactly
])
def test_split_pair_cases(text, pair, want):
    assert split_pair(text, pair) == want


@pytest.mark.parametrize("text,pair", [("a [SEP] b [SEP] c", None), ("x [SEP]", None),
                                       ("a", "b"), ("[SEP][SEP]", None), ("a [SEP] b", " ")])
def test_split_is_idempotent(text, pair):
    once = split_pair(text, pair)
    twice = split_pair(once.text, once.pair)
    assert (twice.text, twice.pair) == (once.text, once.pair)


def test_the_parts_are_cut_not_edited():
    text = "  Left side\t[SEP]\u200bright side "
    got = split_pair(text)
    assert got.text + "[SEP]" + got.pair == text


def test_a_one_segment_model_keeps_the_sep():
    assert split_pair("a [SEP] b", allow_pair=False) == TextPair("a [SEP] b", None, kept_seps=1)
    assert split_pair("a <sep> b", sep="<sep>").pair == " b"
