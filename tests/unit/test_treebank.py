"""Reading CoNLL-U: what is skipped, what is an error (with its line and reason), and the
hand-made sample treebank checked as UD trees."""

import pytest

from mha_core.treebank import (
    DEFAULT_TREEBANK,
    TreebankError,
    find_sentences,
    read_conllu,
    read_treebank,
)

# The 37 universal relations of UD v2 and the English subtypes the sample uses
UD_RELATIONS = set("""acl advcl advmod amod appos aux case cc ccomp clf compound conj cop csubj
dep det discourse dislocated expl fixed flat goeswith iobj list mark nmod nsubj nummod obj obl
orphan parataxis punct reparandum root vocative xcomp""".split())
ENGLISH_SUBTYPES = {"nmod:poss", "obl:unmarked", "obl:agent", "aux:pass", "nsubj:pass",
                    "acl:relcl", "compound:prt"}


def row(i, form, head, rel, upos="_"):
    return f"{i}\t{form}\t_\t{upos}\t_\t_\t{head}\t{rel}\t_\t_"


GOOD = "\n".join([
    "# sent_id = one",
    "# text = John's dog barked.",
    row(1, "John", 3, "nmod:poss"), row(2, "'s", 1, "case"), row(3, "dog", 4, "nsubj"),
    row(4, "barked", 0, "root"), row(5, ".", 4, "punct"),
    "",
    "# sent_id = two",
    "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_",
    row(1, "do", 3, "aux"), row(2, "n't", 3, "advmod"), row(3, "go", 0, "root"),
    "3.1\tgone\t_\t_\t_\t_\t_\t_\t3:conj\t_",
]) + "\n"


def test_words_heads_and_universal_relations():
    one, two = read_conllu(GOOD)
    assert one.sent_id == "one" and one.text == "John's dog barked."
    assert one.words == ("John", "'s", "dog", "barked", ".")
    assert one.heads == (3, 1, 4, 0, 4)
    assert one.deprels[0] == "nmod:poss" and one.relations[0] == "nmod"
    # the multiword range 1-2 and the empty node 3.1 are not words
    assert two.words == ("do", "n't", "go") and two.heads == (3, 3, 0)
    assert two.line == 9


def test_bytes_with_a_byte_order_mark():
    (one, _) = read_conllu(b"\xef\xbb\xbf" + GOOD.encode())
    assert one.words[0] == "John"


def test_find_sentences_ignores_case_and_spacing():
    sentences = read_conllu(GOOD)
    assert find_sentences(sentences, "john's  DOG barked .") == [sentences[0]]
    assert find_sentences(sentences, "do n't go") == [sentences[1]]
    assert find_sentences(sentences, "") == [] and find_sentences(sentences, "x") == []


def lines(*rows):
    return "\n".join(rows) + "\n"


@pytest.mark.parametrize("text, line, reason", [
    (lines(row(1, "a", 0, "root"), "2\tb\t_\t_\t_\t_\t1\tdet"), 2, "expected 10 tab-separated"),
    (lines(row(1, "a", 0, "root"), row(2, "b", "x", "det")), 2, "Failed parsing field 'head'"),
    (lines(row(1, "a", 0, "root"), row("z", "b", 1, "det")), 2, "is not a valid ID"),
    (lines(row(1, "a", 0, "root"), row(3, "b", 1, "det")), 2, "expected 2, found 3"),
    (lines(row(1, "a", 0, "root"), row(2, "b", 7, "det")), 2, "outside the sentence (0 or 1–2)"),
    (lines(row(1, "a", 0, "root"), row(2, "b", 2, "det")), 2, "its own HEAD"),
    (lines(row(1, "a", 0, "root"), row(2, "b", "_", "det")), 2, "has no HEAD"),
    (lines(row(1, "a", 0, "root"), row(2, "b", 1, "_")), 2, "has no DEPREL"),
    (lines("# x", row(1, "a", 0, "root"), row(2, "b", 0, "root")), 1, "exactly one word with "
                                                                      "HEAD 0, this one has 2"),
    (lines(row(1, "a", 2, "det"), row(2, "b", 3, "det"), row(3, "c", 2, "x"),
           row(4, "d", 0, "root")), 1, "form a cycle"),
    (lines(row(1, "a", 0, "root"), "", "", row(1, "b", 0, "root"), "1 b _ _ _ _ 0 root _ _"),
     5, "expected 10 tab-separated"),
])
def test_malformed_lines_are_named_with_their_reason(text, line, reason):
    with pytest.raises(TreebankError) as e:
        read_conllu(text)
    assert e.value.line == line and reason in str(e.value), str(e.value)
    assert str(e.value).startswith(f"line {line}: ")


@pytest.mark.parametrize("data, reason", [
    ("", "the file is empty"),
    ("\n\n  \n", "the file is empty"),
    (b"", "the file is empty"),
    ("# only a comment\n", "no syntactic words"),
    ("1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n\n3-4\tcan't\t_\t_\t_\t_\t_\t_\t_\t_\n",
     "only comments, multiword-token ranges"),
    (b"1\tcaf\xe9\t_\t_\t_\t_\t0\troot\t_\t_\n", "not UTF-8"),
])
def test_files_without_trees(data, reason):
    with pytest.raises(TreebankError) as e:
        read_conllu(data)
    assert reason in str(e.value)


def test_large_files_are_refused_before_reading(tmp_path):
    big = tmp_path / "big.conllu"
    big.write_bytes(b"#" * 2048)
    with pytest.raises(TreebankError, match="big.conllu is 2.0 KB, more than the 1.0 KB allowed"):
        read_treebank(big, max_bytes=1024)


# --- the hand-made sample ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def sample():
    return read_treebank(DEFAULT_TREEBANK)


def test_sample_is_large_enough_and_ids_are_unique(sample):
    assert len(sample) >= 120
    assert len({s.sent_id for s in sample}) == len(sample)


def test_sample_sentences_are_ud_trees(sample):
    for s in sample:
        W = len(s.words)
        assert sum(h == 0 for h in s.heads) == 1, s.sent_id
        assert all(0 <= h <= W and h != i for i, h in enumerate(s.heads, start=1)), s.sent_id
        for i in range(1, W + 1):  # follow the heads up: the root within W steps, no cycle
            j, steps = i, 0
            while j and steps <= W:
                j, steps = s.heads[j - 1], steps + 1
            assert j == 0, (s.sent_id, i)
        for rel, deprel, h in zip(s.relations, s.deprels, s.heads):
            assert rel in UD_RELATIONS and (":" not in deprel or deprel in ENGLISH_SUBTYPES), \
                (s.sent_id, deprel)
            assert (rel == "root") == (h == 0), s.sent_id


def test_sample_text_is_its_words(sample):
    """`# text` spells the words in order (SpaceAfter=No before punctuation, 's and n't)."""
    for s in sample:
        assert "".join(s.text.split()) == "".join(s.words), s.sent_id


def test_sample_has_both_telescope_readings(sample):
    found = find_sentences(sample, "I saw the man with a telescope.")
    assert len(found) == 2
    telescope = {s.sent_id: (s.heads[6], s.deprels[6]) for s in found}
    assert sorted(telescope.values()) == [(2, "obl"), (4, "nmod")]  # "saw" is 2, "man" is 4
    for s in found:
        assert s.words == ("I", "saw", "the", "man", "with", "a", "telescope", ".")
        assert s.heads[4] == 7 and s.deprels[4] == "case"  # "with" attaches to the noun
