"""What every page shares: the model list, the cached model and results, the sidebar's state and
the link (query parameters) that restores a view.

The model (st.cache_resource) is ONE object shared by every session and thread: nothing may
change it. Results (st.cache_data) are copied for each caller.
"""

import os

import streamlit as st
from streamlit import config
from streamlit.runtime.pages_manager import PagesManager

from mha_core import figures

BUNDLED = "all-MiniLM-L6-v2 (bundled)"
DEFAULT_TEXT = "I saw the man with a telescope."
PRESETS = {
    "Telescope (ambiguous)": "I saw the man with a telescope.",
    "Telescope (astronomer)": "The astronomer saw the man with a telescope.",
    "Coreference: it": "The animal didn't cross the street because it was too tired.",
    "Bank (money)": "I went to the bank to deposit money.",
    "Bank (river)": "We sat on the bank of the river.",
    "Cat on the mat": "The cat sat on the mat.",
    "Time flies": "Time flies like an arrow; fruit flies like a banana.",
}
# The word worth following in each preset (the Explorer's default focus token)
PRESET_FOCUS = {
    "I saw the man with a telescope.": "with",
    "The astronomer saw the man with a telescope.": "with",
    "The animal didn't cross the street because it was too tired.": "it",
    "I went to the bank to deposit money.": "bank",
    "We sat on the bank of the river.": "bank",
    "The cat sat on the mat.": "sat",
    "Time flies like an arrow; fruit flies like a banana.": "like",
}
MAX_CHARS = 20_000  # text longer than this is cut before tokenising (the model keeps 512 tokens)
URL_TEXT_MAX = 2_000  # a longer sentence is left out of the link (browsers cap URL length)
# query parameters a page reads from pending_params(): the Explorer's view
VIEW_PARAMS = ("layer", "head", "focus", "words", "nospecial")

# Cache bounds (README, "Deploying"): memory stops growing with the number of distinct sentences.
# Every st.cache_data cache keeps at most CACHE_ENTRIES results for CACHE_TTL seconds, and all
# of them together at most server.maxCacheDataSize pickled bytes (.streamlit/config.toml; the
# least recently used go first). A whole-model result of a 512-token text is ~87 MB on the
# bundled model, of a 12-token sentence ~0.1 MB: a cap per function smaller than a few long
# texts would keep such a result alone and throw out every other session's. So each function's
# cap is that same budget, which also bounds it where the config file is not read.
CACHE_ENTRIES = max(1, int(os.environ.get("HEADSCOPE_CACHE_ENTRIES", "64")))
CACHE_TTL = max(1, int(os.environ.get("HEADSCOPE_CACHE_TTL", "1800")))
CACHE_BUDGET = config.get_option("server.maxCacheDataSize") or "256mb"


TORCH_THREADS = max(1, int(os.environ.get("HEADSCOPE_TORCH_THREADS", "1")))

# Constant CSS, never with user text: less empty space above the page, so the per-head grid and
# the single-head maps fit one 1280x800 screen; in presentation mode, larger text everywhere
# (Streamlit sizes its text in rem) and charts PROJECTOR_SCALE times larger (plot()).
PAGE_CSS = "<style>[data-testid='stMainBlockContainer']{padding:2rem 2rem 2rem 2rem}</style>"
# the top navigation bar is ~75 px high at 20 px text: start the page below it
PRESENT_CSS = ("<style>html{font-size:20px}"
               "[data-testid='stMainBlockContainer']{padding-top:5rem}</style>")
PROJECTOR_SCALE = 1.35


def bounded(entries: int | None = None) -> dict:
    """st.cache_data's bounds: at most `entries` results and CACHE_BUDGET pickled bytes, each
    for CACHE_TTL seconds."""
    return dict(max_entries=entries or CACHE_ENTRIES, max_size=CACHE_BUDGET, ttl=CACHE_TTL)


def model_choices() -> dict:
    """{name: source}: the bundled model plus HEADSCOPE_MODELS ("name=path;name=path").
    The list is fixed by the server; visitors cannot name arbitrary paths."""
    choices = {BUNDLED: "bundled"}
    for item in os.environ.get("HEADSCOPE_MODELS", "").split(";"):
        name, sep, path = item.partition("=")
        if sep and name.strip() and path.strip():
            choices[name.strip()] = path.strip()
    return choices


