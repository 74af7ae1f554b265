"""AppTest of the Papers page: on the bundled encoder, Clark et al.'s table against an independent
numpy computation over Model.attend's maps of the same 40 sample sentences (read from the CoNLL-U
file's `# text =` lines here), the table and the JSON download against mha_core.reproduce's
record; Abnar on the encoder says what it lacks and offers the decoder (a tiny Llama offered
under the bundled decoder's name); Gu and Michel on a tiny decoder; the link; hostile text and a
hostile model name stay text."""

import io
import json
import re

import numpy as np
import pytest

from headscope.ui.models import BUNDLED, BUNDLED_DECODER
from headscope.ui.papers import FIGURE_INCHES, SENTENCES, SHOWN_PX
from testkit.apptest import messages, open_app, survives
from testkit.families import save_tiny_family

HOSTILE_NAME = "pp *bold* <b>x</b> $y$ [a](javascript:alert(1))"


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return save_tiny_family("llama", tmp_path_factory.mktemp("llama") / "pp-llama")


@pytest.fixture
def downloads(monkeypatch) -> list:
    """(data, mimetype, file name) of every file the runs hand to Streamlit's media store (the
    download button's JSON, st.image's PNG)."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    seen, real = [], MemoryMediaFileStorage.load_and_get_id

    def spy(self, data, mimetype, kind, filename=None):
        seen.append((data, mimetype, filename))
        return real(self, data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", spy)
    return seen


def plain(cell: str) -> str:
    """A table cell as read: the page escapes markdown characters with a backslash."""
    return re.sub(r"\\(.)", r"\1", cell)


def shown_rows(at) -> list:
    (table,) = at.table
    return [[plain(c) for c in row] for row in table.value.values.tolist()]


def sample_texts(n: int) -> list:
    """The first n sentences of the shipped sample, from its `# text =` lines."""
    from mha_core.treebank import DEFAULT_TREEBANK

    text = open(DEFAULT_TREEBANK, encoding="utf-8").read()
    return re.findall(r"^# text = (.*)$", text, flags=re.M)[:n]


def clark_by_hand(bundled, texts) -> dict:
    """Clark et al.'s per-head means over the sentences, in numpy from Model.attend's maps:
    attention on [SEP] (the last token) per query row, on the previous and next token, the
    [CLS] row's entropy; and the mean of ln T."""
    acc = {"sep": 0, "prev": 0, "next": 0, "cls_entropy": 0, "log_t": 0}
    for text in texts:
        a = bundled.attend(text).attentions.double().numpy()  # (L, H, T, T)
        T = a.shape[-1]
        idx = np.arange(T - 1)
        acc["sep"] = acc["sep"] + a[..., :, T - 1].mean(-1)
        acc["prev"] = acc["prev"] + a[..., idx + 1, idx].mean(-1)
        acc["next"] = acc["next"] + a[..., idx, idx + 1].mean(-1)
        row = a[..., 0, :]
        acc["cls_entropy"] = acc["cls_entropy"] + -(row * np.log(row)).sum(-1)
        acc["log_t"] += np.log(T)
    return {k: v / len(texts) for k, v in acc.items()}


def heads_over(x, at=0.5) -> str:
    labels = [f"L{i + 1}-H{h + 1}" for i, h in zip(*np.nonzero(x > at))]
    return f"{len(labels)}" + (f" ({', '.join(labels)})" if labels else "")


