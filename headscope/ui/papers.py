"""The Papers page's computation: one paper of mha_core.reproduce rerun on the sidebar's model
over the first SENTENCES sentences of the shipped sample (mha_core/data/headscope-sample.conllu),
cached per (model, paper): the record, its JSON and the paper's figure as a PNG.

The figure is the one mha_core.reproduce.report draws (report.draw: the paper module's own
figure()), drawn for a screen: FIGURE_INCHES large with RC's fonts, so that its text is at least
style.PRESENT_MIN_PX on a 1280 px projector (see FIGURE_INCHES), and without its title, which the
page says in text above it.
"""

import io
import threading

import streamlit as st

from . import budget, models

# A page visit's bound: the first SENTENCES sentences of the 153 (each paper's own token caps
# apply: sentences over 128 tokens skipped, Abnar's over 24). On a shared 2-core machine, one
# torch thread (docs/reproductions.md, "On the Papers page"): at most 0.6 s a paper on the
# bundled encoder and 12.5 s (Abnar) on the bundled decoder; 2.4 s and 24 s with the cores
# three times oversubscribed.
SENTENCES = 40
# Every figure is drawn FIGURE_INCHES large with FONT_PT text (titles as large, axis labels and
# the papers' "small" legends 5/6 of it). In presentation mode it is shown at the page's width:
# 1200 CSS px on a 1280 px screen (2 rem of 20 px either side), where its smallest text is
# 16 * 5/6 / 72 * 1200 / 12 = 18.5 px (style.PRESENT_MIN_PX: 18) and the figure, 420 px high,
# ends above the first screen's bottom edge. Elsewhere it is at most SHOWN_PX wide.
FIGURE_INCHES = (12, 4.2)
FONT_PT = 16
RC = {"font.size": FONT_PT, "axes.titlesize": "medium", "axes.labelsize": "small"}
DPI = 120  # 1,440 px wide: st.image shows at most 1,460 px of an image's width
SHOWN_PX = 1100
_DRAWING = threading.Lock()  # matplotlib's font size is a process-wide setting (rc_context)

# What each paper asks, one line each (the selector's options)
QUESTIONS = {
    "clark2019": "Where does each head look ([CLS], [SEP], its neighbours), and which heads "
                 "track syntax?",
    "kobayashi2020": "Does a token that gets much weight also send much? Weight α against "
                     "norm ‖α f(x)‖.",
    "kovaleva2019": "What kinds of map do the heads draw (vertical, diagonal, block, "
                    "heterogeneous), and how often?",
    "voita2019": "Which heads are confident, and which look at a neighbour or at the rarest "
                 "word?",
    "gu2024": "How many heads park their attention on the first token (the sink rate)?",
    "abnar2020": "Does raw attention, its rollout or its flow rank the words as their real "
                 "importance does?",
    "michel2019": "How many heads can be switched off before the loss rises?",
}


def paper_keys() -> list:
    """The papers in the registry's order (mha_core.reproduce.PAPERS)."""
    from mha_core.reproduce import PAPERS

    return list(PAPERS)


def short_title(key: str) -> str:
    """ "Clark et al. 2019": the paper's title up to its first comma."""
    from mha_core.reproduce import PAPERS

    return PAPERS[key].PAPER.title.split(",")[0]


def paper(key: str):
    """The paper's record (mha_core.reproduce.common.Paper): title, citation, model, data."""
    from mha_core.reproduce import PAPERS

    return PAPERS[key].PAPER


@st.cache_data(**models.bounded(), show_spinner=False)  # the page's spinner names the work
def paper_view(name: str, key: str) -> dict:
    """{"record": the paper's record (mha_core.reproduce.reproduce: "skipped" where the model
    lacks what the paper needs), "json": it as strict JSON, "png": its figure (None when
    skipped), "sample": how many sentences the sample has} on the model `name` and the
    sample's first SENTENCES sentences."""
    from mha_core.api import Model
    from mha_core.reproduce import PAPERS, read_corpus, reproduce
    from mha_core.reproduce.report import to_json

    bert = models.bert_or_raise(name)
    # the same weights and tokenizer under the sidebar's name (the records name the model; a
    # server's path stays on the server); the shared model itself is not changed
    named = Model(bert.config, bert.model, bert.tokenizer, name, bert.path, bert.max_tokens)
    corpus = read_corpus()
    with budget.heavy_here(f"Rerunning {short_title(key)}"):
        rec = reproduce(key, named, corpus, SENTENCES)
        png = None if "skipped" in rec else figure_png(PAPERS[key], rec)
    return {"record": rec, "json": to_json(rec), "png": png, "sample": len(corpus.texts)}


def figure_png(module, rec: dict) -> bytes:
    """The paper's figure (report.draw) as PNG bytes: FIGURE_INCHES, RC's fonts, no title."""
    import matplotlib

    from mha_core.reproduce.report import draw

    out = io.BytesIO()
    with _DRAWING, matplotlib.rc_context(RC):
        fig = draw(module, rec)
        fig.suptitle("")  # the page names the paper, the model and the sentences above it
        fig.set_size_inches(*FIGURE_INCHES)
        fig.savefig(out, format="png", dpi=DPI)
    return out.getvalue()
