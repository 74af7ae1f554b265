"""Property-based hostile input on every page, through the whole app (app.py's frame, AppTest):
hypothesis feeds arbitrary unicode (and pieces known to break things) into every text box of
every page: the sidebar's sentence, the toy words, the corpus lines, the two readings. No
example may leave an exception element, render HTML from user text, start a process, write a
file or read one outside the project and Python (sandboxed()).

HEADSCOPE_FUZZ_EXAMPLES scales the number of examples (default: 360 over the first six pages;
What heads learn adds its own, among them uploaded treebanks: tests/fuzz/test_fuzz_treebank.py).
Under CI=true the examples are derandomised, so a run is repeatable.
"""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testkit.apptest import Sessions, messages
from tests.conftest import CI

SCALE = float(os.environ.get("HEADSCOPE_FUZZ_EXAMPLES", "360")) / 360
# Pieces that broke (or could break) tokenizers, markdown, HTML, plotly labels and URLs
PIECES = ["[SEP]", "[CLS]", "[MASK]", "[UNK]", "[PAD]", "\u200b", "\u200d", "\ufeff", "\x00",
          "\x1b[31m", "\x7f", "\r\n", "\t", "<script>", "</script>", "javascript:alert(1)",
          "<img src=x onerror=alert(1)>", "😀", "👩‍👩‍👧", "🏳️‍🌈", "我", "שלום", "مرحبا", "\u202e",
          "\u0301", "ﷺ", "ﬁ", "##", "$$x$$", "**", "`", "[a](b)", "&amp;", "{{x}}", "%s",
          "../../etc/passwd", "a" * 50, " "]
TEXT = st.one_of(
    st.text(max_size=60),  # any code points (hypothesis leaves out lone surrogates)
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=12).map("".join),
    st.text(min_size=200, max_size=600),
)


def fuzz(n: int):
    return settings(max_examples=max(1, int(n * SCALE)), deadline=None, derandomize=CI,
                    database=None if CI else settings.default.database, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def sessions(bundled):
    """One session per page; All heads in corpus mode on pasted lines."""
    s = Sessions()
    corpus = s("all_heads")
    corpus.radio(key="ah_corpus_source").set_value("My own lines").run()
    corpus.text_area(key="ah_corpus_lines").set_value("one line").run()
    corpus.toggle(key="ah_corpus_on").set_value(True).run()
    s("what_heads_learn").toggle(key="wh_qk_on").set_value(True).run()  # its token box too
    return s


@fuzz(100)
@given(text=TEXT)
def test_fuzz_explorer(sessions, text):
    sessions.run("explorer", text=text)


@fuzz(60)
@given(text=TEXT, toy=TEXT)
def test_fuzz_inside_mha(sessions, text, toy):
    sessions.run("inside_mha", text=text, im_toy_text=toy[:200])  # the box takes 200 characters


@fuzz(30)
@given(text=TEXT)
def test_fuzz_training_lab(sessions, text):
    sessions.run("training_lab", text=text)


@fuzz(60)
@given(text=TEXT, lines=TEXT)
def test_fuzz_all_heads_and_corpus_mode(sessions, text, lines):
    at = sessions.run("all_heads", text=text, ah_corpus_lines=lines)
    if any(line.strip() for line in lines.splitlines()):  # the corpus toggle is shown
        if not at.toggle(key="ah_corpus_on").value:  # (an empty box before dropped its state)
            at.toggle(key="ah_corpus_on").set_value(True)
            at = sessions.run("all_heads")
        ran = [c for c in at.get("plotly_chart") if c.proto.id.endswith("-ah_corpus_grid")]
        assert ran or "None of these lines has words" in messages(at)


@fuzz(30)
@given(text=TEXT)
def test_fuzz_head_lab(sessions, text):
    sessions.run("head_lab", text=text)


@fuzz(80)
@given(a=TEXT, b=TEXT, focus=st.one_of(st.just("with"), TEXT))
def test_fuzz_two_readings(sessions, a, b, focus):
    sessions.run("two_readings", tr_a=a[:2000], tr_b=b[:2000], tr_focus=focus[:60])


@fuzz(40)
@given(text=TEXT, find=TEXT)
def test_fuzz_what_heads_learn(sessions, text, find):
    at = sessions.run("what_heads_learn", text=text, wh_qk_find=find[:60])
    assert "wh_matrix" in [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")]