def test_clark_on_the_bundled_encoder(bundled, downloads):
    from mha_core.reproduce import read_corpus, reproduce

    at = open_app("papers")
    survives(at)
    assert at.selectbox(key="pp_paper").value == "clark2019"
    rows = shown_rows(at)
    texts = sample_texts(SENTENCES)
    assert len(texts) == SENTENCES
    ours = clark_by_hand(bundled, texts)
    sep = ours["sep"].mean(1)  # (L,): the heads' mean per layer
    top = int(sep.argmax())
    assert (sep < 0.5).all()  # the bundled model parks its weight on [CLS], not on [SEP]
    assert rows[0][1] == f"none of 6 (most: {100 * sep[top]:.1f} % in layer {top + 1})"
    assert rows[1][1] == heads_over(ours["prev"])
    assert rows[2][1] == heads_over(ours["next"])
    assert rows[3][1] == (f"{ours['cls_entropy'][-1].mean():.2f} nats (uniform over the "
                          f"sentence: {ours['log_t']:.2f})")
    assert [r[2] for r in rows[:4]] == ["layers 6–10 of 12", "4 (layers 2, 4, 7, 8)",
                                       "5 (layers 1, 2, 2, 3, 6)", "3.89 nats"]
    rec = reproduce("clark2019", bundled, read_corpus(), SENTENCES)
    assert rows == rec["rows"]  # the syntax rows too: the package's record, shown whole
    [(data, _, name)] = [d for d in downloads if d[1] == "application/json"]
    got = json.loads(data)
    assert name == "clark2019.json" and got["rows"] == rec["rows"]
    assert got["corpus"]["sentences"] == SENTENCES and got["model"]["name"] == BUNDLED
    from PIL import Image

    sizes = [Image.open(io.BytesIO(d[0])).size for d in downloads if d[1] == "image/png"]
    w, h = FIGURE_INCHES  # the figure, at most SHOWN_PX wide (Streamlit scales it there)
    assert (SHOWN_PX, round(SHOWN_PX * h / w)) in sizes
    said = messages(at)
    assert f"On the first {SENTENCES} of the 153 hand-made sentences" in said
    assert f"({SENTENCES} used)" in said
    assert "paper" not in dict(at.query_params)  # the first paper: no parameter


@pytest.fixture
def tiny_as_decoder(llama, monkeypatch):
    """The tiny Llama offered under the bundled decoder's name, with the app's model and data
    caches emptied before and after (this process may hold another model under that name)."""
    import streamlit as st

    from headscope.ui import models

    monkeypatch.setenv("HEADSCOPE_MODELS", f"{BUNDLED_DECODER}={llama}")
    models._load.clear()
    st.cache_data.clear()
    yield
    models._load.clear()
    st.cache_data.clear()


def test_abnar_on_the_encoder_says_what_it_lacks_and_offers_the_decoder(bundled,
                                                                        tiny_as_decoder):
    at = open_app("papers", paper="abnar2020")
    survives(at)
    (info,) = at.info
    assert f"{BUNDLED} has no language-model head" in plain(info.value)
    assert not at.table and not at.get("image") and not at.get("download_button")
    at.button(key="pp_to_decoder").click().run()
    survives(at)
    assert at.session_state["model"] == BUNDLED_DECODER
    assert not at.info and len(shown_rows(at)) == 6  # raw, rollout, flow x blank-out, gradient
    assert len(at.get("image")) == 1
    assert dict(at.query_params)["paper"] == "abnar2020"


@pytest.mark.parametrize("paper", ["gu2024", "michel2019"])
def test_gu_and_michel_on_a_tiny_decoder(llama, monkeypatch, downloads, paper):
    monkeypatch.setenv("HEADSCOPE_MODELS", f"pp-llama={llama}")
    at = open_app("papers", model="pp-llama", paper=paper)
    survives(at)
    assert not at.error and at.table and shown_rows(at)
    [(data, _, _)] = [d for d in downloads if d[1] == "application/json"]
    rec = json.loads(data)
    assert rec["paper"] == paper and rec["model"]["name"] == "pp-llama"
    assert rec["model"]["decoder"] is True
    shown = data.decode() + " ".join(m.value for m in at.markdown) + messages(at)
    assert str(llama) not in shown  # the server's path stays on the server


def test_the_link_and_hostile_text(llama, monkeypatch):
    """The sidebar's sentence is not this page's: hostile text there reaches nothing; a model
    name with markdown and HTML in it is shown as text."""
    hostile = "<script>alert(1)</script> **bold** [x](javascript:alert(1))"
    monkeypatch.setenv("HEADSCOPE_MODELS", f"{HOSTILE_NAME}={llama}")
    at = open_app("papers", model=HOSTILE_NAME, text=hostile, paper="voita2019")
    survives(at)
    assert at.selectbox(key="pp_paper").value == "voita2019"
    texts = [m.value for m in at.markdown] + [m.value for m in at.caption] + [
        c for t in at.table for c in t.value.values.ravel()]
    assert not any(hostile in t or "<script>" in t for t in texts)
    named = [t for t in texts if "bold" in t]
    assert named and all("\\*bold\\*" in t and "\\<b\\>" in t and "<b>" not in t
                         for t in named)
    bad = open_app("papers", model=HOSTILE_NAME, paper="smith2030")
    survives(bad)
    assert "The link's paper is not one of" in messages(bad)
    assert bad.selectbox(key="pp_paper").value == "clark2019"
