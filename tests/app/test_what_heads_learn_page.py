"""AppTest of the What heads learn page: the table and matrix are the scores of the chosen
treebank, the arcs drawn over a sentence are the best head's argmaxes (recomputed here from
bert.attend with the Explorer's word merge), gold arcs follow the chosen reading, uploads and
operator treebanks give clear messages, the weight-vs-norm chart and the query/key space draw,
and a bert-base-shaped checkpoint works."""

import numpy as np
import pytest

from headscope.ui import treebanks as tb
from mha_core import syntax as sx
from mha_core.treebank import DEFAULT_TREEBANK, read_treebank
from testkit.apptest import array, chart, charts, messages, open_app, survives

TELESCOPE = "I saw the man with a telescope."


@pytest.fixture(scope="module")
def sample():
    return read_treebank(DEFAULT_TREEBANK)


@pytest.fixture(scope="module")
def page(bundled):
    at = open_app("what_heads_learn", text=TELESCOPE)
    survives(at)
    return at


def table(at):
    (df,) = [d.value for d in at.dataframe if "relation" in d.value.columns]
    return df


def test_table_is_the_scores_of_the_sample(page, bundled, sample):
    rows = sx.score_treebank(bundled, sample).rows(min_arcs=25)  # the sample's default
    df = table(page)
    assert list(df["relation"]) == [r["rel"] for r in rows]
    assert list(df["arcs"]) == [r["n"] for r in rows]
    assert list(df["best head"]) == [f"L{r['layer']} H{r['head']}" for r in rows]
    assert list(df["accuracy %"]) == [round(100 * r["acc"], 1) for r in rows]
    assert list(df["baseline %"]) == [round(100 * r["baseline"], 1) for r in rows]
    assert "small hand-made sample" in messages(page)
    page.number_input(key="wh_min_arcs_1").set_value(100).run()
    assert list(table(page)["relation"]) == ["all", "det", "nsubj"]
    page.number_input(key="wh_min_arcs_1").set_value(25).run()


def test_matrix_has_every_head_and_relation(page, bundled, sample):
    scores = sx.score_treebank(bundled, sample)
    reported = scores.reported(25)
    fig = chart(page, "wh_matrix")
    z = array(fig["data"][0]["z"])
    assert z.shape == (72, len(reported))
    want = scores.accuracy()[reported].max(-1).reshape(len(reported), 72).T
    np.testing.assert_allclose(z, want, atol=1e-6)
    assert fig["data"][0]["y"][:2] == ["L1 H1", "L1 H2"]
    best = fig["data"][1]["y"]  # the ring on each relation's best head
    assert list(best) == [f"L{scores.best(r)[0] + 1} H{scores.best(r)[1] + 1}" for r in reported]


def argmax_arcs(bundled, text, layer, head, direction):
    """Each word's predicted head, by an independent route: bert.attend, the Explorer's word
    merge (res.word_level), [CLS]/[SEP] dropped, diagonal zeroed, argmax."""
    res = bundled.attend(text)
    labels, groups = res.words()
    keep = [i for i, g in enumerate(groups) if not all(res.special[t] for t in g)]
    m = res.word_level(res.attentions)[layer, head].numpy()[np.ix_(keep, keep)]
    np.fill_diagonal(m, 0)
    return [labels[k] for k in keep], (m.argmax(1) if direction == 0 else m.argmax(0))


def arc_markers(fig):
    """(dependent x, colour) of every predicted arc (its arrowhead) and the gold arcs' labels."""
    pred = [(int(t["x"][0]), t["marker"]["color"]) for t in fig["data"]
            if t.get("hovertemplate", "").startswith("predicted")]
    gold = [t["text"][1] for t in fig["data"] if t.get("hovertemplate", "").startswith("gold")]
    return pred, gold


