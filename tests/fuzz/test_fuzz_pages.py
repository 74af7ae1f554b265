"""Property-based hostile input on every page, through the whole app (the frame,
headscope/frame/app.py, through AppTest): hypothesis feeds arbitrary unicode (and pieces known to
break things) into every text box of every page: the sidebar's sentence and second sentence, the toy
words, the corpus lines (All heads and Corpus search), the two readings; and, on a tiny masked-LM
checkpoint the test builds, [MASK]s and [SEP]s anywhere in a pair on the Explorer and the Head lab.
No example may leave an exception element, render HTML from user text, start a process, write a file
or read one outside the project and Python (sandboxed()).

HEADSCOPE_FUZZ_EXAMPLES scales the number of examples (default: 360 over the pages; the Head
view's, pairs', corpus search's, masks' and What heads learn's come on top; uploaded treebanks:
tests/fuzz/test_fuzz_treebank.py).
Under CI=true the examples are derandomised, so a run is repeatable.
"""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headscope.ui.guards import MAX_CHARS
from testkit.apptest import Sessions, component, messages
from testkit.models import save_tiny_mlm_bert
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


MASKY = st.lists(st.one_of(st.sampled_from(["[MASK]", "[SEP]", "[MASK] " * 10, "the", "cat",
                                            " ", "word " * 40]), st.text(max_size=4)),
                 max_size=12).map("".join)


@pytest.fixture(scope="module")
def mlm_sessions(tmp_path_factory):
    """Sessions on a tiny masked-LM checkpoint the test builds (its limit is 64 tokens, so a
    [MASK] past the cut is easy to reach)."""
    path = save_tiny_mlm_bert(tmp_path_factory.mktemp("fuzz-mlm") / "tiny-mlm")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HEADSCOPE_MODELS", f"fuzz-mlm={path}")
        yield Sessions(model="fuzz-mlm")


@fuzz(100)
@given(text=TEXT, pair=st.one_of(st.just(""), TEXT))
def test_fuzz_explorer(sessions, text, pair):
    sessions.run("explorer", text=text, pair=pair)


@fuzz(60)
@given(text=st.one_of(MASKY, TEXT), pair=st.one_of(st.just(""), MASKY))
def test_fuzz_masks_on_a_masked_lm_checkpoint(mlm_sessions, text, pair):
    at = mlm_sessions.run("explorer", text=text, pair=pair)
    boxes = [s for s in at.selectbox if s.label == "Word to mask"]
    if boxes and len(boxes[0].options) > 1:  # mask the last word the box offers
        last = boxes[0].options[-1]  # "B · 7: cat" or "7: cat": the position comes first
        boxes[0].set_value(int(last.split(":")[0].split(" · ")[-1]))
        mlm_sessions.run("explorer")
    mlm_sessions.run("head_lab", text=text, pair=pair)


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


@fuzz(40)
@given(text=TEXT)
def test_fuzz_head_view(sessions, text):
    """The Head view page: the component's payload carries the text's own tokens as data."""
    at = sessions.run("head_view", text=text)
    sent = component(at, "hv_lines")
    if sent is not None:
        assert sent["tokens"] == sessions.bert.encode(text[:MAX_CHARS]).tokens


@fuzz(30)
@given(text=TEXT, pair=st.one_of(st.just(""), TEXT))
def test_fuzz_head_lab(sessions, text, pair):
    sessions.run("head_lab", text=text, pair=pair)


@fuzz(40)
@given(text=TEXT, lines=TEXT)
def test_fuzz_corpus_search(sessions, text, lines):
    at = sessions("corpus_search")
    if at.radio(key="cs_source").value != "My own lines":  # the pasted lines are fuzzed
        at.radio(key="cs_source").set_value("My own lines").run()
    sessions.run("corpus_search", text=text, cs_lines=lines)


@fuzz(80)
@given(a=TEXT, b=TEXT, focus=st.one_of(st.just("with"), TEXT))
def test_fuzz_two_readings(sessions, a, b, focus):
    sessions.run("two_readings", tr_a=a[:2000], tr_b=b[:2000], tr_focus=focus[:60])


@fuzz(40)
@given(text=TEXT, find=TEXT)
def test_fuzz_what_heads_learn(sessions, text, find):
    at = sessions("what_heads_learn")
    if not at.toggle(key="wh_qk_on").value:  # the query/key space's token box is fuzzed too
        at.toggle(key="wh_qk_on").set_value(True).run()
    at = sessions.run("what_heads_learn", text=text, wh_qk_find=find[:60])
    assert "wh_matrix" in [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")]

