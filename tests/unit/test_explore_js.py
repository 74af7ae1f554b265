"""The Explorer's browser math (headscope/ui/attention/js/explore.js, run by node) against an
independent reference on the bundled model's payload, computed here with numpy
(testkit.explore_js): the token-level maps of Model.attend (weights, summed head); the norms
||alpha_ij f_h(x_j)|| from transformers' own BertModel (testkit.models.hf_norm_maps); words from
transformers' tokenizer (word ids, offsets), merged as Clark et al. 2019 do (attention to a word
summed over its pieces, from it averaged); [CLS]/[SEP] hidden by dropping their rows and columns
and renormalising each row. On those views: entropies, each map's summary, the default head's
word focus, the focus rows of one and several tokens, the bars' segments, the enlarged head's
CSV/JSON, and the focus a link names. The maps travel as 16-bit levels: 1e-4 after the rows are
renormalised."""

import csv
import io
import itertools
import json
import unicodedata

import numpy as np
import pytest

from headscope.ui import masked_words, models
from headscope.ui.explorer_cache import explorer_data
from headscope.ui.figures.focus import token_colors
from headscope.ui.link import resolve_focus_list
from testkit.explore_js import NODE, kept_groups, rows_to_one, run_js, shown_maps, word_groups
from testkit.models import hf_norm_maps, hf_reference
from tests.conftest import require

TEXT, PAIR = "Headscope shows tokenization, surely.", "Astronomers photographed nebulae."
ATOL = 1e-4
# By norm the browser multiplies each weight's 16-bit level by its key's value norm and
# renormalises: a key with a large norm carries its weight's error further (here <= 1.7e-4)
NORM_ATOL = 5e-4
VIEWS = list(itertools.product((False, True), repeat=3))  # words, hide, by norm
EXPORTS = [(False, False, False, 1, 3), (True, True, True, 2, 7)]  # words, hide, norm, layer, head


def key(words, hide, norm):
    return f"{str(words).lower()},{str(hide).lower()},{str(norm).lower()}"


def arr(x):
    return np.array([np.nan if v is None else v for v in x], dtype=np.float64)


def is_punctuation(w: str) -> bool:
    """Unicode's punctuation categories (P*), every character."""
    return bool(w) and all(unicodedata.category(c).startswith("P") for c in w)


def entropy(maps) -> np.ndarray:
    """Mean row entropy in nats: (..., G, G) -> (...)."""
    p = np.clip(maps, 0, None)
    return -(p * np.log(np.maximum(p, 1e-12))).sum(-1).mean(-1)


def reference(case, words, hide, norm) -> dict:
    """The view in numpy: maps (L, H + 2, G, G) (the heads, the summed head, the heads' mean),
    raw (L, H + 2, G, G) the raw norms behind a by-norm view (the summed head NaN) or None,
    and the shown labels, special flags and token groups."""
    A, S, N = case["attentions"], case["single"], case["norms"]  # (L, H, T, T), (L, T, T)
    if words:
        groups, labels, gs = case["words"]  # gs: a special token's group
    else:
        groups = [[t] for t in range(len(case["tokens"]))]
        labels, gs = case["tokens"], case["special"]
    keep = kept_groups(gs, hide)
    heads = shown_maps(rows_to_one(N) if norm else A, groups, gs, hide)  # (L, H, G, G)
    single = shown_maps(S, groups, gs, hide)  # (L, G, G): no norm form
    maps = np.concatenate([heads, single[:, None], heads.mean(1, keepdims=True)], 1)
    raw = None
    if norm:  # merged the same linear way, hidden tokens dropped, never renormalised
        r = shown_maps(N, groups, gs, hide, renormalise=False)
        raw = np.concatenate([r, np.full_like(r[:, :1], np.nan), r.mean(1, keepdims=True)], 1)
    hidden = len(keep) < len(groups)
    return dict(maps=maps, raw=raw, labels=[labels[i] for i in keep],
                special=[False if hidden else gs[i] for i in keep],
                groups=[list(groups[i]) for i in keep])


