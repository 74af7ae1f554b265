"""Hostile input on every page, through the whole app (the frame, headscope/frame/app.py, through
AppTest): a fixed list of known-nasty inputs and links, each with the message it must get. (The
property-based fuzz of every text box is tests/fuzz/test_fuzz_pages.py. Both are the fuzz tier: make
test-fast leaves them out.)"""

import pytest

from headscope.ui import models
from headscope.ui.guards import MAX_CHARS
from testkit.apptest import (
    charts,
    component,
    components,
    messages,
    open_app,
    sandboxed,
    survives,
)
from testkit.models import save_tiny_bert

# --- the fixed list ----------------------------------------------------------------------------

TEXT_PAGES = ("explorer", "inside_mha", "all_heads", "head_lab", "head_view",
              "corpus_search", "what_heads_learn")  # the pages that read the sentence
PAIR_PAGES = TEXT_PAGES[:-1]  # What heads learn scores single sentences against a treebank
LIMIT = "more than this model's limit of 512"
NOTHING = "nothing in this text but [CLS] and [SEP]"
FIXED = {  # input: what every text page must say (None: it just works, with charts)
    "x" * 10_000: "1 of 1 words (100%)",  # 10,000 characters, one word too long to split: [UNK]
    "word " * 2_000: LIMIT,
    " " * 40: "Type a sentence",
    "\n\t \u3000 ": "Type a sentence",
    "[SEP]": "nothing before the [SEP]",
    "[CLS] [SEP] [MASK]": "`[CLS]`, `[MASK]` typed as text",
    "I saw the man. [SEP] He had a telescope.": "read as the pair separator",
    "I saw the man. [SEP]": "only ends sentence A",
    "a [SEP] b [SEP] c": "1 more [SEP] typed inside a sentence",
    "word " * 300 + "[SEP]" + " more" * 400: "the longer sentence is cut first: A keeps 254 and "
                                             "B keeps 255",
    "[MASK] flies [SEP] fruit [MASK]": "read as the pair separator",
    "[MASK] " * 10: "`[MASK]` typed as text",
    "hi [SEP] \u200b\u200d": "found nothing in sentence B",
    "\u200b [SEP] hello there": "found nothing in sentence A",
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
            assert "could not read" not in said, (page, said)
            assert at.get("plotly_chart") or components(at) or at.get("table"), (page, said)
        else:
            assert want in said, (page, said)
    # The Explorer shows the text's own tokens, literally (raw for the attention component,
    # which writes them with canvas fillText): its session's last run, the loop's, was on this text
    at = sessions("explorer")
    if component(at, "ex_view"):  # every token: the browser draws its window of them
        assert component(at, "ex_view")["tokens"] == bundled.encode(text).tokens


def test_long_text_says_how_long(sessions):
    at = sessions.run("explorer", text="word " * 2_000)
    assert "This text has 2002 tokens, more than this model's limit of 512" in messages(at)
    d = component(at, "ex_view")
    assert len(d["tokens"]) == 512 and len(d["sent"]) == 1  # the 512 kept, one layer at a time


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
    with sandboxed():
        at = open_app(page, model=str(real_dir), layer="99", head="-1", focus="\x00",
                      text="huge " * 5_000)
        survives(at)
    said = messages(at)
    assert "does not offer" in said and str(real_dir) not in said
    assert f"longer than {MAX_CHARS:,} characters" in said
    assert at.selectbox(key="model").value == models.BUNDLED
    assert all(source in (None, "bundled") for source in spy_loader), spy_loader
    if page == "explorer":
        assert "layer 99 is outside 1–6" in said and "head -1 is outside 1–12" in said
        assert "focus token is not in this sentence" in said
        imposed = component(at, "ex_view")["impose"]  # clamped: the last layer, the first head
        assert (imposed["layer"], imposed["head"]) == (5, 0) and "focus" not in imposed


@pytest.mark.parametrize("focus", ["#²", "#" + "9" * 5_000, "#-1", "#٣", "#"])
def test_link_numbers_that_are_not_numbers(bundled, focus):
    at = open_app(layer="²", head="9" * 5_000, focus=focus)
    survives(at)
    said = messages(at)
    assert "layer is not a number" in said and "head is not a number" in said
    assert "focus token is not in this sentence" in said
    imposed = component(at, "ex_view")["impose"]  # nothing from the link: the browser's own
    assert not {"layer", "head", "focus"} & set(imposed)


# --- the second sentence box ---------------------------------------------------------------------

PAIRS = [  # (text, pair, what every text page must say)
    ("I saw the man.", "   ", "The second sentence is blank"),
    ("I saw the man.", "\u200b\x00", "found nothing in sentence B"),
    ("word " * 600, "short one.", "A keeps 506 and B keeps 3"),
    ("a [SEP] b", "c", "1 more [SEP] typed inside a sentence"),
    ("", "only the second", "Type a sentence"),
]


@pytest.mark.parametrize("text,pair,want", PAIRS, ids=[repr(p[1][:8]) for p in PAIRS])
def test_hostile_pairs_on_every_page(sessions, text, pair, want):
    for page in PAIR_PAGES:
        at = sessions.run(page, text=text, pair=pair)
        assert want in messages(at), (page, messages(at))
    sessions.run("explorer", text="I saw the man.", pair="")  # the next test starts clean


MASKS = [  # (text, pair, what the Explorer's masked-word section says)
    ("[MASK] flies like an arrow.", "Fruit flies like a [MASK].", "typed in both sentences"),
    ("[MASK] " * 10, "", "10 [MASK]s typed: predictions are listed for the first 5"),
    ("word " * 600 + "[MASK] [MASK]", "", "2 of the 2 [MASK]s typed are past this model's limit"),
    ("the [MASK] .", "", "need a checkpoint with a masked-LM head"),
]


@pytest.mark.parametrize("text,pair,want", MASKS, ids=[repr(m[0][:10]) for m in MASKS])
def test_hostile_masks_get_clear_messages(sessions, text, pair, want):
    at = sessions.run("explorer", text=text, pair=pair)
    assert want in messages(at), messages(at)
    sessions.run("explorer", text="I saw the man.", pair="")


# --- hostile treebanks (What heads learn's upload) ---------------------------------------------

def conllu(*sentences, sent_id="s"):
    """CoNLL-U text: each sentence a list of (form, head, deprel)."""
    blocks = []
    for k, words in enumerate(sentences):
        rows = [f"# sent_id = {sent_id}{k}"]
        rows += [f"{i}\t{f}\t_\t_\t_\t_\t{h}\t{r}\t_\t_"
                 for i, (f, h, r) in enumerate(words, start=1)]
        blocks.append("\n".join(rows))
    return ("\n\n".join(blocks) + "\n").encode()


HOSTILE_WORDS = [("<b>x</b>", 3, "det"), ("\u202ex", 3, "amod"), ("bark", 0, "root"),
                 ("[SEP]", 3, "<i>rel"), (".", 3, "punct")]
TREEBANKS = {  # upload: what the page must say (None: it scores it, with a table)
    "hostile words": (conllu(HOSTILE_WORDS, sent_id="**x** [a](javascript:alert(1)) "),
                      None),
    "only roots": (conllu(*[[("w", 0, "root")]] * 3001), "the first 3,000 are scored here"),
    "too long": (conllu([("word", 131, "dep")] * 130 + [("end", 0, "root")]),
                 "None of these sentences can be scored: 1 over 128 pieces"),
    "no pieces": (conllu([("\u200b", 2, "dep"), ("bark", 0, "root")],
                         [("dogs", 2, "nsubj"), ("bark", 0, "root")]),
                  "1 sentence left out (over 128 pieces, or a word the tokenizer drops)"),
    "a cycle": (conllu([("a", 2, "dep"), ("b", 1, "dep"), ("c", 0, "root")]),
                "line 2: word 1's HEADs form a cycle"),
    "two roots": (conllu([("a", 0, "root"), ("b", 0, "root")]), "line 1: a sentence needs "
                                                                "exactly one word with HEAD 0"),
    "binary": (bytes(range(256)) * 40, "not UTF-8"),
    "nul bytes": (b"\x00" * 5000, "expected 10 tab-separated columns"),
    "50 MB": (b"1\tx\t_\t_\t_\t_\t0\troot\t_\t_\n" * (50 * 2**20 // 30),
              "uploads are limited to 10 MB"),
}


@pytest.mark.parametrize("name", list(TREEBANKS))
def test_hostile_treebank_uploads(sessions, name):
    data, want = TREEBANKS[name]
    at = sessions("what_heads_learn")
    at.text_area(key="text").set_value("<b>x</b> \u202ex bark [SEP].")
    at.selectbox(key="wh_treebank").set_value("Upload a .conllu file").run()
    at.file_uploader(key="wh_upload").set_value(("x.conllu", data, "text/plain"))
    with sandboxed():
        at.run()
        survives(at)
        if want is None:  # a tiny treebank: report relations from 1 arc on
            at.number_input(key="wh_min_arcs_0").set_value(1).run()
    survives(at)
    said = messages(at).replace("\\", "")
    if want is None:
        assert "could not read" not in said and at.get("plotly_chart"), said
        assert "wh_arcs" in charts(at)  # the typed text is the treebank's sentence: gold arcs
    else:
        assert want in said, said
    at.file_uploader(key="wh_upload").set_value(None)
    at.selectbox(key="wh_treebank").set_value("Hand-made sample (bundled)").run()

