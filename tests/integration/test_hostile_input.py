"""Hostile input on every page, through the whole app (app.py's frame, AppTest).

1. Property-based: hypothesis feeds arbitrary unicode (and pieces known to break things) into
   every text box of every page: the sidebar's sentence, the toy words, the corpus lines, the
   two readings. No example may leave an exception element, render HTML from user text, start
   a process, write a file or read one outside the project and Python (sandboxed()).
2. A fixed list of known-nasty inputs and links, each with the message it must get.

HEADSCOPE_FUZZ_EXAMPLES scales the number of examples (default: 360 over the six pages).
Under CI=true the examples are derandomised, so a run is repeatable.
"""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pages import common
from tests.conftest import CI, save_tiny_bert
from tests.integration.explorer_helpers import axis_tokens, charts
from tests.integration.frame import (
    frame_mode,
    messages,
    open_app,
    sandboxed,
    shown_page,
    survives,
)

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


class Sessions:
    """One app session per page, kept across hypothesis examples (a new one costs ~1 s)."""

    def __init__(self):
        self.open = {}

    def __call__(self, page):
        if page not in self.open:
            with frame_mode():
                self.open[page] = open_app(page)
        return self.open[page]

    def run(self, page, **values):
        at = self(page)
        for key, value in values.items():
            widget = at.text_area(key=key) if key in ("text", "corpus_lines") \
                else at.text_input(key=key)
            widget.set_value(value)
        with frame_mode(), sandboxed():
            at.run()
        assert shown_page(at) == page
        survives(at)
        return at


@pytest.fixture(scope="module")
def sessions(bundled):
    s = Sessions()
    with frame_mode():
        corpus = s("all_heads")
        corpus.radio(key="corpus_source").set_value("My own lines").run()
        corpus.text_area(key="corpus_lines").set_value("one line").run()
        corpus.toggle(key="corpus_on").set_value(True).run()
    return s


@fuzz(100)
@given(text=TEXT)
def test_fuzz_explorer(sessions, text):
    sessions.run("explorer", text=text)


@fuzz(60)
@given(text=TEXT, toy=TEXT)
def test_fuzz_inside_mha(sessions, text, toy):
    sessions.run("inside_mha", text=text, toy_text=toy[:200])  # the box takes 200 characters


@fuzz(30)
@given(text=TEXT)
def test_fuzz_training_lab(sessions, text):
    sessions.run("training_lab", text=text)


@fuzz(60)
@given(text=TEXT, lines=TEXT)
def test_fuzz_all_heads_and_corpus_mode(sessions, text, lines):
    at = sessions.run("all_heads", text=text, corpus_lines=lines)
    if any(line.strip() for line in lines.splitlines()):  # the corpus toggle is shown
        if not at.toggle(key="corpus_on").value:  # (an empty box before dropped its state)
            at.toggle(key="corpus_on").set_value(True)
            at = sessions.run("all_heads")
        ran = [c for c in at.get("plotly_chart") if c.proto.id.endswith("-corpus_grid")]
        assert ran or "None of these lines has words" in messages(at)


@fuzz(30)
@given(text=TEXT)
def test_fuzz_head_lab(sessions, text):
    sessions.run("head_lab", text=text)


@fuzz(80)
@given(a=TEXT, b=TEXT, focus=st.one_of(st.just("with"), TEXT))
def test_fuzz_two_readings(sessions, a, b, focus):
    sessions.run("two_readings", tr_a=a[:2000], tr_b=b[:2000], tr_focus=focus[:60])


# --- the fixed list ----------------------------------------------------------------------------

