"""The Explorer's browser math (headscope/ui/attention/explore.js, run by node) against the Python
reference on the bundled model's payload: mha_core.shown's views (whole words, hidden
[CLS]/[SEP], by norm), mha_core.metrics (entropy, word_focus, map_summary), figures.focus
(key_segments, token_colors), link.resolve_focus_list, and several focus tokens as the mean of
their rows computed here with numpy. The maps travel as 16-bit levels: 1e-4 after the rows are
renormalised."""

import itertools
import json

import numpy as np
import pytest
import torch

from headscope.ui import masked_words, models
from headscope.ui.explorer_cache import explorer_data
from headscope.ui.figures.focus import key_segments, token_colors
from headscope.ui.link import resolve_focus_list
from mha_core.metrics import entropy, is_punctuation, map_summary, word_focus
from mha_core.norms import result_norm_maps
from mha_core.shown import explorer_norm_view, explorer_view, shown_groups
from testkit.explore_js import NODE, run_js
from tests.conftest import require

TEXT, PAIR = "Headscope shows tokenization, surely.", "Astronomers photographed nebulae."
ATOL = 1e-4
# By norm the browser multiplies each weight's 16-bit level by its key's value norm and
# renormalises: a key with a large norm carries its weight's error further (here <= 1.7e-4)
NORM_ATOL = 5e-4
VIEWS = list(itertools.product((False, True), repeat=3))  # words, hide, by norm


@pytest.fixture(scope="module")
def case(bundled):
    require(NODE is not None, "node is not installed (apt-get install nodejs; .ci/run does)")
    res = bundled.attend(TEXT, PAIR)
    raw = result_norm_maps(bundled, res)  # (L, H, T, T) ||alpha f(x)||
    data = json.loads(json.dumps(explorer_data(models.BUNDLED, TEXT, PAIR, 0, ())))
    L, H = res.attentions.shape[:2]
    focus = {}  # per view, two shown positions (a word of the pair and one before it)
    script = """
    const res = {};
    for (const [words, hide, norm] of VIEWS) {
      const sv = shownView(d, words, hide), k = `${words},${hide},${norm}`;
      const layers = d.sent.map((l) => layerMaps(src, sv, l, norm));
      const one = focusRows(src, sv, [FOCUS[k][0]], norm), two = focusRows(src, sv, FOCUS[k], norm);
      const colors = tokenColors(d, sv.labels, sv.special), G = sv.G, n = G * G;
      const summaries = layers.map((lm) =>
        [...Array(H + 2).keys()].map((m) => mapSummary(lm.maps, m * n, G)));
      res[k] = { sv, layers, one, two, colors, summaries,
        top: topKeys(two, L, H, G),
        focus: wordFocus(layerMaps(src, sv, 1, false), sv, H),
        segments: keySegments(d, one.slice(H * G, 2 * H * G), sv, colors) };
    }
    out(res);
    """
    for words, hide, norm in VIEWS:
        labels = explorer_view(res.attentions[0, 0], res, words, hide)[1]
        first = [w.lower() for w in labels].index("astronomers")
        focus[f"{str(words).lower()},{str(hide).lower()},{str(norm).lower()}"] = [2, first]
    script = (f"const VIEWS = {json.dumps(VIEWS)}, FOCUS = {json.dumps(focus)}, L = {L}, "
              f"H = {H};\n" + script)
    return res, raw, data, focus, run_js(data, script)


def key(words, hide, norm):
    return f"{str(words).lower()},{str(hide).lower()},{str(norm).lower()}"


def arr(x):
    return np.array([np.nan if v is None else v for v in x], dtype=np.float64)


def reference(res, raw, words, hide, norm):
    """(H + 2 maps per layer (L, H + 2, G, G), raw norms or None, labels, special), as
    mha_core.shown shows them."""
    single = explorer_view(res.single_head, res, words, hide)[0]  # (L, G, G)
    if norm:
        heads, merged, labels, special = explorer_norm_view(raw, res, words, hide)
    else:
        heads, labels, special = explorer_view(res.attentions, res, words, hide)
        merged = None
    maps = torch.cat([heads, single[:, None], heads.mean(1, keepdim=True)], 1)
    return maps.numpy().astype(np.float64), merged, labels, special


def kept(res, raw, words, hide, norm) -> np.ndarray:
    """(L, H + 2, G): every shown row is compared. (A row sent as levels of the whole row would
    fail here when [CLS]/[SEP] are hidden from a head that looks at them: explorer_payload
    sends ordinary tokens relative to their own sum, so that every row keeps its precision.)"""
    G = len(explorer_view(res.attentions[0, 0], res, words, hide)[1])
    return np.ones((res.attentions.shape[0], res.attentions.shape[1] + 2, G), dtype=bool)


