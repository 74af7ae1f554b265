"""The Explorer page through Streamlit's AppTest: the figures' numbers against bert.attend."""

import numpy as np
import pytest

from headscope.ui import models, presets, style
from headscope.ui.attention import unpack
from headscope.ui.guards import MAX_CHARS
from testkit.apptest import charts, component, components, messages, open_app

ATOL = 1e-6  # the figures carry float32


def entropy_np(m: np.ndarray) -> float:
    """Mean row entropy in nats, computed here independently of mha_core."""
    p = np.clip(m, 1e-12, None)
    return float(np.mean(-(m * np.log(p)).sum(-1)))


def jsd_np(maps: np.ndarray) -> float:
    """The heads' disagreement as the mean KL(head || mean of heads) (= the generalised JSD)."""
    m = maps.mean(0, keepdims=True)  # (1, T, T)
    kl = (maps * (np.log(np.clip(maps, 1e-12, None)) - np.log(np.clip(m, 1e-12, None)))).sum(-1)
    return float(kl.mean())


def shown(at):
    """What the page sent the Explorer's attention component: maps (H + 2, G, G) (the heads,
    then the single head and the mean), tokens, titles, number of heads."""
    d = component(at, "ex_grid")
    return unpack(d["maps"]).astype(np.float64), d["tokens"], d["titles"], d["heads"]


def new_app(**query):
    """A new session on the Explorer, opened from a link with these parameters."""
    at = open_app("explorer", **query)
    assert not at.exception, [e.value for e in at.exception]
    return at


def run(at):
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_default_view_shows_every_head_with_the_models_numbers(bundled):
    at = new_app()
    text = presets.DEFAULT_TEXT
    res = bundled.attend(text)
    A = res.attentions.numpy()  # (L, H, T, T)
    L, H = A.shape[:2]
    layer = at.slider(key="ex_layer").value - 1  # the page numbers layers and heads from 1

    # the default layer: where the heads disagree most over the presets (computed here as KL)
    div = np.mean([[jsd_np(bundled.attend(t).attentions.numpy()[la]) for la in range(L)]
                   for t in presets.PRESETS.values()], axis=0)
    assert layer == int(np.argmax(div))

    maps, tokens, titles, heads = shown(at)
    assert heads == H and maps.shape == (H + 2, len(res.tokens), len(res.tokens))
    assert tokens == res.tokens  # raw text: the browser writes it with fillText
    for h in range(H):
        np.testing.assert_allclose(maps[h], A[layer, h], atol=ATOL)
        assert titles[h] == f"head {h + 1} · {entropy_np(A[layer, h]):.2f} nats"
    grid = component(at, "ex_grid")  # one fixed 0..1 colour scale for every map, with a legend
    assert grid["colorscale"] == style.COLORSCALE and grid["legend"] == "weight"
    assert grid["selected"] == at.selectbox(key="ex_head").value - 1  # the enlarged head

    single, mean = maps[H], maps[H + 1]
    np.testing.assert_allclose(single, res.single_head.numpy()[layer], atol=ATOL)
    np.testing.assert_allclose(mean, A[layer].mean(0), atol=ATOL)
    assert f"{entropy_np(res.single_head.numpy()[layer]):.2f} nats" in titles[H]
    assert titles[H].startswith("summed head")
    assert f"{entropy_np(A[layer].mean(0)):.2f} nats" in titles[H + 1]

    head = at.selectbox(key="ex_head").value - 1
    big = component(at, "ex_big")  # the enlarged head: one map drawn large, not clickable
    np.testing.assert_allclose(unpack(big["maps"]), A[layer, head][None], atol=ATOL)
    assert big["big"] and big["heads"] == 0 and big["tokens"] == res.tokens
    assert big["titles"] == [f"layer {layer + 1}, head {head + 1} · "
                             f"{entropy_np(A[layer, head]):.2f} nats"]
    assert not {"ex_big", "ex_focus_bars"} & set(charts(at))  # no plotly for these two

    assert [b.proto.label for b in at.get("download_button")] == [
        "Download CSV", "Download JSON", "All heads .npz", "All heads JSON", "All heads CSV"]
    qp = dict(at.query_params)
    assert qp["text"] == text and qp["model"] == "bundled"
    assert (qp["layer"], qp["head"], qp["focus"]) == (str(layer + 1), str(head + 1), "with")


