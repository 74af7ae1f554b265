"""The Explorer's "By norm ‖αf(x)‖" view (Kobayashi et al. 2020) through AppTest: the norms the
page sends its component, and the views the browser derives from them (explore.js run here by
node, testkit.explore_js: the layer's maps, the focus grid's rows, whole words with [CLS]/[SEP]
hidden), against ||alpha_ij f_h(x_j)|| computed here from transformers' own BertModel (its value
projection, its output projection's columns per head, its eager attention weights;
testkit.models.hf_norm_maps), merged to words and with [CLS]/[SEP] hidden by hand. The switch
itself, its note and titles are the browser's: tests/browser."""

import numpy as np
import pytest

from testkit.apptest import component, explorer_sent, go_to, open_app, survives
from testkit.explore_js import NODE, run_js
from testkit.models import hf_norm_maps, hf_reference
from tests.conftest import require

TELESCOPE = "I saw the man with a telescope."
ATOL = 5e-4  # 16-bit levels times value norms, rows renormalised (docs/limits.md)


@pytest.fixture(scope="module")
def hf(bundled):
    require(NODE is not None, "node is not installed (apt-get install nodejs; .ci/run does)")
    return hf_reference(bundled.path)


def arr(x):
    return np.array([np.nan if v is None else v for v in x], dtype=np.float64)


def norms_by_hand(bert, hf, text) -> np.ndarray:
    enc = bert.encode(text)
    return hf_norm_maps(hf, enc.input_ids, enc.token_type_ids).numpy().astype(np.float64)


def rows_to_one(m):
    return m / m.sum(-1, keepdims=True)


def word_groups_by_hand(bert, text):
    """Each word's pieces from the tokenizer's own word ids; [CLS] and [SEP] alone."""
    ids = bert.tokenizer(text).word_ids()
    groups, seen = [], {}
    for t, w in enumerate(ids):
        if w is None:
            groups.append([t])
        elif w in seen:
            groups[seen[w]].append(t)
        else:
            seen[w] = len(groups)
            groups.append([t])
    return groups


def merged(m, groups):
    """Clark et al. 2019 by hand: sum over a word's key pieces, mean over its query pieces."""
    return np.stack([np.stack([m[..., q, :][..., k].sum(-1) for k in groups], -1).mean(-2)
                     for q in groups], -2)


def test_by_norm_data_and_maps_match_transformers_projections(bundled, hf):
    at = open_app("explorer", text=TELESCOPE, layer="2", head="10", focus="with", norms="1")
    survives(at)
    res = bundled.attend(TELESCOPE)
    q = res.tokens.index("with")
    d = explorer_sent(at)
    assert d["impose"] | {"seq": 0} == dict(layer=1, head=9, focus=[q], norm=True, seq=0)
    raw = norms_by_hand(bundled, hf, TELESCOPE)  # (L, H, T, T)
    shown = rows_to_one(raw)
    L, H, T = raw.shape[:3]
    # what travels: the weights and each head's value norms; the browser's norm maps (their
    # product, testkit's norm_view) within a weight's 16-bit level times a key's value norm
    np.testing.assert_allclose(d["norm"], shown, atol=5e-4)
    np.testing.assert_allclose(d["norm"] * d["norm_sum"][..., None], raw, rtol=1e-3,
                               atol=1e-4 * raw.max())

    got = run_js(component(at, "ex_view"), f"""
      const sv = shownView(d, false, false);
      const rows = focusRows(src, sv, [{q}], true);
      out({{ layer: layerMaps(src, sv, 1, true), rows, top: topKeys(rows, d.layers, d.heads, sv.G),
             weights: layerMaps(src, sv, 1, false) }});
    """)
    maps, sent_raw = arr(got["layer"]["maps"]).reshape(H + 2, T, T), arr(got["layer"]["raw"])
    sent_raw = sent_raw.reshape(H + 2, T, T)
    np.testing.assert_allclose(maps[:H], shown[1], atol=ATOL)
    np.testing.assert_allclose(sent_raw[:H], raw[1], rtol=1e-3, atol=ATOL * raw[1].max())
    # the mean of the heads' shown maps, and the mean of their raw norms in its hover
    np.testing.assert_allclose(maps[H + 1], shown[1].mean(0), atol=ATOL)
    np.testing.assert_allclose(sent_raw[H + 1], raw[1].mean(0), rtol=1e-3,
                               atol=ATOL * raw[1].max())
    # the summed head has no norm form: its map stays the weights, with no raw norm
    np.testing.assert_allclose(maps[H], res.single_head[1].numpy(), atol=ATOL)
    assert np.isnan(sent_raw[H]).all()
    # the focus grid follows the view: each head's row of "with", its top key and weight
    rows = arr(got["rows"]).reshape(L, H, T)
    np.testing.assert_allclose(rows, shown[:, :, q], atol=ATOL)
    np.testing.assert_array_equal(got["top"]["top"], shown[:, :, q].argmax(-1).ravel())
    np.testing.assert_allclose(got["top"]["weight"], shown[:, :, q].max(-1).ravel(), atol=ATOL)
    # off: the weights again, no raw
    np.testing.assert_allclose(arr(got["weights"]["maps"]).reshape(H + 2, T, T)[:H],
                               res.attentions[1].numpy(), atol=ATOL)
    assert got["weights"]["raw"] is None


