"""Reading CoNLL-U: what is skipped, what is an error (with its line and reason), and the
hand-made sample treebank checked as UD trees."""

import random

import pytest

from mha_core.treebank import (
    DEFAULT_TREEBANK,
    MAX_UPLOAD_WORDS,
    TreebankError,
    check_tree,
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


# --- bounded work: the tree check is linear, uploads are capped -------------------------------

class CountingHeads(list):
    """A list of heads that counts how often it is read."""
    reads = 0

    def __getitem__(self, i):
        CountingHeads.reads += 1
        return super().__getitem__(i)


def chain(n: int) -> str:
    """One sentence whose word i has HEAD i+1 and the last word is the root: the deepest tree."""
    return "".join(row(i, "w", i + 1 if i < n else 0, "dep" if i < n else "root") + "\n"
                   for i in range(1, n + 1))


def test_tree_check_reads_each_head_once_on_a_40k_word_chain():
    heads = CountingHeads(range(2, 40_001))
    heads.append(0)
    CountingHeads.reads = 0
    check_tree(heads, list(range(1, 40_001)))
    assert CountingHeads.reads <= 40_000  # the old walk from every word read ~8e8


def reaches_root(heads, i):
    """The definition: following the heads from word i gets to 0 within len(heads) steps."""
    for _ in range(len(heads) + 1):
        if i == 0:
            return True
        i = heads[i - 1]
    return False


def test_tree_check_agrees_with_walking_every_word_to_the_root():
    rng = random.Random(0)
    for _ in range(2000):
        W = rng.randint(1, 7)
        heads = [rng.randint(0, W) for _ in range(W)]
        tree = all(reaches_root(heads, i) for i in range(1, W + 1))
        try:
            check_tree(heads, list(range(1, W + 1)))
            assert tree, heads
        except TreebankError:
            assert not tree, heads


@pytest.mark.timeout(60)  # a quadratic walk takes ~53 s of CPU here; the linear one, < 1 s
def test_a_40k_word_chain_tree_is_read_without_caps():
    (s,) = read_conllu(chain(40_000))
    assert len(s.words) == 40_000 and s.heads[-1] == 0


def test_upload_caps_are_stated_in_the_message():
    with pytest.raises(TreebankError, match="limited to 1,000 words") as e:
        read_conllu(chain(40_000), max_words=MAX_UPLOAD_WORDS)
    assert e.value.line == 1 and "40,000 word lines" in str(e.value)
    read_conllu(chain(1_000), max_words=MAX_UPLOAD_WORDS)  # at the cap: read
    many = "\n\n".join([row(1, "a", 0, "root")] * 4) + "\n"
    assert len(read_conllu(many, max_sentences=4)) == 4
    with pytest.raises(TreebankError, match="more than 3 sentences") as e:
        read_conllu(many, max_sentences=3)
    assert e.value.line == 7