def test_focus_token_grid_and_bars(bundled):
    at = new_app(text="I saw the man with a telescope.", focus="with", layer="2")
    res = bundled.attend("I saw the man with a telescope.")
    q = res.tokens.index("with")
    rows = res.attentions.numpy()[:, :, q]  # (L, H, T)
    grid = component(at, "ex_focus_grid")
    top = rows.argmax(-1)  # (L, H)
    assert (grid["layers"], grid["heads"]) == top.shape and grid["focus"] == "with"
    np.testing.assert_array_equal(unpack(grid["top"]), top)
    assert grid["tokens"] == res.tokens  # the cell labels: the top key of each head
    np.testing.assert_allclose(unpack(grid["weight"]), rows.max(-1), atol=ATOL)
    assert len(grid["colors"]) == len(res.tokens)  # one colour per token, as in the bars
    bars = component(at, "ex_focus_bars")  # (S, H): one stacked segment per key word
    values = unpack(bars["values"])
    assert values.shape == (len(bars["names"]), rows.shape[1]) == (len(bars["colors"]), 12)
    np.testing.assert_allclose(values.sum(0), 1.0, atol=1e-4)  # every head's row sums to 1
    by_key = dict(zip(bars["names"], values))
    np.testing.assert_allclose(by_key["saw"], rows[1, :, res.tokens.index("saw")], atol=ATOL)
    # a word's colour is its colour in the focus grid
    assert bars["colors"][bars["names"].index("saw")] == grid["colors"][res.tokens.index("saw")]
    assert bars["title"].startswith("Layer 2:") and bars["value"] == "weight"


def test_link_round_trip(bundled):
    text = "The astronomer saw the man with a telescope."
    at = new_app()
    at.text_area(key="text").set_value(text)
    at.slider(key="ex_layer").set_value(3)
    at.selectbox(key="ex_head").set_value(7)
    run(at)
    focus = next(s for s in at.selectbox if s.label == "Focus token")
    focus.set_value(focus.options.index("5: man") if "5: man" in focus.options else 5)
    run(at)
    qp = dict(at.query_params)
    assert qp["text"] == text and qp["layer"] == "3" and qp["head"] == "7"  # as shown: from 1
    assert qp["focus"] == "man"

    again = new_app(**qp)  # a new session opened from the link
    assert again.slider(key="ex_layer").value == 3 and again.selectbox(key="ex_head").value == 7
    assert next(s for s in again.selectbox if s.label == "Focus token").value == 5
    np.testing.assert_allclose(shown(at)[0], shown(again)[0], atol=ATOL)
    for part in ("top", "weight"):
        np.testing.assert_allclose(unpack(component(at, "ex_focus_grid")[part]),
                                   unpack(component(again, "ex_focus_grid")[part]), atol=ATOL)
    a, b = component(at, "ex_big"), component(again, "ex_big")
    np.testing.assert_allclose(unpack(a["maps"]), unpack(b["maps"]), atol=ATOL)
    res = bundled.attend(text)
    np.testing.assert_allclose(unpack(b["maps"])[0], res.attentions.numpy()[2, 6], atol=ATOL)
    assert b["titles"][0].startswith("layer 3, head 7 ·")


def focus_box(at):
    return next(s for s in at.selectbox if s.label == "Focus token")


@pytest.mark.parametrize("text, toggle, param, pick", [
    ("The cat sat on the mat.", "ex_nospecial", "nospecial", "4: the"),  # the second "the"
    ("Astronomers photographed nebulae yesterday.", "ex_words", "words", "3: nebulae"),
])
def test_link_keeps_the_view_toggles_and_the_focus_in_that_view(bundled, text, toggle, param,
                                                                pick):
    """The focus token is a position in the view as shown: the link must carry the toggles that
    made that view, or "#4" would point elsewhere (and a merged word would not be found)."""
    at = new_app()
    at.text_area(key="text").set_value(text)
    at.toggle(key=toggle).set_value(True)
    run(at)
    focus_box(at).set_value(focus_box(at).options.index(pick))  # options as shown; value: i
    run(at)
    qp = dict(at.query_params)
    assert qp[param] == "1" and not at.warning

    again = new_app(**qp)
    assert again.toggle(key=toggle).value is True and not again.warning
    shown = focus_box(again)
    assert shown.options[shown.value] == pick
    for part in ("top", "weight"):
        np.testing.assert_allclose(unpack(component(again, "ex_focus_grid")[part]),
                                   unpack(component(at, "ex_focus_grid")[part]), atol=ATOL)


def test_nonsense_link_is_clamped_or_ignored_with_messages(bundled):
    at = new_app(model="../../etc/passwd", layer="99", head="-1", focus="zzz",
                     text="word " * 5000)
    said = messages(at)
    assert "does not offer" in said
    assert "layer 99" in said and "head -1" in said
    assert "focus token is not in this sentence" in said
    assert "512" in said  # the truncation warning names the model's limit
    assert "outside 1–6" in said and "outside 1–12" in said
    assert at.slider(key="ex_layer").value == bundled.config.num_hidden_layers
    assert at.selectbox(key="ex_head").value == 1
    assert at.selectbox(key="model").value == models.BUNDLED
    assert len(shown(at)[1]) == 40 and "Tokens 0–39 of 512" in messages(at)  # a window

    huge = new_app(text="a" * (MAX_CHARS + 10), layer="x")
    said = messages(huge)
    assert f"{MAX_CHARS:,} characters" in said and "not a number" in said


