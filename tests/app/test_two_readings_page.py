"""AppTest of Two readings on the bundled model: the difference grid is L x H, sorted in the
table, 0 for identical sentences, and a missing focus word gives a message."""

import numpy as np

from testkit.apptest import array, chart, open_app


def run_page():
    return open_app("two_readings")


def grid(at) -> np.ndarray:
    return array(chart(at, "tr_grid")["data"][0]["z"])


def test_the_guides_link_opens_on_the_guides_head(bundled):
    """docs/teaching.md's Two readings link names no head: the page opens on L2 H10, the head
    the guide discusses, and names its statistic in words."""
    at = open_app("two_readings", a="The astronomer saw the man with a telescope.",
                  b="The man saw the astronomer with a telescope.", focus="with")
    assert at.selectbox(key="tr_head").value == "L2 H10"
    assert chart(at, "tr_grid")["data"][0]["colorbar"]["title"]["text"] == "total variation"


def test_difference_grid_is_layers_by_heads(bundled):
    at = run_page()
    assert not at.exception
    assert at.text_input(key="tr_a").value == "I saw the man with a telescope."
    # the head shown first is the one that changes most in the Explorer's layer (layer 2)
    diff = grid(at)
    head = int(np.argmax(diff[1]))
    assert at.selectbox(key="tr_head").value == f"L2 H{head + 1}"
    at.toggle(key="tr_shared").set_value(False).run()  # every word counts
    diff = grid(at)
    assert diff.shape == (6, 12)
    assert (diff >= 0).all() and (diff <= 1 + 1e-9).all() and diff.max() > 0.3
    table = at.dataframe[0].value
    assert len(table) == 72 and table["difference"].is_monotonic_decreasing


def test_where_the_focus_word_looks_in_each_sentence(bundled):
    """The A and B grids: in every head, the word that "with" attends to most, recomputed here
    from bert.attend with the Clark et al. merge done by hand (sum to a word, mean from it)."""
    at = run_page()
    for side, text in (("A", at.text_input(key="tr_a").value),
                       ("B", at.text_input(key="tr_b").value)):
        res = bundled.attend(text)
        att = res.attentions.numpy()  # (L, H, T, T)
        labels, groups = res.words()
        g = [w.lower() for w in labels].index("with")
        rows = np.stack([att[:, :, groups[g], :][..., k].sum(-1).mean(-1)
                         for k in groups], axis=-1)  # (L, H, G): from "with" to each word
        fig = chart(at, f"tr_focus_{side}")
        cells = np.array(fig["data"][0]["customdata"], dtype=object)  # (L, H, 2): word, weight
        assert cells.shape[:2] == (6, 12)
        assert [[str(c) for c in r] for r in cells[..., 0]] == \
            [[labels[k] for k in r] for r in rows.argmax(-1)]
        np.testing.assert_allclose(cells[..., 1].astype(float), rows.max(-1), atol=1e-3)
        assert fig["layout"]["title"]["text"].startswith(f"Sentence {side}:")
        table = at.dataframe[0].value  # sorted by difference: match its rows by head name
        by_head = dict(zip(table["head"], table[f"{side}: top key"]))
        top = rows.argmax(-1)  # (L, H)
        assert by_head == {f"L{layer + 1} H{head + 1}": labels[top[layer, head]]
                           for layer in range(6) for head in range(12)}


def hand_rows(bundled, text, word="with"):
    """(L, H, G) where `word` attends, merged to words by hand (sum to, mean from), and the
    words lower-cased."""
    res = bundled.attend(text)
    att = res.attentions.numpy()  # (L, H, T, T)
    labels, groups = res.words()
    g = [w.lower() for w in labels].index(word)
    rows = np.stack([att[:, :, groups[g], :][..., k].sum(-1).mean(-1) for k in groups], -1)
    return rows, [w.lower() for w in labels]


def test_leaving_out_the_differing_words_against_a_hand_computation(bundled):
    """On by default: "telescope" and "hat" are left out, each sentence's shares renormalised
    over the words both have, and the page says which words it left out."""
    at = run_page()
    assert at.toggle(key="tr_shared").value is True
    said = " ".join(c.value for c in at.caption)
    assert "Left out" in said and "telescope" in said and "hat" in said
    ra, la = hand_rows(bundled, "I saw the man with a telescope.")
    rb, lb = hand_rows(bundled, "I saw the man with a hat.")
    shared = [w for w in dict.fromkeys(la) if w in lb]
    pa = np.stack([ra[..., [i for i, x in enumerate(la) if x == w]].sum(-1) for w in shared], -1)
    pb = np.stack([rb[..., [i for i, x in enumerate(lb) if x == w]].sum(-1) for w in shared], -1)
    pa, pb = pa / pa.sum(-1, keepdims=True), pb / pb.sum(-1, keepdims=True)
    np.testing.assert_allclose(grid(at), 0.5 * np.abs(pa - pb).sum(-1), atol=1e-5)


