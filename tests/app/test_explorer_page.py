"""The Explorer page through Streamlit's AppTest: the data it sends its component (every
layer's maps) against bert.attend, and the view a link imposes."""

import json

import numpy as np
import pytest

from headscope.ui import models, presets, style
from headscope.ui.guards import MAX_CHARS
from testkit.apptest import charts, component, components, explorer_sent, messages, open_app

ATOL = 1e-5  # 16-bit levels: 1/65535/2 = 7.7e-6, plus float32 error


def jsd_np(maps: np.ndarray) -> float:
    """The heads' disagreement as the mean KL(head || mean of heads) (= the generalised JSD)."""
    m = maps.mean(0, keepdims=True)  # (1, T, T)
    kl = (maps * (np.log(np.clip(maps, 1e-12, None)) - np.log(np.clip(m, 1e-12, None)))).sum(-1)
    return float(kl.mean())


def new_app(**query):
    """A new session on the Explorer, opened from a link with these parameters."""
    at = open_app("explorer", **query)
    assert not at.exception, [e.value for e in at.exception]
    return at


def run(at):
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_default_view_sends_every_layer_with_the_models_numbers(bundled):
    at = new_app()
    text = presets.DEFAULT_TEXT
    res = bundled.attend(text)
    A = res.attentions.numpy()  # (L, H, T, T)
    L, H, T = A.shape[:3]
    d = explorer_sent(at)

    # the first layer shown: where the heads disagree most over the presets (computed here as KL)
    div = np.mean([[jsd_np(bundled.attend(t).attentions.numpy()[la]) for la in range(L)]
                   for t in presets.PRESETS.values()], axis=0)
    assert d["initial_layer"] == int(np.argmax(div))

    assert (d["layers"], d["heads"], d["sent"]) == (L, H, list(range(L)))
    assert d["maps"].shape == (L, H + 1, T, T)
    assert d["tokens"] == res.tokens  # raw text: the browser writes it with fillText
    np.testing.assert_allclose(d["maps"][:, :H], A, atol=ATOL)  # every head of every layer
    np.testing.assert_allclose(d["maps"][:, H], res.single_head.numpy(), atol=ATOL)
    assert d["colorscale"] == style.COLORSCALE  # one fixed 0..1 colour scale for every map
    assert d["impose"] is None  # a plain visit: the browser picks the view
    assert d["default_focus"][0] == res.tokens.index("with")
    assert d["norms"] and d["norm"].shape == (L, H, T, T)
    np.testing.assert_allclose(d["norm"].sum(-1), 1.0, atol=T * ATOL)  # shares: rows sum to 1

    assert not at.get("download_button")  # built only while their popover is open
    at.session_state["ex_all"] = True  # the popover opened, as a click does
    at.run()
    assert [b.proto.label for b in at.get("download_button")] == [
        "All heads .npz", "All heads JSON", "All heads CSV"]
    qp = dict(at.query_params)  # the view's own parameters are the browser's to write
    assert qp == {"text": text, "model": "bundled"}


def test_a_link_imposes_its_layer_and_focus(bundled):
    text = "I saw the man with a telescope."
    at = new_app(text=text, focus="with", layer="2")
    res = bundled.attend(text)
    imposed = explorer_sent(at)["impose"]
    assert imposed["layer"] == 1 and imposed["focus"] == [res.tokens.index("with")]
    assert "head" not in imposed and isinstance(imposed["seq"], int)
    assert not at.warning

    several = new_app(text=text, focus="#2,#7,#2", head="7")  # several focus tokens, each once
    imposed = explorer_sent(several)["impose"]
    assert imposed["focus"] == [2, 7] and imposed["head"] == 6 and not several.warning


def test_link_round_trip(bundled):
    """What the browser writes in the address bar (layer, head from 1; the focus token by its
    text) opens the same view in a new session."""
    text = "The astronomer saw the man with a telescope."
    at = new_app(text=text, layer="3", head="7", focus="man")
    res = bundled.attend(text)
    assert explorer_sent(at)["impose"] | {"seq": 0} == dict(layer=2, head=6,
                                                            focus=[res.tokens.index("man")], seq=0)
    again = new_app(**(dict(at.query_params) | dict(layer="3", head="7", focus="man")))
    np.testing.assert_array_equal(explorer_sent(again)["maps"], explorer_sent(at)["maps"])
    assert explorer_sent(again)["impose"]["focus"] == explorer_sent(at)["impose"]["focus"]


@pytest.mark.parametrize("text, param, key, focus, label", [
    ("The cat sat on the mat.", "nospecial", "hide", "#4", "the"),  # the second "the"
    ("Astronomers photographed nebulae yesterday.", "words", "words", "nebulae", "nebulae"),
])
def test_link_keeps_the_view_toggles_and_the_focus_in_that_view(bundled, text, param, key,
                                                                focus, label):
    """The focus token is a position in the view as shown: the link carries the toggles that
    made that view, or "#4" would point elsewhere (and a merged word would not be found)."""
    at = new_app(text=text, focus=focus, **{param: "1"})
    assert not at.warning
    imposed = explorer_sent(at)["impose"]
    assert imposed[key] is True and len(imposed["focus"]) == 1
    # the shown labels of that view, computed here: whole words or [CLS]/[SEP] dropped
    res = bundled.attend(text)
    labels = res.words()[0] if key == "words" else res.labels
    if key == "hide":
        labels = [t for t, s in zip(labels, res.special) if not s]
    assert labels[imposed["focus"][0]] == label
    if key == "hide":
        assert imposed["focus"] == [4]  # not the first "the" (0)


