"""Is one head enough? The shipped answer for the bundled model (mha_core/data/one_head_*.json,
made by `python -m mha_core.one_head`), shown beside the summed head on the Explorer and in the
Training lab's one-vs-many section. Other models: the command that measures them."""

import json
from functools import lru_cache
from pathlib import Path

import streamlit as st

import mha_core
from mha_core.one_head.cli import sentence
from mha_core.one_head.fit import fitted_meaning

from . import figures, models
from .models import BUNDLED
from .presentation import plot

DATA = Path(mha_core.__file__).resolve().parent / "data"
SHIPPED = {BUNDLED: DATA / "one_head_all-MiniLM-L6-v2.json"}
COMMAND = "python -m mha_core.one_head mha_core/data/headscope-sample.conllu --json OUT.json"


@lru_cache(maxsize=4)
def load(name: str) -> dict | None:
    """The shipped results for this model, or None (not measured)."""
    path = SHIPPED.get(name)
    return json.loads(path.read_text()) if path and path.is_file() else None


def how(result: dict) -> str:
    s, t = result["settings"], result["tokens"]
    return (f"R² on held-out sentences of the bundled sample ({result['sentences']['held_out']} "
            f"held out, {result['sentences']['fit']} fitted: {t['fit'][0]} tokens), mean of "
            f"{len(s['seeds'])} seeds; Adam, lr {s['fit']['lr']:g}, {s['fit']['steps']} steps. "
            f"Made by `{COMMAND}`; see docs/one-head.md.")


def layer_sentences(name: str) -> list | None:
    """Per layer (from 0), the Explorer's line under the summed head: "Is one head enough?" in
    one sentence from the shipped results; None where this model has none."""
    result = load(name)
    if result is None:
        return None
    return [f"Is one head enough? {sentence(row, result['heads'])} The summed head is these "
            "weights read as one head; the best-fit single head is one head trained to "
            "reproduce the layer. R² below 0: worse than writing the mean for every token."
            for row in result["layers"]]


def explorer_note(name: str, key: str):
    """Under the Explorer: every layer's answer in a popover (the layer shown has its sentence
    in the component), or how to measure it for a model without shipped results."""
    result = load(name)
    if result is None:
        bert = models.get_bert(name)[0]
        meaning = "" if bert is None else " " + fitted_meaning(bert.config)
        st.caption(f"Is one head enough for this model? Measure it: `{COMMAND} --model PATH`."
                   + meaning)
        return
    # built only while open (its two plotly figures): opening it reruns the page
    with st.popover("Every layer: one head vs many", width="stretch", on_change="rerun",
                    key=f"{key}_popover") as pop:
        if pop.open:
            section(name, key, side_by_side=False)


def section(name: str, key: str, side_by_side: bool = True):
    """Every layer: the sentences, the bars of (a), (b), (c) and the R²(h) curve."""
    result = load(name)
    if result is None:
        st.info(f"Not measured for this model; run `{COMMAND} --model PATH`.")
        return
    st.markdown("\n".join(f"- {sentence(r, result['heads'])}" for r in result["layers"]))
    w = result["whole_model"]
    st.markdown(f"Keeping only each layer's best original head, all layers at once (Michel et "
                f"al. 2019's check), the sentence embedding keeps a cosine of "
                f"{w['best_original_heads']['cosine']:.2f} with the intact model's; the "
                f"best-fit single head in every layer, {w['best_fit_single_heads']['cosine']:.2f}.")
    c1, c2 = st.columns(2) if side_by_side else (st, st)
    plot(c1, figures.one_head_bars(result), width="stretch", key=f"{key}_bars")
    plot(c2, figures.heads_curve(result), width="stretch", key=f"{key}_curve")
    st.caption(how(result) + " R² below 0: worse than writing the mean vector for every token.")