def test_the_lessons_pair_puts_layer_2_head_10_near_the_top(bundled):
    """docs/teaching.md's Two readings link: who has the telescope? L2 H10 sends "with" to the
    noun just before it, so it moves between "man" and "astronomer": second of 72 heads."""
    at = open_app("two_readings", a="The astronomer saw the man with a telescope.",
                  b="The man saw the astronomer with a telescope.", focus="with")
    assert at.selectbox(key="tr_pair").value == "Who has the telescope?"
    table = at.dataframe[0].value
    assert "L2 H10" in list(table["head"][:3])
    assert table.set_index("head").loc["L2 H10", "A: top key"] == "man"
    assert table.set_index("head").loc["L2 H10", "B: top key"] == "astronomer"


def test_the_link_keeps_the_sentences_the_word_the_head_and_the_choice(bundled):
    at = run_page()
    at.text_input(key="tr_a").input("We sat by the bank.").run()
    at.text_input(key="tr_b").input("We went to the bank.").run()
    at.text_input(key="tr_focus").input("bank").run()
    at.selectbox(key="tr_head").select("L3 H4").run()
    at.toggle(key="tr_shared").set_value(False).run()
    qp = dict(at.query_params)
    assert (qp["a"], qp["b"], qp["focus"], qp["head"], qp["shared"]) == \
        ("We sat by the bank.", "We went to the bank.", "bank", "L3 H4", "0")
    again = open_app("two_readings", **qp)
    assert again.text_input(key="tr_a").value == "We sat by the bank."
    assert again.selectbox(key="tr_head").value == "L3 H4"
    assert again.toggle(key="tr_shared").value is False
    assert again.selectbox(key="tr_pair").value == "Your own"
    np.testing.assert_allclose(grid(again), grid(at))
    bad = open_app("two_readings", head="L99 H1x")
    assert any("not a head name" in w.value for w in bad.warning)
    outside = open_app("two_readings", head="L9 H1")
    assert any("not in this model (6 layers × 12 heads)" in w.value for w in outside.warning)


def test_same_sentence_twice_gives_zero_everywhere(bundled):
    at = run_page()
    at.text_input(key="tr_b").input("I saw the man with a telescope.").run()
    assert np.allclose(grid(at), 0, atol=1e-6)


def test_presets_and_head_choice(bundled):
    at = run_page()
    at.selectbox(key="tr_pair").select("Who has the telescope?").run()
    assert at.text_input(key="tr_b").value == "The man saw the astronomer with a telescope."
    at.selectbox(key="tr_head").select("L2 H3").run()
    titles = [a["text"] for a in chart(at, "tr_pair_maps")["layout"]["annotations"]]
    assert titles == ["A · L2 H3", "B · L2 H3"]


def test_missing_focus_word_and_empty_input(bundled):
    at = run_page()
    at.text_input(key="tr_focus").input("telescope").run()  # not in "… with a hat."
    assert not at.exception
    assert any("not a word of sentence B" in w.value for w in at.warning)
    assert any("hat" in c.value for c in at.code)
    at.text_input(key="tr_focus").input("").run()
    assert any("focus token" in i.value for i in at.info)
    at.text_input(key="tr_a").input("").run()
    assert any("Type two sentences" in i.value for i in at.info)


def test_odd_sentences(bundled):
    at = run_page()
    at.text_input(key="tr_a").input("<b>with</b> 🙂 我 with").run()
    at.text_input(key="tr_b").input("with\x00 ראיתי").run()
    assert not at.exception
    assert grid(at).shape == (6, 12)


def test_a_word_keeps_its_colour_in_both_readings(bundled):
    at = open_app("two_readings", a="The astronomer saw the man with a telescope.",
                  b="The man saw the astronomer with a telescope.", focus="with")
    colour = {}
    for side in ("A", "B"):
        fig = chart(at, f"tr_focus_{side}")["data"][0]
        scale = [c for _, c in fig["colorscale"]][::2]  # one colour per distinct top key
        tops = {t for row in fig["text"] for t in row}
        assert len(scale) == len(tops)
        z = array(fig["z"])
        for row_t, row_z in zip(fig["text"], z):
            for t, k in zip(row_t, row_z):
                colour.setdefault(t, set()).add(scale[int(k)])
    for word in ("man", "astronomer", "saw"):
        if word in colour:
            assert len(colour[word]) == 1, (word, colour[word])  # the same in A and in B


def test_the_shared_sentence_gives_way_to_the_sentences_compared(bundled):
    """The sidebar's sentence ("I saw the man…" from other pages) is not shown beside the two
    sentences compared: a note says the page types its own; in presentation mode too."""
    at = run_page()
    assert not at.sidebar.text_area
    assert any("compares its own two sentences, A and B" in i.value for i in at.sidebar.info)
    shown = open_app("two_readings", present="1")
    assert not [t for t in shown.text_input if t.key == "text"]
    assert any("compares its own sentences, A and B" in c.value for c in shown.caption)
    assert shown.text_input(key="tr_a").value  # the page's own boxes are still there
