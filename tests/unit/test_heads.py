"""One head identity: shown from 1, parsed back, in the order of a flattened (L, H) array."""

import numpy as np
import pytest

from mha_core.heads import HeadId, head_labels, head_names, layer_names


def test_format_and_parse_round_trip():
    assert str(HeadId(1, 9)) == "L2 H10"
    assert HeadId.parse("L2 H10") == HeadId(1, 9)
    assert HeadId.parse(" l2h10 ") == HeadId(1, 9)
    for h in HeadId.every(12, 12):
        assert HeadId.parse(str(h)) == h


@pytest.mark.parametrize("bad", ["", "L0 H1", "L1 H0", "2-10", "L2 H", "L-1 H2", "L1 H2 x",
                                 "L" + "9" * 9 + " H1", None])
def test_bad_names_are_refused(bad):
    with pytest.raises(ValueError, match="not a head name"):
        HeadId.parse(bad)


def test_order_matches_a_flattened_array():
    L, H = 3, 4
    values = np.arange(L * H).reshape(L, H)
    for i, (name, head) in enumerate(zip(head_names(L, H), HeadId.every(L, H))):
        assert values[head.layer, head.head] == values.ravel()[i] == head.index(H)
        assert name == str(head)
    assert layer_names(2) == ["L1", "L2"] and head_labels(3) == ["H1", "H2", "H3"]


def test_layer_names_parse_back():
    from mha_core.heads import parse_layer

    assert [parse_layer(x) for x in layer_names(3)] == [0, 1, 2]
    assert parse_layer(" l12 ") == 11
    for bad in ("L0", "3", "L3 H1", ""):
        with pytest.raises(ValueError, match="not a layer name"):
            parse_layer(bad)