def test_by_norm_at_word_level_with_special_tokens_hidden(bundled, hf):
    text = "Headscope shows tokenization."
    at = open_app("explorer", text=text, layer="3", words="1", nospecial="1", norms="1")
    survives(at)
    imposed = component(at, "ex_view")["impose"]
    assert imposed | {"seq": 0} == dict(layer=2, words=True, hide=True, norm=True, seq=0)
    raw = norms_by_hand(bundled, hf, text)[2]  # (H, T, T): layer 3
    groups = word_groups_by_hand(bundled, text)
    keep = [i for i, g in enumerate(groups) if not all(bundled.encode(text).special[t]
                                                      for t in g)]
    # shown: rows to one, merged to words as the weights are, [CLS]/[SEP] dropped, rows to one
    shown = rows_to_one(merged(rows_to_one(raw), groups)[:, keep][:, :, keep])
    # raw: the norms merged the same way and the special tokens dropped, never renormalised
    raw_words = merged(raw, groups)[:, keep][:, :, keep]
    got = run_js(component(at, "ex_view"), """
      const sv = shownView(d, true, true);
      out({ labels: sv.labels, lm: layerMaps(src, sv, 2, true) });
    """)
    H, G = bundled.config.num_attention_heads, len(keep)
    assert got["labels"] == ["Headscope", "shows", "tokenization", "."]
    maps = arr(got["lm"]["maps"]).reshape(H + 2, G, G)
    np.testing.assert_allclose(maps[:H], shown, atol=ATOL)
    np.testing.assert_allclose(arr(got["lm"]["raw"]).reshape(H + 2, G, G)[:H], raw_words,
                               rtol=1e-3, atol=ATOL * raw_words.max())
    np.testing.assert_allclose(maps[H + 1], shown.mean(0), atol=ATOL)


def test_a_link_s_switch_is_imposed_once_and_kept_in_a_new_session(bundled):
    at = open_app("explorer", text=TELESCOPE)
    assert component(at, "ex_view")["impose"] is None and "norms" not in at.query_params
    linked = open_app("explorer", text=TELESCOPE, norms="1")
    assert component(linked, "ex_view")["impose"]["norm"] is True
    assert explorer_sent(linked)["norms"] is True
    go_to(linked, "head_view")
    survives(linked)
    go_to(linked, "explorer")  # back: nothing imposed again, the browser keeps its view
    assert component(linked, "ex_view")["impose"] is None
    np.testing.assert_array_equal(explorer_sent(linked)["norm"], explorer_sent(at)["norm"])


def test_one_forward_pass_gives_a_sentences_maps_and_value_norms(monkeypatch):
    """The maps, the summed head and the value norms the Explorer sends come from one
    run of the model per sentence (the forward cache's "v"), not a second pass for the norms."""
    from headscope.ui import explorer_cache, models
    from mha_core.encoder import Encoder

    runs, real = [], Encoder.forward

    def counted(self, *args, **kw):
        runs.append(kw.get("output_attentions", True))
        return real(self, *args, **kw)

    monkeypatch.setattr(Encoder, "forward", counted)
    text = "One pass for the maps and the norms of this fresh sentence."
    d = explorer_cache.explorer_data(models.BUNDLED, text, None, 0, ())
    assert len(runs) == 1 and d["norms"] is True
    explorer_cache.explorer_data(models.BUNDLED, text, None, 2, ())  # cached: no run at all
    assert len(runs) == 1