def test_nonsense_link_is_clamped_or_ignored_with_messages(bundled):
    at = new_app(model="../../etc/passwd", layer="99", head="-1", focus="zzz",
                 text="word " * 5000)
    said = messages(at)
    assert "does not offer" in said
    assert "layer 99" in said and "head -1" in said
    assert "focus token is not in this sentence" in said
    assert "512" in said  # the truncation warning names the model's limit
    assert "outside 1–6" in said and "outside 1–12" in said
    d = explorer_sent(at)
    L = bundled.config.num_hidden_layers
    assert d["impose"]["layer"] == L - 1 and d["impose"]["head"] == 0
    assert "focus" not in d["impose"]
    assert at.selectbox(key="model").value == models.BUNDLED
    # 512 tokens: over LOCAL_TOKENS, so one layer travels (the imposed one) and the first focus
    assert len(d["tokens"]) == 512 and d["sent"] == [L - 1] and d["frows_at"] == [0]
    assert d["maps"].shape == (1, 13, 512, 512)

    huge = new_app(text="a" * (MAX_CHARS + 10), layer="x")
    said = messages(huge)
    assert f"{MAX_CHARS:,} characters" in said and "not a number" in said
    assert "layer" not in explorer_sent(huge)["impose"]


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
        assert component(at, "ex_view")["tokens"] == bundled.attend(text).tokens, text

    xss = "<img src=x onerror=alert(1)> <script>alert(2)</script>"
    type_text(xss)
    d = component(at, "ex_view")
    res = bundled.attend(xss)
    assert d["tokens"] == res.tokens  # raw: the component uses fillText
    assert d["words"] == res.words()[0]  # raw too, never markup
    assert all(not m.proto.allow_html for m in at.markdown)  # no user text as HTML anywhere

    type_text("long " * 700)
    assert "more than this model's limit of 512" in messages(at)


def test_word_groups_are_the_models_words(bundled):
    """Whole words and hidden [CLS]/[SEP] are drawn in the browser from the token maps and
    these groups (tests/unit/test_explore_js.py checks the merged maps)."""
    text = "Headscope shows tokenization."
    at = new_app(text=text, layer="3", head="5", words="1", nospecial="1")
    res = bundled.attend(text)
    d = component(at, "ex_view")
    assert d["impose"] | {"seq": 0} == dict(layer=2, head=4, words=True, hide=True, seq=0)
    # by hand: a word is a first piece and the "##" pieces after it
    groups = []
    for t, tok in enumerate(res.tokens):
        if tok.startswith("##"):
            groups[-1].append(t)
        else:
            groups.append([t])
    assert d["groups"] == groups and len(groups) < len(res.tokens)
    assert [w for w, g in zip(d["words"], groups) if not all(res.special[t] for t in g)] == [
        "Headscope", "shows", "tokenization", "."]
    assert d["word_punct"] == [False, False, False, False, True, False]


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

    at.selectbox(key="model").set_value("tiny")  # 2 layers: the browser clamps layer 5
    run(at)
    res = tiny.attend(presets.DEFAULT_TEXT)
    d = explorer_sent(at)
    H = tiny.config.num_attention_heads
    assert (d["layers"], d["heads"]) == (2, H) and d["impose"] is None
    np.testing.assert_allclose(d["maps"][:, :H], res.attentions.numpy(), atol=ATOL)

    at.selectbox(key="model").set_value(models.BUNDLED)
    run(at)
    assert explorer_sent(at)["heads"] == bundled.config.num_attention_heads


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


def test_the_page_offers_the_route_and_names_its_sentence(monkeypatch):
    """The component's data names the sentence it draws as the route names its answer
    ([model, text, pair]: explorer.js then adopts the page's data for a sentence the route drew
    without drawing it again), and offers the route where this server serves it, not where it
    does not (AppTest, the frame run alone)."""
    from headscope.ui import explorer_route

    text = "Cats sleep a lot."
    d = component(new_app(text=text), "ex_view")
    assert d["sentence"] == [models.BUNDLED, text, None] and d["fast"] is None
    monkeypatch.setattr(explorer_route, "_SERVED", [True])
    at = new_app(text=text, pair="They do.")
    d = component(at, "ex_view")
    assert d["sentence"] == [models.BUNDLED, text, "They do."]
    assert d["fast"] == dict(url="/" + explorer_route.PATH, model=models.BUNDLED,
                             pair="They do.", box="text")
    # the route's answer for that sentence is the page's data: every key it carries, the same
    # (the maps, the sentence key, the tag and the figures' caption)
    status, body = explorer_route.answer(models.BUNDLED, text, "They do.")
    assert status == 200
    body = json.loads(json.dumps(body))
    assert {k: d[k] for k in body} == body
