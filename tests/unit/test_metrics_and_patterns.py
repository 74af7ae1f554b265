"""Head metrics, pattern labels, rollout and the two-readings distance, on hand-built maps whose
answers are known without running our code."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_core import ablation as ab
from mha_core import metrics as mt
from mha_core import patterns as pt
from mha_core import rollout as ro
from mha_core import shown

TOKENS = ["[CLS]", "i", "saw", "the", "man", ",", "with", "a", "telescope", ".", "[SEP]"]
SPECIAL = [True] + [False] * 9 + [True]
T = len(TOKENS)
KINDS = mt.token_kinds(TOKENS, SPECIAL)


def one_hot_map(target) -> torch.Tensor:
    """Row i puts all its weight on key target(i)."""
    att = torch.zeros(T, T)
    for i in range(T):
        att[i, target(i)] = 1.0
    return att


def metrics_and_label(att):
    m = mt.head_metrics(att, KINDS)
    return m, pt.label_heads(m)


def test_token_kinds():
    assert KINDS["cls"].tolist() == [True] + [False] * 10
    assert KINDS["sep"].tolist() == [False] * 10 + [True]
    assert [TOKENS[i] for i in np.flatnonzero(KINDS["punct"])] == [",", "."]
    assert mt.is_punctuation("?!") and mt.is_punctuation("」")
    assert not mt.is_punctuation("a.") and not mt.is_punctuation("")


def test_previous_token_map():
    # row 0 has no previous token, so it looks at the next one: every row is at distance 1
    m, label = metrics_and_label(one_hot_map(lambda i: i - 1 if i else 1))
    assert label == "previous-token"
    assert m["distance"] == pytest.approx(1.0)
    assert m["prev"] == pytest.approx(1.0)
    assert m["confidence"] == pytest.approx(1.0)
    assert m["entropy"] == pytest.approx(0.0, abs=1e-6)


def test_next_token_and_self_maps():
    m, label = metrics_and_label(one_hot_map(lambda i: i + 1 if i < T - 1 else i - 1))
    assert label == "next-token" and m["next"] == pytest.approx(1.0)
    m, label = metrics_and_label(one_hot_map(lambda i: i))
    assert label == "self/diagonal" and m["self"] == 1.0 and m["distance"] == 0.0


def test_uniform_map_is_broad_with_entropy_log_t():
    m, label = metrics_and_label(torch.full((T, T), 1 / T))
    assert m["entropy"] == pytest.approx(math.log(T), rel=1e-5)
    assert m["entropy_frac"] == pytest.approx(1.0, rel=1e-5)
    assert m["confidence"] == pytest.approx(1 / T)
    assert m["cls"] == pytest.approx(1 / T) and m["punct"] == pytest.approx(2 / T)
    assert label == "broad"


def test_sink_maps():
    assert metrics_and_label(one_hot_map(lambda i: 0))[1] == "[CLS]-sink"
    assert metrics_and_label(one_hot_map(lambda i: T - 1))[1] == "[SEP]-sink"
    m, label = metrics_and_label(one_hot_map(lambda i: 9))  # every row on "."
    assert label == "punctuation" and m["punct"] == 1.0


def test_mixed_map_is_heterogeneous():
    # 0.4 on [CLS], 0.4 on the previous token, 0.2 on itself: no rule passes
    att = torch.zeros(T, T)
    for i in range(1, T):
        att[i, 0] += 0.4
        att[i, i - 1] += 0.4
        att[i, i] += 0.2
    att[0, 0] = 1.0
    m, label = metrics_and_label(att)
    assert label == "heterogeneous"
    assert m["cls"] == pytest.approx((1 + 10 * 0.4 + 0.4) / T)  # row 1's previous token is [CLS]


def test_broad_threshold_matches_clark_at_128_tokens():
    assert pt.BROAD_FRACTION * math.log(128) == pytest.approx(3.8)
    assert set(pt.LABELS) == set(pt.BY_LABEL) and len({p.short for p in pt.PATTERNS}) == len(
        pt.LABELS)


def test_metrics_keep_leading_dims():
    att = torch.rand(3, 4, T, T).softmax(-1)  # (L, H, T, T)
    m = mt.head_metrics(att, KINDS)
    assert all(v.shape == (3, 4) for v in m.values())
    assert pt.label_heads(m).shape == (3, 4)
    # the same numbers as one map at a time
    single = mt.head_metrics(att[2, 1], KINDS)
    for k in m:
        assert m[k][2, 1] == pytest.approx(float(single[k]), rel=1e-5)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 20), st.integers(0, 2**31 - 1))
def test_shares_are_probabilities(n, seed):
    g = torch.Generator().manual_seed(seed)
    att = (torch.randn(2, 3, n, n, generator=g) * 3).softmax(-1)
    tokens = ["[CLS]"] + ["."] * (n - 2) + ["[SEP]"]
    m = mt.head_metrics(att, mt.token_kinds(tokens, [True] + [False] * (n - 2) + [True]))
    total = m["cls"] + m["sep"] + m["punct"]
    assert np.all(total <= 1 + 1e-5) and np.all(total >= 1 - 1e-5)  # every key is one of them
    for k in ("prev", "next", "self", "confidence", "entropy_frac"):
        assert np.all(m[k] >= -1e-6) and np.all(m[k] <= 1 + 1e-5)
    assert np.all(m["distance"] <= n - 1)


def test_rollout_of_identity_is_identity():
    att = torch.eye(5).expand(4, 3, 5, 5)  # (L, H, T, T)
    r = ro.rollout(att)
    assert r.shape == (4, 5, 5)
    torch.testing.assert_close(r, torch.eye(5).expand(4, 5, 5))


def test_rollout_rows_sum_to_one_and_follow_the_formula():
    att = torch.rand(3, 2, 6, 6).softmax(-1)
    r = ro.rollout(att)
    torch.testing.assert_close(r.sum(-1), torch.ones(3, 6))
    a = [0.5 * att[i].mean(0) + 0.5 * torch.eye(6) for i in range(3)]  # rows already sum to 1
    torch.testing.assert_close(r[0], a[0])
    torch.testing.assert_close(r[2], a[2] @ a[1] @ a[0])


def test_rollout_of_cls_heads_flows_to_cls():
    # every head on [CLS]: after many layers, every token draws (almost) only from [CLS]
    att = torch.zeros(12, 2, 4, 4)
    att[..., 0] = 1.0
    r = ro.rollout(att)
    assert torch.all(r[-1, :, 0] > 0.99)


def test_top_k_mask():
    imp = np.array([[0.1, 0.5, 0.3], [0.9, 0.2, 0.4]])
    assert ab.top_k_mask(imp, 1).tolist() == [[0, 1, 0], [1, 0, 0]]
    assert ab.top_k_mask(imp, 2).tolist() == [[0, 1, 1], [1, 0, 1]]
    assert ab.top_k_mask(imp, 0).sum() == 0 and ab.top_k_mask(imp, 3).sum() == 6


def test_map_change_is_total_variation():
    a = torch.tensor([[1.0, 0.0], [0.5, 0.5]])
    b = torch.tensor([[0.0, 1.0], [0.5, 0.5]])
    assert ab.map_change(a, b) == pytest.approx(0.5)  # row 0 moves fully, row 1 not at all
    assert ab.map_change(a, a) == 0.0


def test_output_change_is_one_minus_cosine():
    x = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    y = torch.tensor([[[1.0, 0.0], [2.0, 0.0]], [[3.0, 0.0], [0.0, 5.0]]])  # (2, T, D)
    torch.testing.assert_close(ab.output_change(x, y), torch.tensor([[0.0, 1.0], [0.0, 0.0]]))


def test_reading_difference_matches_words_across_lengths():
    la = ["[CLS]", "I", "saw", "the", "man", "with", "a", "telescope", ".", "[SEP]"]
    lb = ["[CLS]", "i", "saw", "the", "man", "with", "a", "hat", ".", "[SEP]"]
    row = np.zeros(10)
    row[2] = 1.0  # "with" -> "saw" in both
    assert shown.reading_difference(row, la, row, lb) == 0.0
    ra, rb = np.zeros(10), np.zeros(10)
    ra[7], rb[7] = 0.6, 0.6  # 0.6 on "telescope" vs on "hat": words in one sentence only
    ra[2], rb[4] = 0.4, 0.4  # 0.4 on "saw" vs 0.4 on "man"
    assert shown.reading_difference(ra, la, rb, lb) == pytest.approx(1.0)
    # a shorter sentence: "the" twice in A is one target
    lc = ["[CLS]", "the", "man", "saw", "the", "dog", "[SEP]"]
    rc = np.array([0, 0.25, 0, 0, 0.25, 0.5, 0])
    rd = np.zeros(10)
    rd[3], rd[9] = 0.5, 0.5  # "the" 0.5, [SEP] 0.5
    # the: |0.5 - 0.5| = 0; dog: 0.5; [SEP]: 0.5  -> TV 0.5
    assert shown.reading_difference(rc, lc, rd, la) == pytest.approx(0.5)


def test_reading_difference_over_the_shared_words_only():
    la = ["[CLS]", "I", "saw", "the", "man", "with", "a", "telescope", ".", "[SEP]"]
    lb = ["[CLS]", "i", "saw", "the", "man", "with", "a", "hat", ".", "[SEP]"]
    assert shown.words_in_one_only(la, lb) == (["telescope"], ["hat"])
    ra, rb = np.zeros(10), np.zeros(10)
    ra[7], ra[2], ra[4] = 0.5, 0.25, 0.25  # telescope .5, saw .25, man .25
    rb[7], rb[2], rb[4] = 0.8, 0.05, 0.15  # hat .8, saw .05, man .15
    # by hand, among the shared words: A saw .5 man .5; B saw .25 man .75 -> TV 0.25
    assert shown.reading_difference(ra, la, rb, lb, shared_only=True) == pytest.approx(0.25)
    # the union instead: telescope .5 + hat .8 + |.25-.05| + |.25-.15| = 1.6 -> 0.8
    assert shown.reading_difference(ra, la, rb, lb) == pytest.approx(0.8)
    # all of A's weight on the word B lacks: A counts as uniform over the shared words
    ra = np.zeros(10)
    ra[7] = 1.0
    rb = np.full(10, 0.0)
    rb[[0, 1, 2, 3, 4, 5, 6, 8, 9]] = 1 / 9
    assert shown.reading_difference(ra, la, rb, lb, shared_only=True) == pytest.approx(0.0)
    assert shown.reading_difference(ra, ["x"], rb[:1], ["y"], shared_only=True) == 0.0


def test_reading_difference_keeps_leading_dims_and_find_word():
    la, lb = ["[CLS]", "x", "[SEP]"], ["[CLS]", "y", "z", "[SEP]"]
    ra = torch.rand(2, 3, 3).softmax(-1).numpy()
    rb = torch.rand(2, 3, 4).softmax(-1).numpy()
    d = shown.reading_difference(ra, la, rb, lb)
    assert d.shape == (2, 3) and np.all(d >= 0) and np.all(d <= 1 + 1e-9)
    assert shown.find_word(["[CLS]", "I", "With", "with"], "with") == 2
    assert shown.find_word(["[CLS]", "I"], "telescope") is None


def test_kovaleva_types():
    # 0.4 on [CLS] plus 0.4 on the previous token: heterogeneous label, vertical+diagonal type
    att = torch.zeros(T, T)
    for i in range(1, T):
        att[i, 0] += 0.4
        att[i, i - 1] += 0.4
        att[i, i] += 0.2
    att[0, 0] = 1.0
    maps = torch.stack([att, one_hot_map(lambda i: 0), torch.full((T, T), 1 / T)])
    m = mt.head_metrics(maps, KINDS)
    labels = pt.label_heads(m)
    assert labels.tolist() == ["heterogeneous", "[CLS]-sink", "broad"]
    assert pt.kovaleva_types(m, labels).tolist() == ["vertical+diagonal", "vertical",
                                                      "heterogeneous (broad)"]


def test_the_atlas_key_names_every_short_label_in_full():
    """Every corner label a thumbnail can carry is spelled out ("het = heterogeneous"), and each
    metric a table shows has a heading in words."""
    key = pt.key_line()
    for p in pt.PATTERNS:
        assert p.short == p.label or f"{p.short} = {p.label}" in key
    assert set(mt.NAMES) == set(mt.METRICS)
    assert all(name != short for short, name in mt.NAMES.items())


def test_a_decoders_first_token_sink_is_named_and_bert_keeps_cls():
    """Rows after the first putting 0.8 on token 0: a decoder's first-token sink (no special
    token there); the same map over [CLS] first is a [CLS]-sink (the rule above it wins)."""
    from mha_core.metrics import head_metrics, token_kinds
    from mha_core.patterns import kovaleva_types, label_heads

    T = 6
    att = torch.tril(torch.full((T, T), 0.2 / (T - 1)))
    att[:, 0] = 0.8
    att = att / att.sum(-1, keepdim=True)  # rows sum to 1, causal
    att[0] = torch.eye(T)[0]
    words = ["The", "cat", "sat", "on", "mats", "."]
    m = head_metrics(att[None], token_kinds(words, [False] * T))
    assert abs(float(m["first"][0]) - float(att[1:, 0].mean())) < 1e-6
    labels = label_heads(m)
    assert labels[0] == "first-token sink" and kovaleva_types(m, labels)[0] == "vertical"
    bert = ["[CLS]", "cat", "sat", "on", "mats", "[SEP]"]
    m = head_metrics(att[None], token_kinds(bert, [True, False, False, False, False, True]))
    assert label_heads(m)[0] == "[CLS]-sink"


def test_a_uniform_causal_head_is_broad_and_row_zero_is_not_self():
    """Row i of a decoder reaches i + 1 keys: a head uniform over them has entropy_frac 1 when
    told its maps are causal (by log T it would read 0.66 at T = 10, under 'broad'); row 0, all
    on itself by force, does not count for self or confidence."""
    from mha_core.metrics import head_metrics, token_kinds

    T = 10
    att = torch.tril(torch.ones(T, T))
    att = att / att.sum(-1, keepdim=True)  # uniform over what each row can see
    kinds = token_kinds(["w"] * T, [False] * T)
    causal = head_metrics(att[None], kinds, causal=True)
    plain = head_metrics(att[None], kinds)
    assert abs(float(causal["entropy_frac"][0]) - 1.0) < 1e-5
    assert float(plain["entropy_frac"][0]) < 0.7
    expected = float(np.mean([1 / (i + 1) for i in range(1, T)]))  # the diagonal, rows 1..
    assert abs(float(causal["self"][0]) - expected) < 1e-6
    assert abs(float(causal["confidence"][0]) - expected) < 1e-6