def test_the_payload_is_the_sentence_with_multi_piece_words_and_a_pair(case):
    res, _, data, _, _ = case
    assert data["tokens"] == res.labels and "[SEP]" in data["tokens"][1:-1]  # a pair
    assert any(len(g) > 1 for g in data["groups"])  # a word of several pieces
    assert data["sent"] == list(range(res.attentions.shape[0]))


@pytest.mark.parametrize("words, hide", list(itertools.product((False, True), repeat=2)))
def test_shown_view_is_mha_core_shown(case, words, hide):
    res, _, _, _, js = case
    sv = js[key(words, hide, False)]["sv"]
    _, labels, special = explorer_view(res.attentions[0, 0], res, words, hide)
    assert sv["labels"] == labels and sv["special"] == special
    assert sv["groups"] == shown_groups(res, words, hide)
    assert sv["maskable"] == masked_words.click_targets(res, words, hide)
    assert sv["punct"] == [not s and is_punctuation(w) for w, s in zip(labels, special)]


@pytest.mark.parametrize("words, hide, norm", VIEWS)
def test_layer_maps_and_entropies_are_mha_core_shown_and_metrics(case, words, hide, norm):
    res, raw, _, _, js = case
    want, merged, labels, _ = reference(res, raw, words, hide, norm)
    ok = kept(res, raw, words, hide, norm)
    assert ok.all()  # every row, also of heads that look (almost) only at [CLS]/[SEP]
    L, M, G = want.shape[:3]
    H = M - 2
    for layer, lm in enumerate(js[key(words, hide, norm)]["layers"]):
        assert lm["G"] == G
        got = arr(lm["maps"]).reshape(M, G, G)
        np.testing.assert_allclose(got[ok[layer]], want[layer][ok[layer]],
                                   atol=NORM_ATOL if norm else ATOL)
        whole = ok[layer].all(-1)  # entropies of the maps with every row within reach
        np.testing.assert_allclose(np.array(lm["entropy"])[whole],
                                   entropy(torch.as_tensor(want[layer])).numpy()[whole],
                                   atol=ATOL * G)
        if norm:  # the raw norms for the hover: heads and their mean; none for the summed head
            got_raw = arr(lm["raw"]).reshape(M, G, G)
            m = merged[layer].numpy()
            np.testing.assert_allclose(got_raw[:H], m, rtol=1e-3, atol=ATOL * np.abs(m).max())
            np.testing.assert_allclose(got_raw[H + 1], m.mean(0), rtol=1e-3,
                                       atol=ATOL * np.abs(m).max())
            assert np.isnan(got_raw[H]).all()
        else:
            assert lm["raw"] is None


@pytest.mark.parametrize("words, hide, norm", VIEWS)
def test_the_summary_of_every_map_is_metrics_map_summary(case, words, hide, norm):
    res, raw, _, _, js = case
    want = reference(res, raw, words, hide, norm)[0]
    ok = kept(res, raw, words, hide, norm).all(-1)  # (L, H + 2)
    for layer, summaries in enumerate(js[key(words, hide, norm)]["summaries"]):
        for m, got in enumerate(summaries):
            if not ok[layer, m]:
                continue
            ref = map_summary(want[layer, m])
            assert got["top"] == ref["top"] or np.isclose(got["top_share"], ref["top_share"],
                                                          atol=ATOL)
            for part in ("entropy", "top_share", "prev_share", "self_share", "next_share"):
                assert got[part] == pytest.approx(ref[part], abs=ATOL * 10), (layer, m, part)


@pytest.mark.parametrize("words, hide", list(itertools.product((False, True), repeat=2)))
def test_the_default_head_rule_is_metrics_word_focus(case, words, hide):
    res, raw, _, _, js = case
    want, _, labels, special = reference(res, raw, words, hide, False)
    H = want.shape[1] - 2
    is_word = [not s and not is_punctuation(w) for w, s in zip(labels, special)]
    ref = word_focus(torch.as_tensor(want[1, :H]), is_word)
    got = js[key(words, hide, False)]["focus"]
    np.testing.assert_allclose(got, ref, atol=ATOL)
    assert int(np.argmax(got)) == int(np.argmax(ref))


