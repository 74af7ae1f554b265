"""The Head view page through AppTest: what it sends the attention component (line entries
against bert.attend) and the link (layer, heads, focus, words, nospecial)."""

import numpy as np

from testkit.apptest import component, messages, open_app, survives
from testkit.payloads import unpack_lines

TEXT = "I saw the man with a telescope."


def test_every_line_above_the_floor_is_a_weight_of_bert_attend(bundled):
    at = open_app("head_view", text=TEXT)
    survives(at)
    p = component(at, "hv_lines")
    res = bundled.attend(TEXT)
    A = res.attentions.numpy()  # (L, H, T, T)
    assert p["tokens"] == res.tokens and p["special"] == res.special
    assert (p["layers"], p["heads"]) == A.shape[:2]
    lines = unpack_lines(p)
    for (layer, head), (q, k, w) in lines.items():
        want = A[layer, head]
        assert len(q) == int((want >= p["floor"]).sum())
        np.testing.assert_allclose(w, want[q, k], atol=1e-5)
    # the Explorer's default layer: whose heads disagree most over the examples (layer 2 here)
    assert p["state"]["layer"] == 1 and p["state"]["heads"] == list(range(A.shape[1]))
    qp = dict(at.query_params)
    assert qp["layer"] == "2" and "heads" not in qp and "focus" not in qp


def test_link_sets_layer_heads_focus_and_the_view_toggles(bundled):
    at = open_app("head_view", text="Headscope shows tokenization.", layer="3", heads="1,5",
                  focus="shows", words="1", nospecial="1")
    survives(at)
    p = component(at, "hv_lines")
    assert p["tokens"] == ["Headscope", "shows", "tokenization", "."]  # words, no [CLS]/[SEP]
    assert p["state"]["layer"] == 2 and p["state"]["heads"] == [0, 4]
    assert p["state"]["focus"] == {"side": "q", "i": 1}
    res = bundled.attend("Headscope shows tokenization.")
    labels, groups = res.words()
    A = res.attentions.numpy()[2, 4]  # layer 3, head 5
    # by hand: sum over a word's key pieces, average over its query pieces; drop [CLS]/[SEP]
    W = np.array([[A[np.ix_(qg, kg)].sum(-1).mean() for kg in groups] for qg in groups])
    keep = [i for i, g in enumerate(groups) if not all(res.special[t] for t in g)]
    W = W[np.ix_(keep, keep)]
    W = W / W.sum(-1, keepdims=True)
    q, k, w = unpack_lines(p)[(2, 4)]
    np.testing.assert_allclose(w, W[q, k], atol=1e-5)
    qp = dict(at.query_params)
    assert (qp["layer"], qp["heads"], qp["focus"], qp["words"], qp["nospecial"]) == \
        ("3", "1,5", "shows", "1", "1")


def test_nonsense_link_gets_messages(bundled):
    at = open_app("head_view", text=TEXT, layer="99", heads="2,x,400", focus="zzz")
    survives(at)
    said = messages(at)
    assert "layer 99 is outside 1–6" in said
    assert "like heads=1,3,5" in said and "focus token is not in this sentence" in said
    p = component(at, "hv_lines")
    assert p["state"]["layer"] == 5 and p["state"]["heads"] == list(range(12))


def test_bad_text_gets_a_message(bundled):
    at = open_app("head_view", text="   ")
    survives(at)
    assert "Type a sentence" in messages(at) and component(at, "hv_lines") is None