@pytest.fixture(scope="module")
def case(bundled):
    require(NODE is not None, "node is not installed (apt-get install nodejs; .ci/run does)")
    res = bundled.attend(TEXT, PAIR)
    enc = bundled.tokenizer(TEXT, PAIR, return_tensors="pt", return_special_tokens_mask=True)
    ids, types = enc["input_ids"][0], enc["token_type_ids"][0]
    c = dict(attentions=res.attentions.numpy().astype(np.float64),
             single=res.single_head.numpy().astype(np.float64),
             norms=hf_norm_maps(hf_reference(bundled.path), ids, types).numpy()
             .astype(np.float64),
             tokens=bundled.tokenizer.convert_ids_to_tokens(ids.tolist()),
             special=[bool(s) for s in enc["special_tokens_mask"][0].tolist()],
             words=word_groups(bundled.tokenizer, TEXT, PAIR), res=res)
    assert c["norms"].shape == c["attentions"].shape
    data = json.loads(json.dumps(explorer_data(models.BUNDLED, TEXT, PAIR, 0, ())))
    L, H = res.attentions.shape[:2]
    focus = {}  # per view, two shown positions (a word of the pair and one before it)
    for words, hide, norm in VIEWS:
        labels = reference(c, words, hide, norm)["labels"]
        focus[key(words, hide, norm)] = [2, [w.lower() for w in labels].index("astronomers")]
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
    // the enlarged head's CSV and JSON, as the download buttons make them (excontrols.js)
    const files = {};
    download = (blob, name) => { files[name] = blob; };
    for (const [words, hide, norm, layer, head] of EXPORTS) {
      const sv = shownView(d, words, hide), view = { words, hide, norm, layer, head };
      const x = { data: d, view, sv, src, host: { dataset: {} } };
      for (const kind of ["csv", "json"]) exDownload(x, kind);
    }
    res.files = Object.fromEntries(await Promise.all(
      Object.entries(files).map(async ([name, blob]) => [name, await blob.text()])));
    out(res);
    """
    script = (f"const VIEWS = {json.dumps(VIEWS)}, FOCUS = {json.dumps(focus)}, L = {L}, "
              f"H = {H}, EXPORTS = {json.dumps(EXPORTS)};\n" + script)
    return c, data, focus, run_js(data, script)


def test_the_payload_is_the_sentence_with_multi_piece_words_and_a_pair(case):
    c, data, _, _ = case
    assert data["tokens"] == c["tokens"] and "[SEP]" in data["tokens"][1:-1]  # a pair
    assert any(len(g) > 1 for g in data["groups"])  # a word of several pieces
    assert data["sent"] == list(range(c["attentions"].shape[0]))


@pytest.mark.parametrize("words, hide", list(itertools.product((False, True), repeat=2)))
def test_the_shown_labels_are_the_tokenizers_words_and_tokens(case, words, hide):
    c, _, _, js = case
    sv = js[key(words, hide, False)]["sv"]
    ref = reference(c, words, hide, False)
    assert sv["labels"] == ref["labels"] and sv["special"] == ref["special"]
    assert sv["groups"] == ref["groups"]
    if words:
        assert "Headscope" in sv["labels"] and "heads" not in sv["labels"]
    assert ("[CLS]" in sv["labels"]) != hide
    # what a click masks: the Head view's server-side rule (masked_words.click_targets)
    assert sv["maskable"] == masked_words.click_targets(c["res"], words, hide)
    assert sv["punct"] == [not s and is_punctuation(w)
                           for w, s in zip(ref["labels"], ref["special"])]


@pytest.mark.parametrize("words, hide, norm", VIEWS)
def test_layer_maps_and_entropies_are_numpy_on_the_models_maps(case, words, hide, norm):
    """Every shown row, also of heads that look (almost) only at [CLS]/[SEP]: explorer_payload
    sends a row's ordinary tokens relative to their own sum, so hiding [CLS]/[SEP] keeps every
    row's precision."""
    c, _, _, js = case
    ref = reference(c, words, hide, norm)
    want, raw = ref["maps"], ref["raw"]
    L, M, G = want.shape[:3]
    for layer, lm in enumerate(js[key(words, hide, norm)]["layers"]):
        assert lm["G"] == G
        got = arr(lm["maps"]).reshape(M, G, G)
        np.testing.assert_allclose(got, want[layer], atol=NORM_ATOL if norm else ATOL)
        np.testing.assert_allclose(lm["entropy"], entropy(want[layer]), atol=ATOL * G)
        if norm:  # the raw norms for the hover: heads and their mean; none for the summed head
            got_raw = arr(lm["raw"]).reshape(M, G, G)
            scale = np.nanmax(np.abs(raw[layer]))
            np.testing.assert_allclose(got_raw, raw[layer], rtol=1e-3, atol=ATOL * scale)
            assert np.isnan(got_raw[M - 2]).all()
        else:
            assert lm["raw"] is None