@pytest.mark.parametrize("words, hide, norm", VIEWS)
def test_focus_rows_are_the_mean_of_the_focus_tokens_rows(case, words, hide, norm):
    res, raw, _, focus, js = case
    want = reference(res, raw, words, hide, norm)[0]  # (L, H + 2, G, G)
    L, M, G = want.shape[:3]
    H = M - 2
    f = focus[key(words, hide, norm)]
    ok = kept(res, raw, words, hide, norm)[:, :H, f].all(-1)  # (L, H)
    out = js[key(words, hide, norm)]
    one, two = arr(out["one"]).reshape(L, H, G), arr(out["two"]).reshape(L, H, G)
    np.testing.assert_allclose(one[ok], want[:, :H, f[0]][ok], atol=ATOL)
    np.testing.assert_allclose(two[ok], want[:, :H, f].mean(2)[ok], atol=ATOL)  # numpy's mean
    np.testing.assert_allclose(two.sum(-1), 1.0, atol=ATOL)
    if not (words or hide or norm):  # the token view: straight from the model's weights
        A = res.attentions.numpy()
        np.testing.assert_allclose(two, A[:, :, f].mean(2), atol=ATOL)
    # the focus grid's cells: each head's top key and its weight
    top, weight = np.array(out["top"]["top"]), np.array(out["top"]["weight"])
    ref_two, ok = want[:, :H, f].mean(2).reshape(L * H, G), ok.reshape(L * H)
    np.testing.assert_allclose(weight[ok], ref_two.max(-1)[ok], atol=ATOL)
    picked = ref_two[np.arange(L * H), top]
    np.testing.assert_allclose(picked[ok], ref_two.max(-1)[ok], atol=2 * ATOL)


@pytest.mark.parametrize("words, hide, norm", VIEWS)
def test_bars_and_colours_are_figures_focus(case, words, hide, norm):
    res, raw, _, focus, js = case
    want, _, labels, special = reference(res, raw, words, hide, norm)
    H = want.shape[1] - 2
    out = js[key(words, hide, norm)]
    assert out["colors"] == token_colors(labels, special)
    rows = want[1, :H, focus[key(words, hide, norm)][0]]  # (H, G): layer 1
    ref = key_segments(rows, labels, special)
    assert [s[0] for s in out["segments"]] == [s[0] for s in ref]
    assert [s[1] for s in out["segments"]] == [s[1] for s in ref]
    for got, (_, _, values) in zip(out["segments"], ref):
        np.testing.assert_allclose(got[2], values, atol=ATOL * len(labels))


def test_resolve_focus_is_link_resolve_focus_list(case):
    _, _, data, _, _ = case
    labels = data["tokens"]
    raws = ["with", "SHOWS", "##ope", "#0", "#3", f"#{len(labels) - 1}", f"#{len(labels)}",
            "#1,#3", "#3,#1,#3", "#2,#99", "zzz", "#", "#-1", "#1,", ",", "#1,shows",
            "shows,#1", "#٣", "#0001", "#1234567", ""]
    got = run_js(data, f"out({json.dumps(raws)}.map((r) => resolveFocus(r, d.tokens)));")
    assert got == [resolve_focus_list(r, labels) for r in raws]


def test_a_long_text_sends_one_layer_and_the_focus_rows_of_every_layer(bundled):
    require(NODE is not None, "node is not installed (apt-get install nodejs; .ci/run does)")
    text = " ".join(f"w{i}" for i in range(70))  # over LOCAL_TOKENS tokens
    res = bundled.attend(text)
    T = len(res.labels)
    assert T > 128
    data = json.loads(json.dumps(explorer_data(models.BUNDLED, text, None, 2, (5, 9))))
    assert data["sent"] == [2] and data["frows_at"] == [5, 9]
    got = run_js(data, """
      const sv = shownView(d, false, false), L = d.layers, H = d.heads;
      out({ rows: focusRows(src, sv, [5, 9], false), norm: focusRows(src, sv, [9], true),
            missing: focusRows(src, sv, [6], false), sent: layerMaps(src, sv, 2, false),
            other: layerMaps(src, sv, 0, false) });
    """)
    A = res.attentions.numpy()  # (L, H, T, T)
    L, H = A.shape[:2]
    np.testing.assert_allclose(arr(got["rows"]).reshape(L, H, T), A[:, :, [5, 9]].mean(2),
                               atol=ATOL)
    shares = result_norm_maps(bundled, res)[:, :, 9].numpy()  # (L, H, T)
    np.testing.assert_allclose(arr(got["norm"]).reshape(L, H, T),
                               shares / shares.sum(-1, keepdims=True), atol=NORM_ATOL)
    missing = arr(got["missing"]).reshape(L, H, T)  # not sent: the browser asks ("need")
    assert np.isnan(missing[[0, 1, 3, 4, 5]]).all()
    np.testing.assert_allclose(missing[2], A[2, :, 6], atol=ATOL)  # the sent layer has it
    np.testing.assert_allclose(arr(got["sent"]["maps"]).reshape(H + 2, T, T)[:H], A[2],
                               atol=ATOL)
    assert got["other"] is None
