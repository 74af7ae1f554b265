"""docs/teaching.md: every share link opens its view (AppTest through the whole app), and every
number the guide quotes is what the bundled model computes."""

import re
from urllib.parse import parse_qsl, urlsplit

import numpy as np
import pytest

from mha_core import ablation as ab
from mha_core import metrics as mt
from mha_core import toy
from mha_core.neuron import real_steps
from testkit.apptest import component, messages, open_app, shown_page, survives
from testkit.server import ROOT

GUIDE = (ROOT / "docs" / "teaching.md").read_text()
LINKS = re.findall(r"\]\((http://localhost:8501[^)\s]*)\)", GUIDE)
TELESCOPE = "I saw the man with a telescope."
NUMBER_WORDS = {3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}
ORDINAL = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}


def in_guide(phrase: str):
    """The guide says this (line breaks in the markdown count as spaces)."""
    assert phrase in " ".join(GUIDE.split()), phrase


def test_the_guide_has_three_lessons_with_links():
    assert len(re.findall(r"^## Lesson \d: .* \(15 min\)$", GUIDE, flags=re.M)) == 3
    assert len(LINKS) >= 10


@pytest.mark.parametrize("link", LINKS)
def test_every_link_opens_its_view(bundled, link):
    url = urlsplit(link)
    page = url.path.strip("/") or "explorer"
    query = dict(parse_qsl(url.query, keep_blank_values=True))
    at = open_app(page, **query)
    survives(at)
    assert shown_page(at) == page
    assert "The link" not in messages(at)  # nothing in the link was ignored or clamped
    if "text" in query:
        box = at.text_input if query.get("present") == "1" else at.text_area
        assert box(key="text").value == query["text"]
    if query.get("present") == "1":  # presentation mode: the sentence box is above the page
        assert not at.sidebar.text_area and at.button(key="present_leave")
    if page == "explorer":  # the view the link names, imposed on the component (from 0)
        imposed = component(at, "ex_view")["impose"]
        tokens = bundled.attend(query["text"]).tokens
        assert imposed | {"seq": 0} == dict(layer=int(query["layer"]) - 1,
                                            head=int(query["head"]) - 1,
                                            focus=[tokens.index(query["focus"])], seq=0)


def top_target(bert, text, word, layer, head):
    """(the token that `word` attends to most, its weight) in layer/head, numbered from 1."""
    res = bert.attend(text)
    row = res.attentions[layer - 1, head - 1, res.tokens.index(word)]  # (T,)
    return res.tokens[int(row.argmax())], float(row.max())


@pytest.mark.parametrize("text, word, layer, head, says", [
    (TELESCOPE, "with", 2, 3, "**head 3 sends “with” to “{t}”** ({w:.2f}"),
    (TELESCOPE, "with", 2, 10, "**head 10 sends “with” to “{t}”** ({w:.2f})"),
    ("The astronomer saw the man with a telescope.", "with", 2, 10,
     "Layer 2, head 10 still links \"with\" to \"{t}\""),
    ("The animal didn't cross the street because it was too tired.", "it", 4, 2,
     "**Layer 4, head 2 sends “it” to “{t}”** ({w:.2f})"),
])
def test_the_heads_the_guide_names(bundled, text, word, layer, head, says):
    target, weight = top_target(bundled, text, word, layer, head)
    in_guide(says.format(t=target, w=weight))


def test_two_readings_ranks_layer_2_head_10_as_the_guide_says(bundled):
    """Recomputed here by hand: where "with" goes in each sentence (Clark et al.'s merge is the
    identity: every word is one piece), the total variation per head, and the rank."""
    a = "The astronomer saw the man with a telescope."
    b = "The man saw the astronomer with a telescope."
    ra, rb = bundled.attend(a), bundled.attend(b)
    wa, wb = ra.tokens.index("with"), rb.tokens.index("with")
    pa = ra.attentions[:, :, wa].numpy()  # (L, H, T): same words, other order
    pb = rb.attentions[:, :, wb].numpy()
    assert sorted(ra.tokens) == sorted(rb.tokens)  # the same words: nothing is left out
    where = {t: ([i for i, u in enumerate(ra.tokens) if u == t],
                 [i for i, u in enumerate(rb.tokens) if u == t]) for t in set(ra.tokens)}
    tv = 0.5 * sum(np.abs(pa[..., ia].sum(-1) - pb[..., ib].sum(-1))
                   for ia, ib in where.values())  # (L, H): "the" twice is one target
    rank = int((tv > tv[1, 9]).sum()) + 1
    top_a, top_b = ra.tokens[int(pa[1, 9].argmax())], rb.tokens[int(pb[1, 9].argmax())]
    in_guide(f"**Layer 2, head 10 is {ORDINAL[rank]} of 72: “with” goes to “{top_a}” in A and "
             f"to “{top_b}” in B**")


