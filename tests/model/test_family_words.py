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
    return request.param, mha_core.load_bert(str(save_tiny_family(
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
    assert not any(t.startswith(("Ġ", "▁")) and len(t) > 1 for t in res.tokens)
    specials = [t for t, s in zip(res.tokens, res.special) if s]
    assert specials == [t for t in raw if t in bert.tokenizer.all_special_tokens]
    assert specials[0] == bert.tokenizer.cls_token and specials[-1] == bert.tokenizer.sep_token
    words = [w for w, g in zip(labels, groups) if not res.special[g[0]]]
    assert words[:3] == ["The", "animal", "didn't" if name in ("albert", "deberta") else "didn"]
    if name in ("roberta", "modernbert"):  # <s> A </s></s> B </s>: two separators between
        assert raw.count("</s>") == 3 and res.special == [t in ("<s>", "</s>") for t in raw]
    assert res.attentions.shape[-1] == len(raw)
