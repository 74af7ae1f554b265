"""Property-based hostile treebanks: arbitrary CoNLL-U-like bytes and valid trees of arbitrary
words, read by mha_core.treebank (many examples, fast) and uploaded to the What heads learn
page (fewer). The reader returns trees or raises TreebankError, nothing else; the page shows a
table or a message, never an exception, and no user text becomes HTML (sandboxed, survives)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mha_core.treebank import TreebankError, read_conllu
from testkit.apptest import Sessions, messages, sandboxed, survives
from tests.fuzz.test_fuzz_pages import PIECES, fuzz

FIELD = st.one_of(st.sampled_from(["_", "0", "1", "2", "3", "1-2", "2.1", "root", "det",
                                   "nsubj:pass", "punct", "", "-1", "9" * 30, "SpaceAfter=No"]),
                  st.text(max_size=6))
LINE = st.one_of(st.lists(FIELD, min_size=1, max_size=12).map("\t".join),
                 st.sampled_from(["", "# sent_id = a", "# text = <b>x</b>", "#", "# =", "\t"]),
                 st.text(max_size=20))
RAW = st.one_of(st.lists(LINE, max_size=25).map("\n".join).map(str.encode),
                st.binary(max_size=200))
WORD = st.one_of(st.sampled_from(PIECES), st.text(min_size=1, max_size=8).filter(
    lambda w: "\t" not in w and "\n" not in w and "\r" not in w and w.strip() == w and w))
RELATION = st.sampled_from(["nsubj", "obj", "det", "case", "nmod:poss", "<i>x", "punct", "dep"])


@st.composite
def tree(draw):
    """A valid sentence: words, and heads that form a tree (each word attaches to one placed
    before it in a random order; the first placed is the root)."""
    n = draw(st.integers(1, 9))
    order = draw(st.permutations(range(1, n + 1)))
    heads = {order[0]: 0}
    for k, w in enumerate(order[1:], start=1):
        heads[w] = draw(st.sampled_from(order[:k]))
    rows = []
    for i in range(1, n + 1):
        rel = "root" if heads[i] == 0 else draw(RELATION)
        rows.append(f"{i}\t{draw(WORD)}\t_\t_\t_\t_\t{heads[i]}\t{rel}\t_\t_")
    return "\n".join(rows)


TREEBANK = st.lists(tree(), min_size=1, max_size=4).map(lambda s: ("\n\n".join(s) + "\n")
                                                        .encode())


@fuzz(300)
@given(data=st.one_of(RAW, TREEBANK))
def test_reader_returns_trees_or_says_why(data):
    try:
        sentences = read_conllu(data)
    except TreebankError as e:
        assert str(e) and (e.line is None or e.line >= 1)
        return
    for s in sentences:
        W = len(s.words)
        assert W == len(s.heads) == len(s.deprels) and sum(h == 0 for h in s.heads) == 1
        assert all(0 <= h <= W for h in s.heads)


@pytest.fixture(scope="module")
def upload_page(bundled):
    at = Sessions()("what_heads_learn")
    at.selectbox(key="wh_treebank").set_value("Upload a .conllu file").run()
    return at


@fuzz(40)
@given(data=st.one_of(RAW, TREEBANK))
def test_fuzz_uploads(upload_page, data):
    at = upload_page
    at.file_uploader(key="wh_upload").set_value(("fuzz.conllu", data, "text/plain"))
    with sandboxed():
        at.run()
        survives(at)
        if "wh_min_arcs_0" in [w.key for w in at.number_input]:
            at.number_input(key="wh_min_arcs_0").set_value(1).run()
            survives(at)
    assert at.get("plotly_chart") or messages(at)