def test_the_single_head_collapses_as_the_guide_says(bundled):
    res = bundled.attend(TELESCOPE)
    single = res.single_head[1]  # layer 2
    assert float(single[:, 0].mean()) > 0.99  # almost all of every row on [CLS]
    in_guide(f"(entropy {float(mt.entropy(single)):.2f} nats)")


def test_the_cost_numbers(bundled):
    one, split, full = (toy.attention_cost(d, 512, 8, 128) for d in ("one", "split", "full"))
    assert one.params == split.params
    in_guide(f"**8 heads of 64 have exactly the parameters of 1 head of 512 ({one.params:,})**")
    in_guide(f"**8 heads of 512 each have {full.params / one.params:.1f}× the parameters "
             f"({full.params:,})**")
    assert split.map_bytes == 8 * one.map_bytes


def test_the_head_lab_numbers(bundled):
    imp = ab.head_importance(bundled, TELESCOPE)  # (L, H)
    curve = ab.pruning_curve(bundled, TELESCOPE, imp)
    can_go = int(np.argmax(curve > 0.05)) - 1
    in_guide(f"**{can_go} of {imp.size} heads can go before the mean change passes 0.05**")
    top6 = np.argsort(-imp.ravel())[:6] // imp.shape[1]  # their layers, from 0
    assert set(top6.tolist()) == {5}
    in_guide("**The six heads that matter most are all in layer 6.**")


def test_the_other_heads_of_layer_2(bundled):
    res = bundled.attend(TELESCOPE)
    rows = res.attentions[1, :, res.tokens.index("with")]  # (H, T): layer 2
    targets = [res.tokens[int(t)] for t in rows.argmax(-1)]  # head h + 1's top target
    assert targets[6] == "saw"
    assert {t for h, t in enumerate(targets) if h + 1 not in (3, 7, 10)} == \
        {"telescope", "a", "[CLS]"}
    in_guide("**Head 7 also picks “saw”; the other heads of layer 2 send it to “telescope”, "
             "“a” or [CLS]**")
    in_guide(f"{NUMBER_WORDS[len(set(targets))]} different targets in twelve heads")


def test_the_shapes_of_one_real_layer(bundled):
    res = bundled.attend(TELESCOPE)
    T = len(res.tokens)
    steps = real_steps(bundled, res, 0, 0, 1)
    shapes = {stage: shape for stage, shape, _ in steps.shapes}
    assert shapes["input x"] == (1, T, 384)
    assert shapes["after the split into heads"] == (1, 12, T, 32)
    assert shapes["scores Q Kᵀ / √d_k"] == (1, 12, T, T)
    assert shapes["after the merge"] == (1, T, 384)
    in_guide("**(1, T, 384), then split into 12 heads of (1, 12, T, 32), the (1, 12, T, T) "
             "scores, and merged back to (1, T, 384)**")


def test_one_head_instead_of_twelve_quotes_the_explorers_sentence(bundled):
    """Step 3's one-head numbers are the ones the Explorer prints under the summed head in
    layer 2 (read from what the page sends its component, not from the file it reads)."""
    at = open_app("explorer", layer="2")
    note = component(at, "ex_view")["notes"][1]  # layer 2's line, from 0
    assert note.startswith("Is one head enough?")
    one, two, four = re.findall(r"(\d+)%", note)[:3]
    best = re.search(r"head alone \(head (\d+)\): none", note).group(1)  # below 0: none
    in_guide(f"reproduces **{one}%** of what the 12 heads write")
    in_guide(f"2 heads of width 192 reproduce {two}% and 4 heads of width 96 {four}%")
    in_guide(f"The best of the 12 real heads alone (head {best}) reproduces none of it")
