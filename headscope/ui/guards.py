"""The same clear messages on every page for a model that will not load, text the model cannot
show, and a computation that fails on odd input: never a traceback. Messages never repeat the
user's text; user text placed in markdown is escaped (md_text)."""

import streamlit as st

from . import style
from .labels import visible
from .models import get_bert, text_facts
from .presentation import presenting
from .words import PIECE_MARKS, plural

MAX_CHARS = 20_000  # text longer than this is cut before tokenising (the model keeps 512 tokens)
MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>$~:&")


def model_or_stop(name: str):
    """The loaded model, or the loader's error on the page and the page stopped."""
    bert, err = get_bert(name)
    if err:
        st.error(err, icon=style.ICON_ERROR)
        where = "the Model list above the page" if presenting() else "the sidebar's Model list"
        st.caption(f"Other models in {where} still work.")
        st.stop()
    return bert


def check_text(name: str, text: str, prompt: str, what: str = "This text",
               cut: bool = False, pair: str | None = None) -> dict | None:
    """The same clear messages on every page for text the model cannot show, and notes on text
    it reads in its own way (a sentence pair included). Returns text_facts, or None when there
    is nothing to show (the message is on the page; the caller stops or skips its section)."""
    if cut:
        st.warning(f"The text is longer than {MAX_CHARS:,} characters; only the first "
                   f"{MAX_CHARS:,} are used.", icon=style.ICON_CUT)
    if not text.strip():
        st.info(prompt, icon=style.ICON_TYPE)
        return None
    facts = computed_or_none(text_facts, name, text, pair)  # a tokenizer failure: a message
    if facts is None:
        return None
    if facts["a_blank"]:
        sep = facts.get("separator", "[SEP]")
        st.info(f"There is nothing before the {sep}. A {sep} typed in the text starts sentence "
                "B, so type sentence A before it.", icon=style.ICON_TYPE)
        return None
    pair_notes(facts)
    cls, sep = facts.get("cls", "[CLS]"), facts.get("sep", "[SEP]")
    if facts["only_special"]:
        st.info(f"The tokenizer found nothing in {what[0].lower() + what[1:]} but {cls} and "
                f"{sep} (it drops spaces, control and zero-width characters). Type some words.",
                icon=style.ICON_TYPE)
        return None
    if facts["truncated"] and facts["is_pair"]:
        (fa, fb), (a, b) = facts["segments_full"], facts["segments"]
        st.warning(f"This pair has {facts['n_full']} tokens (A {fa} and B {fb} word pieces, "
                   f"with {cls} and {sep_count(facts)} {sep}), more than this model's limit of "
                   f"{facts['max_length']}. As transformers does, the longer sentence is cut "
                   f"first: A keeps {a} and B keeps {b} word pieces.", icon=style.ICON_CUT)
    elif facts["truncated"]:
        st.warning(f"{what} has {facts['n_full']} tokens, more than this model's limit of "
                   f"{facts['max_length']} (including {cls} and {sep}); only the first "
                   f"{facts['max_length']} are used.", icon=style.ICON_CUT)
    if facts["typed_special"]:
        names = ", ".join(f"`{t}`" for t in facts["typed_special"])
        st.info(f"{what} contains {names} typed as text. The tokenizer reads it as the model's "
                "own special token, not as letters (as transformers does).", icon=style.ICON_INFO)
    language_notes(facts, what)
    return facts


UNKNOWN_SHARE = 0.2  # above this share of unreadable words, the page warns before its charts
SPLIT_SHARE = 0.25  # from this share of words cut into ## pieces (2 at least), too (the preset
                    # English sentences: 0%; "Ich sehe den Mann mit dem Fernglas.": 2 of 8)
LANGUAGE = ("The bundled all-MiniLM-L6-v2 was trained on English text: it knows the letters of "
            "many scripts but few of their words, and most emoji not at all.")
PIECES = PIECE_MARKS["WordPiece"][1]  # BERT's note; each tokenizer's own: facts["piece_note"]