@st.cache_resource(max_entries=4, show_spinner=False)  # sidebar() shows the spinner
def _load(name: str):
    import torch

    import mha_core

    # One process serves every session: concurrent runs each asking torch for several threads
    # oversubscribe the cores (bench/class_load.py). Process-wide; set before the first forward.
    torch.set_num_threads(TORCH_THREADS)
    return mha_core.load_bert(model_choices()[name])


def warm_up():
    """Before any browser asks (serve.py, make run): load the default model into _load's cache,
    run it once (torch sets itself up on the first forward) and import what the Explorer
    imports. Nothing here goes into a st.cache_data cache: those belong to the runtime."""
    bert = _load(BUNDLED)
    bert.attend(DEFAULT_TEXT)
    import mha_core.analysis  # noqa: F401
    import mha_core.export  # noqa: F401


def get_bert(name: str):
    """(bert, None) or (None, error message). A broken checkpoint never takes the app down."""
    if name not in model_choices():
        return None, f"Unknown model {name!r}. Choose one from the sidebar."
    try:
        return _load(name), None
    except Exception as e:  # CheckpointError and anything a broken directory throws
        return None, f"The model {name!r} could not be loaded: {e}"


def bert_or_raise(name: str):
    """The loaded model inside a cached computation: a load failure is raised (st.cache_data
    never caches an exception), for computed_or_none/computed_or_stop to show."""
    bert, err = get_bert(name)
    if err:
        raise RuntimeError(err)
    return bert


@st.cache_data(**bounded(), show_spinner=False)
def attend(name: str, text: str, text_pair: str | None = None):
    """The cached result of bert.attend for (model, text). Copied per caller."""
    bert = bert_or_raise(name)
    return bert.attend(text, text_pair)


@st.cache_data(**bounded(1024), show_spinner=False)
def text_facts(name: str, text: str) -> dict:
    """What the tokenizer makes of a text (no forward pass): small, so it is cheap to copy."""
    from mha_core.text import typed_special

    bert = bert_or_raise(name)
    enc = bert.encode(text)
    unk = bert.tokenizer.unk_token
    return dict(n_tokens=len(enc.tokens), n_full=enc.n_tokens_full, max_length=enc.max_length,
                truncated=enc.truncated, only_special=all(enc.special),
                typed_special=typed_special(enc, bert.tokenizer, text), unk_token=unk,
                unknown=sum(t == unk for t in enc.tokens))


def model_or_stop(name: str):
    """The loaded model, or the loader's error on the page and the page stopped."""
    bert, err = get_bert(name)
    if err:
        st.error(err, icon="🚫")
        where = "the Model list above the page" if presenting() else "the sidebar's Model list"
        st.caption(f"Other models in {where} still work.")
        st.stop()
    return bert


def check_text(name: str, text: str, prompt: str, what: str = "This text",
               cut: bool = False) -> dict | None:
    """The same clear messages on every page for text the model cannot show, and notes on text
    it reads in its own way. Returns text_facts, or None when there is nothing to show (the
    message is on the page; the caller stops or skips its section). Messages never repeat the
    user's text."""
    if cut:
        st.warning(f"The text is longer than {MAX_CHARS:,} characters; only the first "
                   f"{MAX_CHARS:,} are used.", icon="✂️")
    if not text.strip():
        st.info(prompt, icon="✍️")
        return None
    facts = computed_or_none(text_facts, name, text)  # a tokenizer failure: a message
    if facts is None:
        return None
    if facts["only_special"]:
        st.info(f"The tokenizer found nothing in {what[0].lower() + what[1:]} but [CLS] and "
                "[SEP] (it drops spaces, control and zero-width characters). Type some words.",
                icon="✍️")
        return None
    if facts["truncated"]:
        st.warning(f"{what} has {facts['n_full']} tokens, more than this model's limit of "
                   f"{facts['max_length']} (including [CLS] and [SEP]); only the first "
                   f"{facts['max_length']} are used.", icon="✂️")
    if facts["typed_special"]:
        names = ", ".join(f"`{t}`" for t in facts["typed_special"])
        st.info(f"{what} contains {names} typed as text. The tokenizer reads it as the model's "
                "own special token, not as letters (as transformers does).", icon="ℹ️")
    if facts["unknown"]:
        st.caption(f"{facts['unknown']} token(s) are `{facts['unk_token']}`: the vocabulary "
                   "does not know them (some emoji and scripts).")
    return facts


