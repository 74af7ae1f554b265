"""AppTest of the All heads page on the bundled model: the atlas has L x H tiles whose labels
follow the documented thresholds, the table sorts, corpus mode and bad input behave."""

import numpy as np
import pytest

from testkit.apptest import array, chart, open_app

TEXT = "I saw the man with a telescope."


def run_page(text):
    return open_app("all_heads", text=text)


def tables(at, column) -> list:
    """The dataframes on the page that have this column."""
    return [df.value for df in at.dataframe if column in df.value.columns]


@pytest.fixture(scope="module")
def page(bundled):
    at = run_page(TEXT)
    assert not at.exception
    return at


def test_atlas_has_every_head_with_the_threshold_labels(page, bundled):
    res = bundled.attend(TEXT)
    att = res.attentions.numpy()  # (L, H, T, T)
    L, H, T, _ = att.shape
    fig = chart(page, "ah_atlas")
    heat, labels = fig["data"][0], fig["data"][1]
    labels = np.array(labels["text"]).reshape(L, H)
    assert labels.shape == (6, 12)
    # every tile is drawn: L*H*T*T finite cells, the gaps are empty
    assert np.isfinite(array(heat["z"])).sum() == L * H * T * T
    # every label follows the documented thresholds (first rule passed wins), recomputed here
    # in numpy from the raw maps; the page shows the short names
    punct = np.array([all(c in ".,;:!?'\"()-" for c in t) and not s
                      for t, s in zip(res.tokens, res.special)], dtype=float)  # (T,)
    ent = -(att * np.log(np.clip(att, 1e-12, None))).sum(-1).mean(-1)  # (L, H)
    shares = [("CLS", att[..., 0].mean(-1), 0.6), ("SEP", att[..., -1].mean(-1), 0.6),
              ("punct", (att @ punct).mean(-1), 0.6),
              ("prev", np.diagonal(att, -1, -2, -1).mean(-1), 0.5),
              ("next", np.diagonal(att, 1, -2, -1).mean(-1), 0.5),
              ("self", np.diagonal(att, 0, -2, -1).mean(-1), 0.5),
              ("broad", ent / np.log(T), 3.8 / np.log(128))]
    want = np.full((L, H), "het", dtype=object)
    for name, share, limit in reversed(shares):  # earlier rules overwrite later ones
        want[share > limit] = name
    assert (labels == want).all(), (labels, want)
    assert (labels == "CLS").sum() > 10  # MiniLM's middle layers lean on [CLS]


def test_table_lists_every_head_and_sorts(page):
    (table,) = tables(page, "entropy")
    assert len(table) == 72 and {"layer", "head", "label", "entropy", "cls"} <= set(table)
    page.selectbox(key="ah_sentence_sort").select("entropy").run()
    (table,) = tables(page, "entropy")
    assert table["entropy"].is_monotonic_decreasing


def test_threshold_table_is_shown(page):
    (rules,) = tables(page, "threshold")  # inside the expander
    assert list(rules["label"])[:3] == ["[CLS]-sink", "[SEP]-sink", "punctuation"]
    assert "> 0.60" in list(rules["threshold"])


def test_rollout_charts(page, bundled):
    T = len(bundled.encode(TEXT).tokens)
    grid = chart(page, "ah_rollout")
    z = array(grid["data"][0]["z"])
    assert np.isfinite(z).sum() == 2 * 6 * T * T  # raw and rollout for each layer
    # the bottom-right tile is the last layer's rollout: its rows sum to 1
    bottom = z[-T:]
    last = bottom[:, ~np.isnan(bottom).all(axis=0)][:, -T:]  # (T, T) without the gap columns
    assert last.sum(axis=1) == pytest.approx(np.ones(T), abs=0.01)
    one = chart(page, "ah_rollout_one")
    assert len(one["data"]) == 2


def test_corpus_mode_pasted_lines(bundled):
    at = run_page(TEXT)
    at.radio[0].set_value("My own lines").run()
    assert any("Paste at least one" in i.value for i in at.info)
    at.text_area(key="ah_corpus_lines").input("the cat sat.\n\nI saw a man.\n").run()
    at.toggle(key="ah_corpus_on").set_value(True).run()
    assert not at.exception
    grid = chart(at, "ah_corpus_grid")
    assert np.asarray(grid["data"][0]["text"]).shape == (6, 12)
    assert [len(t) for t in tables(at, "entropy")] == [72, 72]  # the sentence, the corpus


def test_corpus_mode_caps_at_200_lines(bundled):
    at = run_page(TEXT)
    at.radio[0].set_value("My own lines").run()
    at.text_area(key="ah_corpus_lines").input("\n".join(["a b."] * 205)).run()
    assert any("first 200" in w.value for w in at.warning)
    assert "200 sentence" in at.toggle(key="ah_corpus_on").label


@pytest.mark.parametrize("text", [
    "🙂🚀 ok", "我看见了拿着望远镜的人。", "ראיתי את האיש עם הטלסקופ", "tab\tand\x07bell\x00",
    "<script>alert(1)</script><b>bold</b>",
])
def test_odd_text_is_shown_without_traceback(bundled, text):
    at = run_page(text)
    assert not at.exception
    assert chart(at, "ah_atlas")["data"][0]["type"] == "heatmap"


