"""What every paper's reproduction shares: the paper's record, the refusal for a model that
lacks what a paper needs, the token types the papers count, and heads named as in the app.

Shape letters: L layers, H heads, T tokens.
"""

from dataclasses import dataclass

import numpy as np

DECIMALS = 4  # numbers in the JSON


@dataclass(frozen=True)
class Paper:
    key: str  # "clark2019": the command's NAME and the output files' stem
    title: str  # "Clark et al. 2019, What Does BERT Look At?"
    citation: str  # where to find it: "arXiv:1906.04341"
    model: str  # the model the paper measured
    data: str  # the data the paper measured it on
    default_model: str | None = None  # load_model's source when --model is not given
    default_sentences: int = 153  # the whole bundled sample


@dataclass(frozen=True)
class Published:
    measure: str  # what the paper reports
    value: str  # as the paper gives it (a number, or its words where it gives none)


class Unsupported(ValueError):
    """A model without what a paper needs (an LM head, say): str(e) is the one sentence the
    command prints instead of a result."""


def head_label(layer: int, head: int) -> str:
    """L1-H1 style, counted from 1 (as the app and the papers count)."""
    return f"L{layer + 1}-H{head + 1}"


def heads_where(mask) -> list:
    """The labels of the heads where an (L, H) bool array is True, in order."""
    return [head_label(int(layer), int(h)) for layer, h in zip(*np.nonzero(np.asarray(mask)))]


def listed(labels, total: int | None = None, at_most: int = 8) -> str:
    """"3 of 72 (L1-H3, L2-H9, L4-H1)": how many (of total), and the first at_most of them."""
    more = " …" if len(labels) > at_most else ""
    return (f"{len(labels)}" + ("" if total is None else f" of {total}")
            + (f" ({', '.join(labels[:at_most])}{more})" if labels else ""))


def token_types(enc) -> dict:
    """T bools per type the papers count: "cls" (a special token in first place), "sep" (the
    special tokens after it), "period" and "comma" (a piece that reads "." or ","), and
    "first" (token 0, whatever it is: a decoder's sink)."""
    special = list(enc.special)
    T = len(special)
    labels = [str(t).strip() for t in enc.tokens]
    return {"cls": np.array([s and i == 0 for i, s in enumerate(special)]),
            "sep": np.array([s and i > 0 for i, s in enumerate(special)]),
            "period": np.array([not s and t == "." for t, s in zip(labels, special)]),
            "comma": np.array([not s and t == "," for t, s in zip(labels, special)]),
            "first": np.arange(T) == 0}


def visible_keys(T: int, decoder: bool) -> np.ndarray:
    """(T, T) bools: which keys each query row may attend to (a decoder's causal triangle)."""
    return np.tril(np.ones((T, T), dtype=bool)) if decoder else np.ones((T, T), dtype=bool)


def lm_kind(model) -> str:
    """"next" (a decoder), "masked" (an encoder with its masked-LM head), or Unsupported with
    the sentence that says what is missing."""
    if model.is_decoder:
        return "next"
    if model.has_mlm_head:
        return "masked"
    raise Unsupported(f"{model.name} has no language-model head (neither a decoder's next word "
                      f"nor a masked-LM head), so there is no loss or prediction to measure; "
                      f"run it with --model bundled-decoder or a checkpoint with an LM head "
                      f"(e.g. bert-base-uncased).")


def model_info(model) -> dict:
    c = model.config
    return {"name": model.name, "family": model.family.name, "layers": c.num_hidden_layers,
            "heads": c.num_attention_heads, "d_model": c.hidden_size,
            "decoder": bool(model.is_decoder)}


def rounded(x):
    """Arrays and floats as JSON-ready lists and numbers (NaN as None)."""
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 0:
        return None if np.isnan(a) else round(float(a), DECIMALS)
    return [rounded(v) for v in a]


def pct(x) -> str:
    """0.5123 -> "51.2 %"; None or NaN -> "n/a"."""
    return "n/a" if x is None or np.isnan(x) else f"{100 * float(x):.1f} %"


def lm_logits(model, hidden, kind: str):
    """The LM head on final hidden states (..., D) -> (..., V): a decoder's next word ("next")
    or the masked-LM head ("masked")."""
    return model.model.lm_logits(hidden) if kind == "next" else model.model.mlm_logits(hidden)


def is_punct(label) -> bool:
    from ..metrics import is_punctuation

    return is_punctuation(str(label).strip())