TEXT_PAGES = ("explorer", "inside_mha", "all_heads", "head_lab")  # pages that read the sentence
LIMIT = "more than this model's limit of 512"
NOTHING = "nothing in this text but [CLS] and [SEP]"
FIXED = {  # input: what every text page must say (None: it just works, with charts)
    "x" * 10_000: "1 token(s) are `[UNK]`",  # 10,000 characters, one word too long to split
    "word " * 2_000: LIMIT,
    " " * 40: "Type a sentence",
    "\n\t \u3000 ": "Type a sentence",
    "[SEP]": "typed as text",
    "[CLS] [SEP] [MASK]": "`[CLS]`, `[MASK]`, `[SEP]` typed as text",
    "\u200b\u200c\u200d\ufeff\u2060": NOTHING,
    "\x00\x01\x02\x07\x08\x1b\x7f": NOTHING,
    "a\x00b\x1bc": None,
    "Hello мир 世界 مرحبا שלום नमस्ते 😀": None,
    "</script><script>alert(1)</script>": None,
    "javascript:alert(document.cookie)": None,
}


@pytest.mark.parametrize("text", list(FIXED), ids=[repr(t[:12]) for t in FIXED])
def test_fixed_hostile_text_on_every_page(sessions, bundled, text):
    want = FIXED[text]
    for page in TEXT_PAGES:
        at = sessions.run(page, text=text)
        said = messages(at)
        if want is None:
            assert "could not read" not in said and at.get("plotly_chart"), (page, said)
        else:
            assert want in said, (page, said)
    # The Explorer shows the text's own tokens, literally (escaped for plotly)
    at = sessions.run("explorer", text=text)
    if at.get("plotly_chart"):
        tokens = bundled.encode(text).tokens
        assert axis_tokens(charts(at)["grid"]["data"][0]["x"]) == tokens


def test_long_text_says_how_long(sessions):
    at = sessions.run("explorer", text="word " * 2_000)
    assert "This text has 2002 tokens, more than this model's limit of 512" in messages(at)
    assert len(charts(at)["grid"]["data"][0]["x"]) == 512


def test_two_readings_hostile_pair(sessions):
    at = sessions.run("two_readings", tr_a="\u200b\x00", tr_b="I saw the man.", tr_focus="with")
    assert "nothing in sentence A but [CLS] and [SEP]" in messages(at)
    at = sessions.run("two_readings", tr_a="I saw </script> with x", tr_b="javascript: with y",
                      tr_focus="with")
    assert at.get("plotly_chart") and not at.warning


@pytest.mark.parametrize("page", ["explorer", "all_heads", "head_lab", "training_lab"])
def test_nonsense_links_on_every_page(bundled, tmp_path, spy_loader, page):
    """A link's model must be one the server offers: a real checkpoint directory named in the
    link is never loaded. Out-of-range numbers are clamped, a huge text is cut, with messages."""
    real_dir = save_tiny_bert(tmp_path / "not-offered")
    with frame_mode(), sandboxed():
        at = open_app(page, model=str(real_dir), layer="99", head="-1", focus="\x00",
                      text="huge " * 5_000)
        survives(at)
    said = messages(at)
    assert "does not offer" in said and str(real_dir) not in said
    assert f"longer than {common.MAX_CHARS:,} characters" in said
    assert at.selectbox(key="model").value == common.BUNDLED
    assert all(source in (None, "bundled") for source in spy_loader), spy_loader
    if page == "explorer":
        assert "layer 99 is outside 1–6" in said and "head -1 is outside 1–12" in said
        assert "focus token is not in this sentence" in said
        assert at.slider(key="layer").value == 6 and at.selectbox(key="head").value == 1


@pytest.mark.parametrize("focus", ["#²", "#" + "9" * 5_000, "#-1", "#٣", "#"])
def test_link_numbers_that_are_not_numbers(bundled, focus):
    with frame_mode():
        at = open_app(layer="²", head="9" * 5_000, focus=focus)
        survives(at)
    said = messages(at)
    assert "layer is not a number" in said and "head is not a number" in said
    assert "focus token is not in this sentence" in said
    assert np.isfinite(at.slider(key="layer").value)
