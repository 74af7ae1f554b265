"""What the attention component is sent (headscope/ui/attention/payload.py): binary arrays that
decode (testkit.payloads, held to the browser's decoder by test_payload_fixtures.py) to what
was encoded, line entries that are exactly the weights above the floor, and sizes
that stay bounded at 512 tokens."""

import base64
import json

import numpy as np
import pytest

from headscope.ui.attention.payload import (
    DENSE_F4_BYTES,
    MAX_LINES,
    grid_payload,
    line_floor,
    lines_payload,
    pack,
)
from headscope.ui.style import DIVERGING
from testkit.payloads import payload_bytes, unpack, unpack_lines


def softmax_maps(rng, *shape, sharp=4.0):
    """Random attention maps whose rows sum to 1 (a few peaked entries per row)."""
    x = rng.standard_normal(shape) * sharp
    e = np.exp(x - x.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


def test_pack_round_trips_every_dtype():
    rng = np.random.default_rng(0)
    w = softmax_maps(rng, 3, 7, 7)
    np.testing.assert_array_equal(unpack(pack(w, "f4")), w)  # float32 exactly
    assert np.abs(unpack(pack(w, "u2")) - w).max() <= 0.5 / 65535 + 1e-7
    assert np.abs(unpack(pack(w, "u1")) - w).max() <= 0.5 / 255 + 1e-7
    idx = np.array([0, 1, 511, 32767])
    np.testing.assert_array_equal(unpack(pack(idx, "i2")), idx)
    big = np.array([0, 2**31 + 5])
    np.testing.assert_array_equal(unpack(pack(big, "u4")), big)
    d = pack(w, "f4")
    assert set(d) == {"dtype", "shape", "b64"} and d["shape"] == [3, 7, 7]
    assert len(d["b64"]) == 4 * -(-w.nbytes // 3)  # base64 of the raw bytes, nothing else
    with pytest.raises(ValueError):
        pack(w, "f8")


def test_grid_payload_is_float32_while_small_and_16_bit_beyond():
    rng = np.random.default_rng(1)
    small = softmax_maps(rng, 14, 12, 12)
    p = grid_payload(small, [f"t{i}" for i in range(12)], [False] * 12, ["x"] * 14, heads=12,
                     selected=3)
    assert p["maps"]["dtype"] == "f4" and p["heads"] == 12 and p["selected"] == 3
    np.testing.assert_array_equal(unpack(p["maps"]), small)
    json.dumps(p)  # plain JSON: no numpy types left
    G = int(np.sqrt(DENSE_F4_BYTES / 4 / 14)) + 8  # just past the float32 budget
    big = softmax_maps(rng, 14, G, G)
    p = grid_payload(big, ["t"] * G, [False] * G, ["x"] * 14, heads=12)
    assert p["maps"]["dtype"] == "u2"
    assert np.abs(unpack(p["maps"]) - big).max() < 1e-5


def test_grid_payload_carries_raw_norms_a_range_and_the_maskable_labels():
    rng = np.random.default_rng(6)
    maps = softmax_maps(rng, 3, 5, 5)
    raw = rng.uniform(0, 9, (3, 5, 5)).astype(np.float32)
    raw[1] = np.nan  # a map without raw values (the single head)
    p = grid_payload(maps, list("abcde"), [True, False, False, False, True], ["x"] * 3,
                     heads=2, raw=raw, maskable=[False, True, True, True, False])
    assert p["range"] == [0.0, 1.0] and p["raw"]["dtype"] == "f4"
    np.testing.assert_array_equal(unpack(p["raw"]), raw)  # NaN included
    assert p["maskable"] == [False, True, True, True, False]
    json.dumps(p)
    with pytest.raises(ValueError):
        grid_payload(maps, list("abcde"), [False] * 5, ["x"] * 3, heads=2, raw=raw[:2])
    plain = grid_payload(maps, list("abcde"), [False] * 5, ["x"] * 3, heads=2)
    assert "raw" not in plain and "maskable" not in plain

    # a difference in [-1, 1]: float32 whatever its size (16-bit levels hold 0..1 only)
    G = int(np.sqrt(DENSE_F4_BYTES / 4 / 14)) + 8
    diff = (softmax_maps(rng, 14, G, G) - softmax_maps(rng, 14, G, G))
    p = grid_payload(diff, ["t"] * G, [False] * G, ["x"] * 14, heads=12,
                     value_range=(-1, 1), colorscale=DIVERGING)
    assert p["maps"]["dtype"] == "f4" and p["range"] == [-1.0, 1.0]
    assert p["colorscale"] == DIVERGING
    np.testing.assert_array_equal(unpack(p["maps"]), diff)
    lines = lines_payload(softmax_maps(rng, 1, 2, 4, 4), list("abcd"), [False] * 4,
                          maskable=[0, 1, 1, 0])
    assert lines["maskable"] == [False, True, True, False]


def test_the_diverging_scale_is_blue_white_red():
    assert DIVERGING[0][0] == 0 and DIVERGING[-1][0] == 1
    assert dict((t, c) for t, c in DIVERGING)[0.5] == "rgb(255,255,255)"  # 0: white
    r0, _, b0 = (int(x) for x in DIVERGING[0][1][4:-1].split(","))
    r1, _, b1 = (int(x) for x in DIVERGING[-1][1][4:-1].split(","))
    assert b0 > r0 and r1 > b1  # -1 blue, +1 red


def test_grid_payload_at_512_tokens_is_bounded():
    rng = np.random.default_rng(2)
    maps = softmax_maps(rng, 14, 512, 512)
    p = grid_payload(maps, ["tok"] * 512, [False] * 512, ["x"] * 14, heads=12)
    # 16-bit levels: 2 bytes a weight, 4/3 for base64, plus the small JSON around them
    assert payload_bytes(p) < 14 * 512 * 512 * 2 * 4 / 3 + 20_000


def test_line_entries_are_every_weight_above_the_floor_strongest_first():
    rng = np.random.default_rng(3)
    att = softmax_maps(rng, 2, 3, 9, 9)  # (L, H, G, G)
    p = lines_payload(att, [f"t{i}" for i in range(9)], [False] * 9, segments=[0] * 4 + [1] * 5,
                      min_weight=0.01)
    assert p["floor"] == 0.01 and p["layers"] == 2 and p["heads"] == 3
    got = unpack_lines(p)
    total = 0
    for (layer, head), (q, k, w) in got.items():
        want = att[layer, head]
        above = np.argwhere(want >= 0.01)
        assert len(q) == len(above)  # every weight above the floor, nothing else
        assert {(int(a), int(b)) for a, b in zip(q, k)} == {tuple(x) for x in above}
        assert np.abs(w - want[q, k]).max() <= 0.5 / 65535 + 1e-7
        assert np.all(np.diff(w) <= 1e-6)  # the strongest first
        total += len(q)
    assert p["n_lines"] == total
    assert p["segments"] == [0] * 4 + [1] * 5


def test_lines_are_capped_by_raising_the_floor():
    rng = np.random.default_rng(4)
    att = softmax_maps(rng, 6, 12, 64, 64, sharp=1.0)  # broad: many weights over 0.005
    cap = 5_000
    floor = line_floor(att, 0.005, cap)
    assert floor > 0.005
    p = lines_payload(att, ["t"] * 64, [False] * 64, min_weight=0.005, max_lines=cap)
    assert p["n_lines"] <= cap and p["floor"] == floor
    sent = np.concatenate([w for _, _, w in unpack_lines(p).values()])
    assert sent.min() >= floor - 1e-4
    # nothing stronger than the floor was left out
    assert (att >= floor).sum() == p["n_lines"]


def test_lines_payload_at_512_tokens_is_bounded():
    """The bundled shape at 512 tokens: 72 heads x 512^2 weights; at most MAX_LINES go."""
    rng = np.random.default_rng(5)
    att = softmax_maps(rng, 6, 12, 512, 512, sharp=2.0)
    p = lines_payload(att, ["tok"] * 512, [False] * 512)
    assert p["n_lines"] <= MAX_LINES and p["floor"] > 0.01  # the cap raised the floor
    assert payload_bytes(p) < MAX_LINES * 6 * 4 / 3 + 50_000  # ~2 MB, not bertviz's 500 MB


def test_causal_maps_travel_as_lower_triangles():
    """A decoder's (..., T, T) maps are sent as T (T + 1) / 2 values a map and come back whole,
    zeros above the diagonal; an encoder's are sent whole."""
    g = np.random.default_rng(0)
    T = 7
    maps = np.tril(g.random((2, 3, T, T))).astype(np.float32)  # (L, H, T, T)
    for dtype in ("f4", "u2"):
        d = pack(maps, dtype, tril=True)
        assert d["tril"] is True and d["shape"] == [2, 3, T, T]
        size = 4 if dtype == "f4" else 2
        assert len(base64.b64decode(d["b64"])) == 2 * 3 * T * (T + 1) // 2 * size
        np.testing.assert_allclose(unpack(d), maps, atol=1 / 65535 if dtype == "u2" else 0)
    assert "tril" not in pack(maps, "u2")