def computed_or_none(fn, *args):
    """fn(*args), or None and a message when the model fails on this input."""
    try:
        return fn(*args)
    except Exception as e:  # a tokenizer or model failure on odd input: never a traceback
        st.error(f"The model could not read this text ({type(e).__name__}).", icon="🚫")
        return None


def computed_or_stop(fn, *args):
    """fn(*args), or a message and the page stopped when the model fails on this input."""
    out = computed_or_none(fn, *args)
    if out is None:
        st.stop()
    return out


def md_text(s: str) -> str:
    """User text placed inside markdown, shown literally: every markdown (and LaTeX `$`)
    character backslash-escaped. Markdown never renders HTML here (no unsafe_allow_html)."""
    return "".join("\\" + c if c in MD_SPECIAL else c for c in s)


MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>$~:")


def current_model() -> str:
    return st.session_state.get("model", BUNDLED)


def current_text() -> str:
    return st.session_state.get("text", DEFAULT_TEXT)[:MAX_CHARS]


def text_was_cut() -> bool:
    return len(st.session_state.get("text", "")) > MAX_CHARS


def _pick_preset():
    choice = st.session_state.get("preset")
    if choice in PRESETS:
        st.session_state.text = PRESETS[choice]
    st.session_state.preset = None


def presenting() -> bool:
    """Presentation mode (a projector): no sidebar, larger text, bigger charts."""
    return bool(st.session_state.get("_present"))


def _set_present(on: bool | None = None):
    ss = st.session_state
    ss._present = ss.get("present_toggle", False) if on is None else on


def plot(where, fig, **kwargs):
    """st.plotly_chart in `where` (st, a column, a tab), enlarged in presentation mode."""
    if presenting():
        fig = figures.for_projector(fig, PROJECTOR_SCALE)
    return where.plotly_chart(fig, **kwargs)


def sidebar(needs_model: bool = True):
    """The shared controls: model, sentence, examples, presentation mode. In the sidebar, or in
    a row above the page in presentation mode (the sidebar is then empty, so it is not shown).
    Call once per run, from app.py. The widget keys are the same in both places. A page that
    does not need the BERT model (needs_model=False) does not wait for it to load."""
    ss = st.session_state
    ss.setdefault("model", BUNDLED)
    ss.setdefault("text", DEFAULT_TEXT)
    if ss.model not in model_choices():
        ss.model = BUNDLED
    if needs_model:
        with st.spinner(f"Loading the model {ss.model}…"):  # in the main area
            get_bert(ss.model)  # cached after the first visit (serve.py starts it)
    help_text = "Type any text and press Ctrl+Enter (⌘+Enter on a Mac)."
    if presenting():
        c1, c2, c3, c4 = st.columns([4, 3, 3, 2.4], vertical_alignment="bottom")
        c1.text_area("Sentence", key="text", height=100, help=help_text,
                     label_visibility="collapsed", placeholder="Type a sentence…")
        c2.selectbox("Examples", list(PRESETS), index=None, key="preset",
                     placeholder="Load an example…", on_change=_pick_preset)
        c3.selectbox("Model", list(model_choices()), key="model")
        c4.button("Leave presentation", on_click=_set_present, args=(False,),
                  key="present_leave", width="stretch")
        return
    with st.sidebar:
        st.title("headscope")
        st.selectbox("Model", list(model_choices()), key="model")
        bert = get_bert(ss.model)[0] if needs_model else None  # a failure: the page shows it
        if bert is not None:
            c = bert.config
            st.caption(f"{shape(c.num_hidden_layers, c.num_attention_heads)}, "
                       f"hidden size {c.hidden_size}")
        st.text_area("Sentence", key="text", height=100, help=help_text)
        st.selectbox("Examples", list(PRESETS), index=None, key="preset",
                     placeholder="Load an example…", on_change=_pick_preset)
        ss.present_toggle = presenting()
        st.toggle("Presentation mode", key="present_toggle", on_change=_set_present,
                  help="For a projector: larger text and charts, no sidebar (the sentence "
                       "moves above the page). The link keeps it (present=1).")


