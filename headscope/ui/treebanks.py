"""The treebanks the What heads learn page offers, read once and scored once per model: the
hand-made sample, the operator's (HEADSCOPE_TREEBANKS="name=path;name=path", like
HEADSCOPE_MODELS: visitors never type a path) and a visitor's upload (bounded in size).

The cached computations draw their own progress bar in a slot they create and empty: Streamlit
replays a cached function's elements, and only elements created inside it can be replayed.
"""

import hashlib

import streamlit as st

from headscope.settings import settings

from . import budget, style
from .models import bert_or_raise, bounded

SAMPLE = "Hand-made sample (bundled)"
UPLOAD = "Upload a .conllu file"
MAX_UPLOAD_MB = 10
OPERATOR_MAX_BYTES = 200 * 2**20  # a treebank the server names may be larger than an upload
MAX_SENTENCES = 3_000  # sentences scored per treebank in the app (the command line has no cap)
NORM_TEXTS = 100  # sentences for the weight-vs-norm chart
PROGRESS_STEPS = 20  # progress updates per computation (each is replayed on a cache hit)


def treebank_choices() -> dict:
    """{name: path}: the sample plus HEADSCOPE_TREEBANKS, fixed by the server."""
    from mha_core.treebank import DEFAULT_TREEBANK

    choices = {SAMPLE: str(DEFAULT_TREEBANK)}
    for name, path in settings().treebanks:
        if name not in (SAMPLE, UPLOAD):
            choices[name] = path
    return choices


@st.cache_data(**bounded(8), show_spinner=False)
def read_named(name: str) -> list:
    """The sentences of a treebank the server names (TreebankError or OSError when it cannot be
    read: st.cache_data caches no exception)."""
    from mha_core.treebank import read_treebank

    return read_treebank(treebank_choices()[name], max_bytes=OPERATOR_MAX_BYTES)


@st.cache_data(**bounded(8), show_spinner=False)
def read_upload(digest: str, _data: bytes) -> tuple:
    """(sentences, None) or (None, why the file was refused): an upload read with the caps on
    words and sentences, cached by the bytes' digest. The refusal is returned, not raised:
    st.cache_data caches no exception, and a refused 10 MB file would be parsed again on every
    rerun."""
    from mha_core.treebank import MAX_UPLOAD_SENTENCES, MAX_UPLOAD_WORDS, TreebankError, read_conllu

    try:
        return read_conllu(_data, MAX_UPLOAD_WORDS, MAX_UPLOAD_SENTENCES), None
    except TreebankError as e:
        return None, str(e)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _progress(what: str):
    """A progress bar in its own slot, and the callback that moves it (at most PROGRESS_STEPS
    times); call done() to remove it."""
    slot = st.empty()
    slot.progress(0.0, text=f"{what}…")
    state = {"last": -1}

    def step(i, n):
        k = int(PROGRESS_STEPS * i / max(n, 1))
        if k != state["last"]:
            state["last"] = k
            slot.progress(min(i / max(n, 1), 1.0), text=f"{what}: {i:,} of {n:,}")

    return step, slot.empty


@st.cache_data(**bounded(16), show_spinner=False)
def scores(model: str, key: str, _sentences):
    """Clark et al.'s scores of every head of the model on the treebank `key` names (its name,
    or an upload's digest)."""
    from mha_core.syntax import score_treebank

    with budget.heavy_here("Scoring every head"):
        step, done = _progress("Scoring every head against the trees")
        out = score_treebank(bert_or_raise(model), _sentences[:MAX_SENTENCES], progress=step)
        done()
    return out


@st.cache_data(**bounded(16), show_spinner=False)
def norm_shares(model: str, key: str, _texts) -> dict:
    """[CLS]/[SEP]/punctuation shares by weight and by norm over the texts `key` names."""
    from mha_core.norms import weight_and_norm_shares

    with budget.heavy_here("Weights and norms"):
        step, done = _progress("Weights and norms")
        out = weight_and_norm_shares(bert_or_raise(model), list(_texts), progress=step)
        done()
    return out


@st.cache_data(**bounded(16), show_spinner=False)
def qk_points(model: str, key: str, _texts, layer: int, head: int, method: str,
              max_tokens: int) -> dict:
    """One head's queries and keys over the texts `key` names, normalised and projected."""
    from mha_core import qk_space as qk

    with budget.heavy_here("Queries and keys"):
        step, done = _progress("Queries and keys")
        space = qk.qk_vectors(bert_or_raise(model), list(_texts), layer, head, max_tokens, step)
        slot = st.empty()
        slot.info(f"Projecting {2 * len(space.tokens):,} points with {method}…",
                  icon=style.ICON_WAIT)
        xy = qk.project(*qk.normalise(space.queries, space.keys), method)
        slot.empty()
        done()
    return dict(xy=xy, tokens=space.tokens, sentence=space.sentence, position=space.position,
                texts=space.texts, attention=space.attention, truncated=space.truncated)
