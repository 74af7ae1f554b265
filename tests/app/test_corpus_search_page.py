"""The Corpus search page (AppTest, inside the real frame): its table against a brute-force
cosine ranking computed here from bert.attend of every corpus line, user text shown literally,
and bad corpora and links with clear messages."""

import re

import numpy as np
import pytest

from headscope.ui.labels import visible
from headscope.ui.presets import EXAMPLE_LINES
from testkit.apptest import messages, open_app, survives

EXAMPLE_TEXT = "I saw the man with a telescope."


def table(at):
    return at.get("table")[0].value


def plain(cell: str) -> str:
    """A table cell as a reader sees it: markdown's backslash escapes and bold removed."""
    cell = re.sub(r"^\*\*(.*)\*\*$", r"\1", cell)
    return re.sub(r"\\(.)", r"\1", cell)


def token_box(at):
    return next(s for s in at.selectbox if s.key.startswith("cs_token_"))


def brute_force(bert, lines, query, layer):
    """(cosine, line, position) of every non-special token of every line, best first."""
    q = query / np.linalg.norm(query)
    found = []
    for i, line in enumerate(lines):
        res = bert.attend(line, max_length=128)
        for t, special in enumerate(res.special):
            if not special:
                v = res.hidden_states[layer + 1][t].numpy().astype(np.float64)
                found.append((float(v @ q / np.linalg.norm(v)), i, t, res))
    return sorted(found, key=lambda x: -x[0])


@pytest.fixture(scope="module")
def at(bundled):
    at = open_app("corpus_search", text=EXAMPLE_TEXT, layer="2", head="3")
    survives(at)
    return at


def test_matches_and_targets_against_bert_attend(bundled, at):
    res = bundled.attend(EXAMPLE_TEXT)
    pos = res.tokens.index("with")
    token_box(at).set_value(pos).run()
    survives(at)
    lines = EXAMPLE_LINES
    want = brute_force(bundled, lines, res.hidden_states[2][pos].numpy(), 1)[:12]
    got = table(at)
    assert len(got) == 10
    # 3 decimals shown, and the index's int8 vectors move a cosine by ~1e-3 (bounded exactly in
    # tests/model/test_corpus_search.py): matches closer than that may trade places
    near = 3e-3
    np.testing.assert_allclose([float(s) for s in got["similarity"]], [w[0] for w in want[:10]],
                               atol=near)
    assert plain(got["token"][0]) == "with" and float(got["similarity"][0]) == pytest.approx(1)
    for row in got.itertuples(index=False):
        shown_text = plain(row.before) + plain(row.token) + plain(row.after)
        shown = row[4].split(" · ")
        names = [s.rsplit(" ", 1)[0].replace("\\", "") for s in shown]
        weights = [float(s.rsplit(" ", 1)[1]) for s in shown]
        assert any(targets_agree(w, names, weights) for w in want
                   if abs(w[0] - float(row.similarity)) <= near
                   and visible(lines[w[1]]) == shown_text), shown_text


def targets_agree(w, names, weights) -> bool:
    """Whether a brute-force match's top three targets in layer 2, head 3 are the ones shown."""
    _, _, t, line_res = w
    top = line_res.attentions[1, 2, t].topk(3)  # layer 2, head 3 (from 1)
    return (names == [line_res.tokens[i] for i in top.indices.tolist()]
            and np.allclose(weights, top.values.numpy(), atol=0.006))


def test_pasted_lines_stay_text(bundled):
    at = open_app("corpus_search", text="I saw the man with a telescope.")
    at.radio(key="cs_source").set_value("My own lines").run()
    lines = ["<script>alert(1)</script> with **bold** | pipe", "", "\u200b\u200d",
             "a [SEP] b with `code` $x$"]
    at.text_area(key="cs_lines").set_value("\n".join(lines)).run()
    survives(at)
    assert "1 line had no words the model could read and was left out" in messages(at)
    got = table(at)
    shown = {plain(r.before) + plain(r.token) + plain(r.after) for r in got.itertuples()}
    assert shown == {visible(lines[0]), visible(lines[3])}


def test_bad_corpora_and_links_get_messages(bundled):
    at = open_app("corpus_search", layer="99", head="0")
    survives(at)
    said = messages(at)
    assert "layer 99 is outside 1–6" in said and "head 0 is outside 1–12" in said
    at.radio(key="cs_source").set_value("My own lines").run()
    assert "Paste at least one sentence" in messages(at)
    at.text_area(key="cs_lines").set_value("\u200b\n\x00").run()
    survives(at)
    assert "None of these lines has words the model can read" in messages(at)
    at.text_area(key="cs_lines").set_value("\n".join(["the cat sat."] * 2_005)).run()
    survives(at)
    assert "2,005 lines pasted; the first 2,000 are used" in messages(at)