def test_arcs_of_the_best_head_and_both_gold_readings(page, bundled, sample):
    scores = sx.score_treebank(bundled, sample)
    page.selectbox(key="wh_relation").set_value("all").run()
    layer, head, d = scores.best(0)
    words, heads = argmax_arcs(bundled, TELESCOPE, layer, head, d)
    assert words == ["I", "saw", "the", "man", "with", "a", "telescope", "."]
    readings = page.radio(key="wh_reading").options
    assert len(readings) == 2
    for reading, attach in zip(readings, (1, 3)):  # "telescope" on "saw", then on "man"
        page.radio(key="wh_reading").set_value(reading).run()
        pred, gold = arc_markers(chart(page, "wh_arcs"))
        assert [x for x, _ in pred] == [0, 2, 3, 4, 5, 6]  # no arcs for root and punct
        gold_heads = {0: 1, 2: 3, 3: 1, 4: 6, 5: 6, 6: attach}
        for x, colour in pred:
            want = "#2ca02c" if heads[x] == gold_heads[x] else "#d62728"
            assert colour == want, (reading, words[x])
        assert sorted(gold) == sorted(["nsubj", "det", "obj", "case", "det", "punct",
                                       "obl" if attach == 1 else "nmod"])


def test_arcs_without_a_gold_tree(bundled):
    at = open_app("what_heads_learn", text="Our dogs bark.")
    at.selectbox(key="wh_relation").set_value("det").run()
    pred, gold = arc_markers(chart(at, "wh_arcs"))
    assert gold == [] and len(pred) == 4  # Our dogs bark . : every word, none judged
    assert {c for _, c in pred} == {"#1f77b4"}
    assert "not in the treebank" in messages(at)


def test_norm_chart(page, bundled):
    fig = chart(page, "wh_norms")
    assert len(fig["data"]) == 6  # [CLS], [SEP], punctuation; by weight and by norm
    for trace in fig["data"]:
        y = array(trace["y"])
        assert y.shape == (6,) and (y >= 0).all() and (y <= 1).all()
    assert "mean of 100 sentences" in fig["layout"]["title"]["text"]


def test_query_key_space_and_a_token_found(page, bundled):
    page.toggle(key="wh_qk_on").set_value(True).run()
    survives(page)
    fig = chart(page, "wh_qk_scatter")
    q, k = fig["data"]
    assert len(q["x"]) == len(k["x"]) == 600  # the default: 600 tokens, twice as many points
    page.text_input(key="wh_qk_find").set_value("telescope").run()
    bars = chart(page, "wh_qk_attention")
    head = page.selectbox(key="wh_qk_head").value
    layer, h = (int(x) - 1 for x in head[1:].split(" H"))
    res = bundled.attend(TELESCOPE)  # the sample's first sentence holds the first "telescope"
    pos = res.tokens.index("telescope")
    np.testing.assert_allclose(array(bars["data"][0]["y"]), res.attentions[layer, h, pos].numpy(),
                               atol=1e-6)
    page.text_input(key="wh_qk_find").set_value("").run()
    page.toggle(key="wh_qk_on").set_value(False).run()


ONE = "\n".join(["# sent_id = up-1", "1\tDogs\t_\t_\t_\t_\t2\tnsubj\t_\t_",
                 "2\tbark\t_\t_\t_\t_\t0\troot\t_\t_", "3\t.\t_\t_\t_\t_\t2\tpunct\t_\t_"]) + "\n"


@pytest.mark.parametrize("data, said", [
    (ONE.encode(), None),
    (b"", "the file is empty"),
    (ONE.replace("\t2\tnsubj", "\t9\tnsubj").encode(), "line 2: word 1's HEAD 9 is outside"),
    (b"1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n", "only comments, multiword-token ranges"),
    (b"1\tx\t_\t_\n", "line 1: expected 10 tab-separated columns"),
    (b"\xff\xfe<script>", "not UTF-8"),
    (b"#" * (50 * 2**20), "uploads are limited to 10 MB"),
    ("".join(f"{i}\tw\t_\t_\t_\t_\t{(i + 1) % 1002}\tdep\t_\t_\n" for i in range(1, 1002))
     .encode(), "line 1: this sentence has 1,001 word lines; sentences are limited to 1,000"),
])
def test_uploads(bundled, data, said):
    at = open_app("what_heads_learn", text="Dogs bark.")
    at.selectbox(key="wh_treebank").set_value(tb.UPLOAD).run()
    assert "Upload a `.conllu` file" in messages(at)
    at.file_uploader(key="wh_upload").set_value(("x.conllu", data, "text/plain")).run()
    survives(at)
    if said is None:
        at.number_input(key="wh_min_arcs_0").set_value(1).run()
        assert list(table(at)["relation"]) == ["all", "nsubj"]
        assert list(table(at)["arcs"]) == [1, 1]
    else:
        shown = messages(at).replace("\\", "")  # markdown escapes (guards.md_text) removed
        assert said in shown and "wh_matrix" not in charts(at)