@pytest.mark.parametrize("words, hide, norm", VIEWS)
def test_the_summary_of_every_map_is_its_mean_row_and_diagonals(case, words, hide, norm):
    """The caption's numbers of each (G, G) map: mean row entropy, the key with the most weight
    in the average row and that weight, the mean weight on the previous token, on itself and
    on the next token (over the rows that have one)."""
    c, _, _, js = case
    want = reference(c, words, hide, norm)["maps"]
    for layer, summaries in enumerate(js[key(words, hide, norm)]["summaries"]):
        for m, got in enumerate(summaries):
            a = want[layer, m]  # (G, G)
            per_key = a.mean(0)
            top = int(per_key.argmax())
            ref = {"entropy": entropy(a), "top_share": per_key[top],
                   "prev_share": np.diagonal(a, -1).mean(), "self_share": np.diagonal(a).mean(),
                   "next_share": np.diagonal(a, 1).mean()}
            assert got["top"] == top or np.isclose(per_key[got["top"]], per_key[top], atol=ATOL)
            for part, value in ref.items():
                assert got[part] == pytest.approx(value, abs=ATOL * 10), (layer, m, part)


@pytest.mark.parametrize("words, hide", list(itertools.product((False, True), repeat=2)))
def test_the_default_head_is_the_one_that_links_words_most_sharply(case, words, hide):
    """Per head of layer 2: the mean over the word queries (not special, not punctuation) of
    the largest weight a word puts on another word."""
    c, _, _, js = case
    ref = reference(c, words, hide, False)
    maps = ref["maps"][1, :-2]  # (H, G, G)
    is_word = np.array([not s and not is_punctuation(w)
                        for w, s in zip(ref["labels"], ref["special"])])
    others = is_word[None, :] & ~np.eye(len(is_word), dtype=bool)  # (G, G): another word
    best = np.where(others, maps, 0).max(-1)  # (H, G)
    want = best[:, is_word].mean(-1)
    got = js[key(words, hide, False)]["focus"]
    np.testing.assert_allclose(got, want, atol=ATOL)
    assert int(np.argmax(got)) == int(np.argmax(want))


@pytest.mark.parametrize("words, hide, norm", VIEWS)
def test_focus_rows_are_the_mean_of_the_focus_tokens_rows(case, words, hide, norm):
    c, _, focus, js = case
    want = reference(c, words, hide, norm)["maps"]  # (L, H + 2, G, G)
    L, M, G = want.shape[:3]
    H = M - 2
    f = focus[key(words, hide, norm)]
    out = js[key(words, hide, norm)]
    one, two = arr(out["one"]).reshape(L, H, G), arr(out["two"]).reshape(L, H, G)
    np.testing.assert_allclose(one, want[:, :H, f[0]], atol=ATOL)
    np.testing.assert_allclose(two, want[:, :H, f].mean(2), atol=ATOL)  # numpy's mean
    np.testing.assert_allclose(two.sum(-1), 1.0, atol=ATOL)
    # the focus grid's cells: each head's top key and its weight
    top, weight = np.array(out["top"]["top"]), np.array(out["top"]["weight"])
    ref_two = want[:, :H, f].mean(2).reshape(L * H, G)
    np.testing.assert_allclose(weight, ref_two.max(-1), atol=ATOL)
    np.testing.assert_allclose(ref_two[np.arange(L * H), top], ref_two.max(-1), atol=2 * ATOL)


def segments_by_hand(rows, labels, min_weight=0.05) -> list:
    """One bar segment per word (any case: "The" and "the" are one target, its weights added),
    in sentence order; words under min_weight in every head left out, their share in a last
    segment (None: "other keys"). rows (H, G) -> [(label, (H,))]."""
    positions = {}
    for t, w in enumerate(labels):
        positions.setdefault(str(w).lower(), []).append(t)
    out = [(labels[p[0]], rows[:, p].sum(1)) for p in positions.values()]
    kept = [(w, y) for w, y in out if y.max() >= min_weight]
    if len(kept) < len(out):
        kept.append((None, rows.sum(1) - sum(y for _, y in kept)))
    return kept


@pytest.mark.parametrize("words, hide, norm", VIEWS)
def test_bars_split_each_heads_row_by_word_in_the_grids_colours(case, words, hide, norm):
    c, data, focus, js = case
    ref = reference(c, words, hide, norm)
    labels, special, H = ref["labels"], ref["special"], ref["maps"].shape[1] - 2
    out = js[key(words, hide, norm)]
    # one colour rule for the Explorer and the Two readings focus grid (figures.focus)
    assert out["colors"] == token_colors(labels, special)
    rows = ref["maps"][1, :H, focus[key(words, hide, norm)][0]]  # (H, G): layer 2
    want = segments_by_hand(rows, labels)
    assert [s[0] for s in out["segments"]] == [w for w, _ in want]
    colour_of = {str(w).lower(): col for w, col in zip(labels, out["colors"])}
    assert [s[1] for s in out["segments"]] == [
        data["other_color"] if w is None else colour_of[str(w).lower()] for w, _ in want]
    for got, (_, values) in zip(out["segments"], want):
        np.testing.assert_allclose(got[2], values, atol=ATOL * len(labels))