def language_notes(facts: dict, what: str = "This text"):
    """What the tokenizer does to this text's language before any head sees it, in ONE notice:
    accents stripped and capitals lowered (uncased models), words it cannot read at all, words
    it reads only letter by letter, and words cut into many pieces (with what the tokenizer's
    mark means where the page shows one: headscope.ui.words.PIECE_MARKS). English text gets only the
    uncased note (a caption)."""
    norm, limits = facts["normalised"], LANGUAGE if facts["bundled"] else ""
    where = what[0].lower() + what[1:]
    n, unknown, spelled = facts["n_words"], facts["unknown_words"], facts["spelled_words"]
    split = facts.get("split_words", 0)
    parts, quoted = [], False  # quoted: a cut word's pieces are shown as the tokenizer wrote them
    if norm["examples"]:
        shown = ", ".join(f"“{md_text(visible(a))}” as “{md_text(visible(b))}”"
                          for a, b in norm["examples"])
        parts.append(f"This model strips accents before the heads see the text"
                     f"{' and lowers capitals' if norm['lowercases'] else ''}: it reads {shown}, "
                     "so the maps below are of those words.")
    if n and unknown / n > UNKNOWN_SHARE:
        parts.append(f"{unknown} of {n} words ({unknown / n:.0%}) in {where} are unknown to this "
                     f"model's vocabulary and become `{facts['unk_token']}`: the maps below show "
                     "where those placeholder tokens attend, not the words.")
    if n and spelled / n > UNKNOWN_SHARE:
        parts.append(f"{spelled} of {n} words ({spelled / n:.0%}) in {where} are read letter by "
                     "letter: the vocabulary has their letters but not the words, so the maps "
                     "below are of single letters.")
    elif split >= 2 and split / n >= SPLIT_SHARE:
        shown = ", ".join(f"“{md_text(visible(word))}” as `{code_text(' '.join(w))}`"
                          for word, w in facts["split_examples"])
        parts.append(f"{split} of {n} words in {where} are cut into pieces ({shown}): words the "
                     "model saw rarely or never, so the maps below are of those pieces.")
        quoted = True
    if parts:
        # WordPiece's ## shows in every map; a BPE's Ġ or SentencePiece's ▁ only as a piece
        # that is nothing but the mark, said when the cut words quoted above hold one
        mark, note = facts.get("piece_mark", "##"), facts.get("piece_note", PIECES)
        alone = quoted and any(mark in w for _, w in facts["split_examples"])
        pieces = note if (split or spelled) and (mark == "##" or alone) else ""
        st.warning(" ".join([*parts, pieces, limits]).strip(), icon=style.ICON_LANGUAGE)
    elif norm["lowercases"]:
        st.caption("This model is uncased: it reads capitals as small letters.")
    if facts["unknown"] and not (n and unknown / n > UNKNOWN_SHARE):
        n_unk = facts["unknown"]
        st.caption(f"{plural(n_unk, 'token')} {'is' if n_unk == 1 else 'are'} "
                   f"`{facts['unk_token']}`: the vocabulary does not know them (some emoji and "
                   "scripts).")


def sep_count(facts: dict) -> str:
    """How many separators a pair holds, in words: "two" for [CLS] A [SEP] B [SEP], "three"
    for RoBERTa's <s> A </s></s> B </s>."""
    n = (facts.get("pair_reading") or "A [SEP] B [SEP]").count(facts.get("sep", "[SEP]"))
    return {2: "two", 3: "three"}.get(n, str(n))


def pair_notes(facts: dict):
    """What the model makes of a second sentence: a typed [SEP] that split the text, [SEP]s
    left inside a sentence, a blank or empty second sentence."""
    if facts["sep_typed"] and facts["is_pair"]:
        segments = ("with segment ids 0 and 1" if facts.get("segment_ids", True)
                    else "with no segment ids (the separator alone marks B)")
        st.info(f"The {facts.get('separator', '[SEP]')} typed in the text is read as the pair "
                f"separator: the text before it is sentence A, the rest sentence B, and the "
                f"model reads {facts.get('pair_reading') or '[CLS] A [SEP] B [SEP]'} {segments}, "
                f"as {facts.get('family', 'BERT')} reads sentence pairs.",
                icon=style.ICON_CUT)
    cls, sep = facts.get("cls", "[CLS]"), facts.get("sep", "[SEP]")
    typed = facts.get("separator", sep)
    if facts["sep_typed"] and not facts["is_pair"]:
        st.caption(f"The {typed} at the end of the text only ends sentence A: nothing follows "
                   "it, so there is no sentence B.")
    n = facts["kept_seps"]
    parts = "segments" if facts.get("segment_ids", True) else "sentences"
    if n:
        st.caption(f"{n} more {typed} typed inside a sentence {'stays' if n == 1 else 'stay'} "
                   f"there as {f'a {sep} token' if n == 1 and typed == sep else f'{sep} tokens'}: "
                   f"{facts.get('family', 'BERT')} reads two {parts}, A and B, and the first "
                   f"{typed} (or the second box) already starts B.")
    if facts["blank_pair"]:
        st.caption("The second sentence is blank, so the first is read alone.")
    reading = facts.get("pair_reading") or f"{cls} A {sep} B {sep}"
    for side, seen in (("A", " ".join(reading.replace("A", "", 1).split())),
                       ("B", " ".join(reading.replace("B", "", 1).split()))):
        if facts["is_pair"] and facts["segments_full"]["AB".index(side)] == 0:
            st.info(f"The tokenizer found nothing in sentence {side} (it drops spaces, control "
                    f"and zero-width characters): the model reads {seen}.", icon=style.ICON_TYPE)


def computed_or_none(fn, *args):
    """fn(*args), or None and a message when the model fails on this input."""
    try:
        return fn(*args)
    except Exception as e:  # a tokenizer or model failure on odd input: never a traceback
        st.error(f"The model could not read this text ({type(e).__name__}).", icon=style.ICON_ERROR)
        return None


def computed_or_stop(fn, *args):
    """fn(*args), or a message and the page stopped when the model fails on this input."""
    out = computed_or_none(fn, *args)
    if out is None:
        st.stop()
    return out


def code_text(s: str) -> str:
    """User text placed inside a markdown code span (`...`), shown literally: escapes are not
    read there, so the one character that could end the span becomes a quote."""
    return visible(s).replace("`", "'")


def md_text(s: str) -> str:
    """User text placed inside markdown, shown literally: every markdown (and LaTeX `$`)
    character backslash-escaped. Markdown never renders HTML here (no unsafe_allow_html)."""
    return "".join("\\" + c if c in MD_SPECIAL else c for c in s)
