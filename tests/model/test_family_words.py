"""Tokenizers of every kind, built offline (testkit.families.tiny_tokenizer): words grouped as
the tokenizer's own word_ids() groups them, pieces shown without Ġ/▁, <s>/</s> marked special
as [CLS]/[SEP] are, and a pair read as the family reads it (RoBERTa: <s> A </s></s> B </s>)."""

import pytest

import mha_core
from testkit.families import save_tiny_family

TEXT, PAIR = "The animal didn't cross the street.", "I saw the man."


@pytest.fixture(scope="module", params=["roberta", "albert", "electra", "modernbert", "deberta",
                                        "distilbert"])
def loaded(request, tmp_path_factory):
    return request.param, mha_core.load_model(str(save_tiny_family(
        request.param, tmp_path_factory.mktemp(request.param) / request.param)))


def test_words_are_the_tokenizers_own_and_pieces_are_readable(loaded):
    name, bert = loaded
    res = bert.attend(TEXT, PAIR)
    enc = bert.tokenizer(TEXT, PAIR)
    raw = bert.tokenizer.convert_ids_to_tokens(enc["input_ids"])
    assert res.encoded.input_ids.tolist() == enc["input_ids"]
    labels, groups = res.words()
    expected = {}
    for t, (s, w) in enumerate(zip(enc.sequence_ids(), enc.word_ids())):
        expected.setdefault((s, w) if w is not None else ("special", t), []).append(t)
    assert sorted(groups) == sorted(expected.values())
    # tokens as the tokenizer gives them (as transformers and bertviz do), readable labels beside
    assert res.tokens == raw and len(res.labels) == len(raw)
    assert not any(t.startswith(("Ġ", "▁")) and len(t) > 1 for t in res.labels)
    if name in ("roberta", "modernbert"):  # BPE: a word start is marked in tokens, not labels
        assert "Ġan" in res.tokens and "an" in res.labels
    specials = [t for t, s in zip(res.labels, res.special) if s]
    assert specials == [t for t in raw if t in bert.tokenizer.all_special_tokens]
    assert specials[0] == bert.tokenizer.cls_token and specials[-1] == bert.tokenizer.sep_token
    words = [w for w, g in zip(labels, groups) if not res.special[g[0]]]
    assert words[:3] == ["The", "animal", "didn't" if name in ("albert", "deberta") else "didn"]
    if name in ("roberta", "modernbert"):  # <s> A </s></s> B </s>: two separators between
        assert raw.count("</s>") == 3 and res.special == [t in ("<s>", "</s>") for t in raw]
    assert res.attentions.shape[-1] == len(raw)


def test_a_typed_separator_is_the_familys_own(loaded):
    """Typing the family's separator in one box reads as the pair the tokenizer builds from two
    boxes: "A [SEP] B" for BERT-like families, "A </s></s> B" (or "</s> </s>") for RoBERTa and
    ModernBERT, whose second </s> is part of the separator, not a token of sentence B."""
    name, bert = loaded
    sep = bert.tokenizer.sep_token
    expected = bert.tokenizer(TEXT, PAIR)["input_ids"]
    between = bert.tokenizer("a", "b").sequence_ids()
    n = between.index(1) - max(i for i, s in enumerate(between) if s == 0) - 1
    assert n == (2 if name in ("roberta", "modernbert") else 1)
    enc = bert.encode(f"{TEXT}{sep * n}{PAIR}")
    assert enc.source.sep_typed and enc.source.kept_seps == 0
    assert enc.input_ids.tolist() == expected
    spaced = bert.encode(f"{TEXT} {' '.join([sep] * n)} {PAIR}").source  # spaces kept as typed
    assert (spaced.text.strip(), spaced.pair.strip(), spaced.kept_seps) == (TEXT, PAIR, 0)


def test_the_pair_notice_names_the_familys_reading(loaded):
    from mha_core.text import pair_reading

    name, bert = loaded
    cls, sep = bert.tokenizer.cls_token, bert.tokenizer.sep_token
    between = sep + sep if name in ("roberta", "modernbert") else sep
    assert pair_reading(bert.tokenizer) == f"{cls} A {between} B {sep}"