def test_bad_text_gets_a_message_never_a_traceback(bundled):
    at = new_app()

    def type_text(text):
        at.text_area(key="text").set_value(text)
        run(at)

    for blank in ("", "   \n\t "):
        type_text(blank)
        assert "Type a sentence" in messages(at) and not charts(at) and not components(at)
    type_text("\x00\x01\x1b")  # control characters only: the tokenizer keeps nothing
    assert "nothing in this text but [CLS] and [SEP]" in messages(at)

    for text in ("I saw 😀 the 🔭.", "我看见了一个人", "ראיתי את האיש", "a\x00b c\u202ed"):
        type_text(text)
        assert shown(at)[1] == bundled.attend(text).tokens, text
        assert component(at, "ex_big")["tokens"] == shown(at)[1]

    xss = "<img src=x onerror=alert(1)> <script>alert(2)</script>"
    type_text(xss)
    assert shown(at)[1] == bundled.attend(xss).tokens  # raw: the component uses fillText
    assert component(at, "ex_big")["tokens"] == bundled.attend(xss).tokens
    names = [n for n in component(at, "ex_focus_bars")["names"] if n is not None]
    assert names and set(names) <= set(bundled.attend(xss).tokens)  # raw too, never markup
    assert all(not m.proto.allow_html for m in at.markdown)  # no user text as HTML anywhere

    type_text("long " * 700)
    assert "more than this model's limit of 512" in messages(at)


def test_word_level_and_hidden_special_tokens(bundled):
    text = "Headscope shows tokenization."
    at = new_app(text=text, layer="3", head="5")
    at.toggle(key="ex_words").set_value(True)
    at.toggle(key="ex_nospecial").set_value(True)
    run(at)
    res = bundled.attend(text)
    A = res.attentions.numpy()[2]  # (H, T, T)
    labels, groups = res.words()
    # by hand: sum over a word's key pieces, average over its query pieces (Clark et al. 2019)
    W = np.zeros((A.shape[0], len(groups), len(groups)))  # (H, G, G)
    for i, q_toks in enumerate(groups):
        for j, k_toks in enumerate(groups):
            W[:, i, j] = A[:, q_toks][:, :, k_toks].sum(-1).mean(-1)
    keep = [i for i, g in enumerate(groups) if not all(res.special[t] for t in g)]
    W = W[:, keep][:, :, keep]
    W = W / W.sum(-1, keepdims=True)  # hide [CLS]/[SEP]: rows renormalised
    maps, tokens, _, heads = shown(at)
    assert tokens == ["Headscope", "shows", "tokenization", "."]
    for h in range(heads):
        np.testing.assert_allclose(maps[h], W[h], atol=1e-5)
    assert any("renormalised" in c.value for c in at.caption)


def test_broken_model_dir_shows_its_error_and_others_keep_working(bundled, tiny, tiny_dir,
                                                                   tmp_path, monkeypatch):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    monkeypatch.setenv("HEADSCOPE_MODELS", f"tiny={tiny_dir};broken={broken}")
    at = new_app(layer="5")
    at.selectbox(key="model").set_value("broken")
    run(at)
    assert at.error and "could not be loaded" in at.error[0].value
    assert not charts(at) and not components(at)

    at.selectbox(key="model").set_value("tiny")  # 2 layers: layer 5 is clamped
    run(at)
    res = tiny.attend(presets.DEFAULT_TEXT)
    layer = at.slider(key="ex_layer").value - 1  # the page numbers layers and heads from 1
    assert layer == 1
    maps, _, _, heads = shown(at)
    assert heads == tiny.config.num_attention_heads
    for h in range(heads):
        np.testing.assert_allclose(maps[h], res.attentions.numpy()[layer, h], atol=ATOL)

    at.selectbox(key="model").set_value(models.BUNDLED)
    run(at)
    assert shown(at)[3] == bundled.config.num_attention_heads


def test_a_text_too_long_for_a_link_is_left_out_and_the_sender_is_told(bundled):
    at = new_app()
    short = dict(at.query_params)["text"]
    assert short == presets.DEFAULT_TEXT
    long_text = "A short story about a fox. " * 80  # 2,160 characters
    at.text_area(key="text").set_value(long_text)
    run(at)
    assert "text" not in dict(at.query_params)
    assert any("too long for a link" in c.value for c in at.caption)
    at.text_area(key="text").set_value(short)
    run(at)
    assert dict(at.query_params)["text"] == short
    assert not any("too long for a link" in c.value for c in at.caption)