def test_bars_merge_a_words_spellings_and_leave_out_weak_words(case):
    _, data, _, _ = case
    labels = ["[CLS]", "the", "cat", "saw", "The", "dog", "[SEP]"]
    rows = [0.1, 0.2, 0.0, 0.0, 0.3, 0.0, 0.4,  # (H = 2, G = 7)
            0.0, 0.0, 0.5, 0.0, 0.0, 0.5, 0.0]
    got = run_js(data, f"""
      const labels = {json.dumps(labels)}, special = labels.map((w) => w.startsWith("["));
      const sv = {{ labels, special, G: labels.length }}, colors = tokenColors(d, labels, special);
      out(keySegments(d, Float32Array.from({json.dumps(rows)}), sv, colors));
    """)
    assert [s[0] for s in got] == ["[CLS]", "the", "cat", "dog", "[SEP]", None]
    np.testing.assert_allclose(got[1][2], [0.5, 0.0], atol=1e-7)  # the + The
    np.testing.assert_allclose(got[-1][2], [0.0, 0.0], atol=1e-7)  # "saw" gets nothing
    assert got[0][1] != got[4][1] and got[-1][1] == data["other_color"]


@pytest.mark.parametrize("words, hide, norm, layer, head", EXPORTS)
def test_the_enlarged_heads_csv_and_json_are_the_shown_map(case, words, hide, norm, layer, head):
    c, _, _, js = case
    ref = reference(c, words, hide, norm)
    want, labels = ref["maps"][layer, head], ref["labels"]  # (G, G)
    stem = f"attention_L{layer + 1}_H{head + 1}{'_norm' if norm else ''}"
    rows = list(csv.reader(io.StringIO(js["files"][f"{stem}.csv"], newline="")))
    assert rows[0] == ["query \\ key", *labels] and [r[0] for r in rows[1:]] == labels
    tol = (NORM_ATOL if norm else ATOL) + 1e-6  # the levels, then 6 decimals
    np.testing.assert_allclose(np.array([r[1:] for r in rows[1:]], dtype=float), want, atol=tol)
    rec = json.loads(js["files"][f"{stem}.json"])
    assert (rec["layer"], rec["head"], rec["tokens"]) == (layer + 1, head + 1, labels)
    assert rec["view"] == dict(word_level=words, hide_special=hide, by_norm=norm)
    np.testing.assert_allclose(np.array(rec["weights"]), want, atol=tol)


def test_a_links_focus_names_a_token_or_positions(case):
    """The browser's reading of a link's focus, against the expected positions written out by
    hand and against the server's reading (link.resolve_focus_list: the Explorer's page)."""
    _, data, _, _ = case
    labels = data["tokens"]
    T = len(labels)
    assert labels[:4] == ["[CLS]", "heads", "##cope", "shows"]
    cases = {"shows": [3], "SHOWS": [3], "##cope": [2], "[SEP]": [labels.index("[SEP]")],
             "#0": [0], "#3": [3], f"#{T - 1}": [T - 1], f"#{T}": None, "#1,#3": [1, 3],
             "#3,#1,#3": [1, 3], "#2,#99": None, "zzz": None, "#": None, "#-1": None,
             "#1,": None, ",": [labels.index(",")], "#1,shows": None, "shows,#1": None, "#٣": None,
             "#0001": [1], "#1234567": None, "": None}
    raws = list(cases)
    got = run_js(data, f"out({json.dumps(raws)}.map((r) => resolveFocus(r, d.tokens)));")
    assert got == list(cases.values())
    assert [resolve_focus_list(r, labels) for r in raws] == list(cases.values())


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
    enc = bundled.tokenizer(text, return_tensors="pt")
    norms = hf_norm_maps(hf_reference(bundled.path), enc["input_ids"][0],
                         enc["token_type_ids"][0])[:, :, 9].numpy()  # (L, H, T)
    np.testing.assert_allclose(arr(got["norm"]).reshape(L, H, T), rows_to_one(norms),
                               atol=NORM_ATOL)
    missing = arr(got["missing"]).reshape(L, H, T)  # not sent: the browser asks ("need")
    assert np.isnan(missing[[0, 1, 3, 4, 5]]).all()
    np.testing.assert_allclose(missing[2], A[2, :, 6], atol=ATOL)  # the sent layer has it
    np.testing.assert_allclose(arr(got["sent"]["maps"]).reshape(H + 2, T, T)[:H], A[2],
                               atol=ATOL)
    assert got["other"] is None