def test_html_stays_text_in_the_atlas_title(bundled):
    at = run_page("<b>bold</b> & more")
    title = chart(at, "ah_atlas")["layout"]["title"]["text"]
    assert "<b>" not in title and "&lt;b&gt;" in title


def test_empty_and_long_text(bundled):
    at = run_page("   ")
    assert not at.exception and any("Type a sentence" in i.value for i in at.info)
    at = run_page("\x00\x01")
    assert not at.exception and any("nothing in this text but [CLS] and [SEP]" in i.value
                                   for i in at.info)
    at = run_page("word " * 700)
    assert not at.exception
    assert any("has 702 tokens, more than this model's limit of 512" in w.value
               for w in at.warning)


@pytest.mark.parametrize("text", ["word " * 300, "unbelievably " * 100, "short one"])
def test_corpus_lines_are_cut_to_128_tokens(bundled, text):
    full = bundled.encode(text)
    tokens = bundled.attend(text, max_length=128).tokens
    assert len(tokens) == min(128, len(full.tokens))
    assert tokens[:-1] == full.tokens[:len(tokens) - 1]  # the same pieces, then [SEP]


def test_the_link_keeps_the_corpus_choice(bundled):
    at = run_page(TEXT)
    at.radio(key="ah_corpus_source").set_value("My own lines").run()
    at.text_area(key="ah_corpus_lines").input("the cat sat.\nI saw a man.").run()
    at.toggle(key="ah_corpus_on").set_value(True).run()
    qp = dict(at.query_params)
    assert (qp["corpus"], qp["lines"], qp["profile"]) == ("own", "the cat sat.\nI saw a man.", "1")
    again = open_app("all_heads", **qp)
    assert again.radio(key="ah_corpus_source").value == "My own lines"
    assert again.toggle(key="ah_corpus_on").value is True
    np.testing.assert_allclose(array(chart(again, "ah_corpus_grid")["data"][0]["z"]),
                               array(chart(at, "ah_corpus_grid")["data"][0]["z"]))
    bad = open_app("all_heads", corpus="everything")
    assert any("not one of presets or own" in w.value for w in bad.warning)


def test_a_corpus_line_with_a_typed_sep_is_a_pair_cut_longest_first(bundled):
    a, b = "short one.", "word " * 300
    res = bundled.attend(f"{a} [SEP] {b}", max_length=128)
    assert len(res.tokens) == 128 and res.tokens.count("[SEP]") == 2
    types = res.encoded.token_type_ids.tolist()
    n_a = len(bundled.encode(a).tokens) - 2
    assert types[:n_a + 2] == [0] * (n_a + 2) and set(types[n_a + 2:]) == {1}  # A kept whole


def test_atlas_by_norm(bundled):
    """The switch shows ||alpha f(x)|| with rows normalised (raw norms in the hover) and labels
    the heads from those maps."""
    from mha_core import metrics as mt
    from mha_core import patterns as pt
    from mha_core.norms import result_norm_maps, row_normalised

    at = run_page(TEXT)
    at.toggle(key="ah_norms").set_value(True).run()
    assert not at.exception
    res = bundled.attend(TEXT)
    raw = result_norm_maps(bundled, res)
    shown = row_normalised(raw).numpy()  # (L, H, T, T)
    L, H, T, _ = shown.shape
    fig = chart(at, "ah_atlas")
    z = array(fig["data"][0]["z"])
    assert np.isfinite(z).sum() == L * H * T * T
    np.testing.assert_allclose(np.sort(z[np.isfinite(z)]), np.sort(shown.ravel()),
                               atol=6e-4)  # the page rounds to 3 decimals
    assert "‖αf‖" in "".join(str(t) for t in np.ravel(fig["data"][0]["text"]))
    labels = np.array(fig["data"][1]["text"]).reshape(L, H)
    want = pt.short_labels(pt.label_heads(mt.head_metrics(shown, mt.token_kinds(
        res.tokens, res.special))))
    assert (labels == np.asarray(want)).all()
    assert fig["layout"]["title"]["text"].endswith("by norm")
    at.toggle(key="ah_norms").set_value(False).run()
    z = array(chart(at, "ah_atlas")["data"][0]["z"])
    np.testing.assert_allclose(np.sort(z[np.isfinite(z)]),
                               np.sort(res.attentions.numpy().ravel()), atol=6e-4)


def test_atlas_by_norm_reads_the_pair(bundled):
    """With a second sentence the by-norm atlas is computed on the pair, as the weights are."""
    from mha_core.norms import result_norm_maps, row_normalised

    a, b = "I saw the man.", "He had a telescope."
    at = open_app("all_heads", text=a, pair=b)
    at.toggle(key="ah_norms").set_value(True).run()
    assert not at.exception
    res = bundled.attend(a, text_pair=b)
    shown = row_normalised(result_norm_maps(bundled, res)).numpy()  # (L, H, T, T)
    z = array(chart(at, "ah_atlas")["data"][0]["z"])
    assert np.isfinite(z).sum() == shown.size
    np.testing.assert_allclose(np.sort(z[np.isfinite(z)]), np.sort(shown.ravel()), atol=6e-4)
