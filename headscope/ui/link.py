"""The link: query parameters that restore a view, read once per session and kept in the
address bar as the view changes.

The frame owns FRAME_PARAMS (model, text, pair, present). Every other parameter belongs to the page
that declares it (headscope.ui.page.Page.link): on the first run it waits in pending_params() until
that page applies it. Messages never repeat a link's values: they are user text.
"""

import streamlit as st

from . import share, style
from .guards import MAX_CHARS
from .models import BUNDLED, BUNDLED_DECODER, model_choices
from .sidebar import current_model

FRAME_PARAMS = ("model", "text", "pair", "present")
BUNDLED_ID = "bundled"  # the bundled model's name in links (its full name still opens)
# the bundled models by their names in links (the sources mha_core.load_model takes)
SHORT_IDS = {BUNDLED_ID: BUNDLED, "bundled-decoder": BUNDLED_DECODER}
URL_TEXT_MAX = 2_000  # a longer sentence is left out of the link (browsers cap URL length)


def is_on(raw: str) -> bool:
    """A link's flag: 1, true, yes or on (any case) is on; anything else is off."""
    return str(raw).strip().lower() in ("1", "true", "yes", "on")


def take_choice(pending: dict, param: str, options: dict, key: str, refused: str):
    """A page's link parameter that names one of `options` (the link's word -> the widget's
    value): popped from `pending` and set as the widget's session key `key`; any other word is
    ignored with the message `refused` (never repeating the link's value: it is user text)."""
    if param not in pending:
        return
    raw = pending.pop(param)
    if raw in options:
        st.session_state[key] = options[raw]
    else:
        st.warning(refused, icon=style.ICON_LINK)


def clamp_int(raw, lo: int, hi: int, what: str):
    """(value or None, message or None) for a query parameter that should be an int in [lo, hi]."""
    try:
        value = int(str(raw).strip())
    except ValueError:
        return None, f"The link's {what} is not a number; it was ignored."
    if not lo <= value <= hi:
        clamped = min(max(value, lo), hi)
        return clamped, f"The link's {what} {value} is outside {lo}–{hi}; showing {what} {clamped}."
    return value, None


def read_query_params() -> list:
    """Once per session, before the sidebar: take model, text and pair from the link; keep
    every other parameter for its page (pending_params). Returns messages for what was ignored."""
    ss = st.session_state
    if ss.get("_link_read"):
        return []
    ss._link_read = True
    qp, notes = st.query_params, []
    if "model" in qp:
        if qp["model"] in model_choices():
            ss.model = qp["model"]
        elif qp["model"] in SHORT_IDS:
            ss.model = SHORT_IDS[qp["model"]]
        else:
            notes.append(f"The link names a model this server does not offer; showing {BUNDLED}.")
    for param, what in (("text", "text"), ("pair", "second sentence")):
        if param in qp:
            ss[param] = qp[param][:MAX_CHARS]
            if len(qp[param]) > MAX_CHARS:
                notes.append(f"The link's {what} is longer than {MAX_CHARS:,} characters; "
                             f"it was cut to that length.")
    if "present" in qp:
        ss._present = is_on(qp["present"])
    ss._pending = {k: qp[k] for k in qp if k not in FRAME_PARAMS}
    return notes


def claim_pending(page_path: str):
    """The frame's call after navigation: the link's page values belong to the page the link
    opened. Once another page runs, they are dropped, unused: a parameter one page did not get
    to apply (it stopped on bad text) must not surface on another page with the same name."""
    ss = st.session_state
    owner = ss.setdefault("_pending_page", page_path)
    if owner != page_path:
        ss._pending = {}


def pending_params() -> dict:
    """The link's page values not yet applied, as raw strings; the page pops them."""
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
    share.refresh()


def write_frame_link() -> bool:
    """The frame's parameters in the address bar: model (the bundled one by a short id),
    sentence and second sentence (a very long one is left out: returns True then). Never
    present=1: a link copied from a projector's address bar would carry presentation mode to
    every student; the copy-link box offers it separately."""
    text, pair = st.session_state.get("text", ""), st.session_state.get("pair", "")
    model = current_model()
    short = {name: short for short, name in SHORT_IDS.items()}
    write_query_params(model=short.get(model, model),
                       text=text if len(text) <= URL_TEXT_MAX else None,
                       pair=pair if pair and len(pair) <= URL_TEXT_MAX else None, present=None)
    return max(len(text), len(pair)) > URL_TEXT_MAX


def sync_link(say_too_long: bool = True):
    """The frame's part of the link (write_frame_link), and a line telling the sender when the
    text is too long for it (say_too_long=False: the page says it, in the part that reruns with
    a new sentence: the Explorer's maps)."""
    if write_frame_link() and say_too_long:
        st.caption(f"{style.ICON_LINK} This text is longer than {URL_TEXT_MAX:,} characters, "
                   "too long for a link: the address bar's link does not include it.")


def explorer_view(params: dict, layers: int, heads: int) -> tuple[dict, list]:
    """The one parser of the Explorer's view as its link names it (the address bar explorer.js
    writes, a shared link, or the same parameters kept across a page change: shared_view):
    (view, notes). view: "layer" and "head" from 0 (the link counts from 1; clamped, or left
    out when not a number), "words", "hide" and "norm" from the flags words, nospecial and
    norms, and "focus" as written (a token's text, "#i", or "#i,#j"; the caller resolves it
    against the tokens of that view: resolve_focus_list). notes: what was clamped or ignored."""
    view, notes = {}, []
    for param, hi in (("layer", layers), ("head", heads)):
        if param in params:
            value, note = clamp_int(params[param], 1, hi, param)
            if value is not None:
                view[param] = value - 1
            if note:
                notes.append(note)
    for param, key in (("words", "words"), ("nospecial", "hide"), ("norms", "norm")):
        if param in params:
            view[key] = is_on(params[param])
    if "focus" in params:
        view["focus"] = str(params["focus"])
    return view, notes


def resolve_focus(raw: str, labels) -> int | None:
    """A focus parameter: a token's text (its first occurrence) or "#i" for position i."""
    raw = str(raw)
    lowered = [x.lower() for x in labels]
    if raw.lower() in lowered:
        return lowered.index(raw.lower())
    digits = raw[1:]
    if raw.startswith("#") and digits.isascii() and digits.isdigit() and len(digits) <= 6 \
            and int(digits) < len(labels):
        return int(digits)
    return None


def resolve_focus_list(raw: str, labels) -> list | None:
    """A focus parameter naming one token (resolve_focus) or several as "#i,#j" (positions,
    sorted, each once); None when any part is not in labels."""
    one = resolve_focus(raw, labels)
    if one is not None:
        return [one]
    parts = [resolve_focus(p, labels) if p.startswith("#") else None
             for p in str(raw).split(",")]
    if len(parts) < 2 or any(p is None for p in parts):
        return None
    return sorted(set(parts))


def focus_param(labels, i: int) -> str:
    """The inverse of resolve_focus: the token's text when that finds it, else "#i"."""
    return labels[i] if resolve_focus(labels[i], labels) == i else f"#{i}"