def test_operator_treebanks(bundled, tmp_path, monkeypatch):
    good = tmp_path / "good.conllu"
    good.write_text(ONE)
    monkeypatch.setenv("HEADSCOPE_TREEBANKS",
                       f"mine={good};gone={tmp_path / 'missing.conllu'};=x;nameonly")
    at = open_app("what_heads_learn", text="Dogs bark.")
    options = at.selectbox(key="wh_treebank").options
    assert options == [tb.SAMPLE, "mine", "gone", tb.UPLOAD]
    at.selectbox(key="wh_treebank").set_value("mine").run()
    at.number_input(key="wh_min_arcs_0").set_value(1).run()
    assert list(table(at)["arcs"]) == [1, 1]
    at.selectbox(key="wh_treebank").set_value("gone").run()
    survives(at)
    assert "The treebank gone cannot be read" in messages(at)
    assert str(tmp_path) not in messages(at).replace("\\", "")  # no server path to visitors


@pytest.mark.slow  # bert-base's size: make test runs it, test-fast not
def test_a_bert_base_shaped_checkpoint(base_dir, monkeypatch, tmp_path):
    """The page at bert-base's size, on the sample's first 30 sentences (an operator's
    treebank, named in the link) so that the test stays quick."""
    from mha_core.treebank import DEFAULT_TREEBANK

    blocks = DEFAULT_TREEBANK.read_text(encoding="utf-8").strip().split("\n\n")[:30]
    (tmp_path / "thirty.conllu").write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    monkeypatch.setenv("HEADSCOPE_MODELS", f"base-shaped={base_dir}")
    monkeypatch.setenv("HEADSCOPE_TREEBANKS", f"thirty={tmp_path / 'thirty.conllu'}")
    at = open_app("what_heads_learn", model="base-shaped", text=TELESCOPE, treebank="thirty")
    assert at.selectbox(key="wh_treebank").value == "thirty"
    assert dict(at.query_params)["treebank"] == "thirty"
    survives(at)
    assert array(chart(at, "wh_matrix")["data"][0]["z"]).shape[0] == 144
    assert len(chart(at, "wh_norms")["data"][0]["y"]) == 12
    # its query/key space: tests/model/test_bert_base_shape.py


def test_readings_are_bounded_and_come_from_what_is_scored(bundled, tmp_path, monkeypatch):
    """30 copies of one sentence, 20 scored: the choice offers 8, and a sentence found only
    after the scored ones gives no gold tree."""
    monkeypatch.setattr(tb, "MAX_SENTENCES", 20)
    blocks = [ONE.replace("up-1", f"copy-{i}") for i in range(30)]
    blocks.append(ONE.replace("up-1", "late").replace("Dogs", "Cats"))
    (tmp_path / "copies.conllu").write_text("\n".join(blocks), encoding="utf-8")
    monkeypatch.setenv("HEADSCOPE_TREEBANKS", f"copies={tmp_path / 'copies.conllu'}")
    at = open_app("what_heads_learn", text="Dogs bark.", treebank="copies")
    at.number_input(key="wh_min_arcs_0").set_value(1).run()
    survives(at)
    assert at.radio(key="wh_reading").options == [f"copy-{i}" for i in range(8)]
    assert "30 scored sentences" not in messages(at) and "20 scored sentences" in messages(at)
    at = open_app("what_heads_learn", text="Cats bark.", treebank="copies")
    at.number_input(key="wh_min_arcs_0").set_value(1).run()
    survives(at)
    assert "On the sentence in the sidebar" in [h.value for h in at.subheader]
    assert not at.radio  # no gold reading: "late" is not scored