def read_query_params() -> list:
    """Once per session, before the sidebar: take model and text from the link; keep layer, head
    and focus for the page to check (pending_params). Returns messages for what was ignored.
    Messages never repeat the link's values: they are user text."""
    if st.session_state.get("_link_read"):
        return []
    st.session_state._link_read = True
    qp, notes = st.query_params, []
    if "model" in qp:
        if qp["model"] in model_choices():
            st.session_state.model = qp["model"]
        else:
            notes.append(f"The link names a model this server does not offer; showing {BUNDLED}.")
    if "text" in qp:
        st.session_state.text = qp["text"]
        if len(qp["text"]) > MAX_CHARS:
            notes.append(f"The link's text is longer than {MAX_CHARS:,} characters; "
                         f"it was cut to that length.")
            st.session_state.text = qp["text"][:MAX_CHARS]
    if "present" in qp:
        st.session_state._present = is_on(qp["present"])
    st.session_state._pending = {k: qp[k] for k in VIEW_PARAMS if k in qp}
    return notes


# Widgets whose values outlive a visit to another page. Streamlit drops a widget's state at the
# end of a run that does not draw it; writing the value back first keeps it (Streamlit's docs,
# "Working with widgets in multipage apps", option 3). Only widgets created without a default
# of their own are listed (with one, Streamlit warns that the value was also set here). A kept
# value that the widget's options lack (a model with fewer heads) is dropped by Streamlit
# itself (tests/integration/test_frame.py).
KEPT_WIDGETS = ("word_level", "hide_special",  # Explorer (its layer and head: "_layer")
                "tr_pair", "tr_a", "tr_b", "tr_focus", "tr_head",  # Two readings
                "lab_how", "lab_heads", "lab_layers",  # Head lab
                "real_layer", "real_head",  # Inside MHA
                "corpus_source", "corpus_lines", "corpus_on")  # All heads


def keep_widgets():
    """Call once per run, from app.py, before any page draws a widget."""
    ss = st.session_state
    for key in KEPT_WIDGETS:
        if key in ss:
            ss[key] = ss[key]


def shape(layers: int, heads: int) -> str:
    """ "6 layers × 12 heads", and "1 layer × 1 head" for a one-layer, one-head model."""
    return (f"{layers} layer{'s' * (layers != 1)} × "
            f"{heads} head{'s' * (heads != 1)}")


def is_on(raw: str) -> bool:
    """A link's flag: 1, true, yes or on (any case) is on; anything else is off."""
    return str(raw).strip().lower() in ("1", "true", "yes", "on")


def pending_params() -> dict:
    """The link's view values (VIEW_PARAMS) not yet applied, as raw strings; the page pops them."""
    return st.session_state.setdefault("_pending", {})


def write_query_params(**values):
    """Put the current view in the URL, so the address bar is a link to it. A value of None
    removes the parameter. Only changed parameters are sent to the browser."""
    qp = st.query_params
    for key, value in values.items():
        if value is None:
            if key in qp:
                del qp[key]
        elif qp.get(key) != str(value):
            qp[key] = str(value)


def sync_link():
    """The frame's part of the link: model, sentence (a very long one is left out) and
    presentation mode."""
    text = st.session_state.get("text", "")
    write_query_params(model=current_model(),
                       text=text if len(text) <= URL_TEXT_MAX else None,
                       present=1 if presenting() else None)
    if len(text) > URL_TEXT_MAX:  # the sender is told; the link alone would open the default
        st.caption(f"🔗 This text is longer than {URL_TEXT_MAX:,} characters, too long for a "
                   "link: the address bar's link does not include it.")


def leave_legacy_pages_mode():
    """The first run after the server starts sees our pages/ folder and takes Streamlit's legacy
    multipage mode: app.py then runs as a page with other widget ids (the first sentence typed
    would be dropped), and a deep link such as /all_heads runs its page alone, without the
    frame and the sidebar. st.navigation in app.py switches the legacy mode off for good; this
    call, first in app.py and in every page, starts such a first run again without it.
    Once per process: AppTest turns the legacy mode back on before each of its runs, and a rerun
    there would swallow the button clicks of the run."""
    global _LEGACY_MODE_LEFT
    if PagesManager.uses_pages_directory and not _LEGACY_MODE_LEFT:
        _LEGACY_MODE_LEFT = True
        PagesManager.uses_pages_directory = False
        st.rerun()


_LEGACY_MODE_LEFT = False
