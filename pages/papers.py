"""Papers: the field's attention results rerun on the sidebar's model, one paper at a time: what
it asks, its figure, our numbers beside the published ones (the paper's model and data named,
and what differs) and the whole record as JSON (mha_core.reproduce, bounded for a page visit)."""

import pandas as pd
import streamlit as st

from headscope.ui import guards, link, sidebar, style
from headscope.ui import papers as pp
from headscope.ui.models import BUNDLED_DECODER
from headscope.ui.page import Page
from headscope.ui.presentation import note, presenting

PAGE = Page("pp", keep=("pp_paper",), link=("paper",))
pending = PAGE.start()
KEYS = pp.paper_keys()


def to_decoder():
    st.session_state.model = BUNDLED_DECODER


def link_paper():
    """The link's paper (clark2019, …), where it is one of the seven; the kept one otherwise."""
    ss = st.session_state
    link.take_choice(pending, "paper", {k: k for k in KEYS}, "pp_paper",
                     f"The link's paper is not one of {', '.join(KEYS)}; it was ignored.")
    if ss.get("pp_paper") not in KEYS:
        ss.pp_paper = KEYS[0]


def option(key: str) -> str:
    return f"{pp.short_title(key)}: {pp.QUESTIONS[key]}"


def computed(name: str, key: str) -> dict | None:
    """The paper's cached view on this model, or None and one sentence saying why not."""
    title, md = pp.short_title(key), guards.md_text
    with st.spinner(f"Rerunning {title} on {md(name)}, on the first {pp.SENTENCES} sample "
                    "sentences…", show_time=True):
        try:
            return pp.paper_view(name, key)
        except ValueError as e:  # the paper's own sentence (no sentence fits, say)
            why = str(e)
        except Exception as e:  # anything a model throws on odd input: never a traceback
            why = type(e).__name__
    st.error(f"{title} could not be rerun on {md(name)}: {md(why[:300])}.", icon=style.ICON_ERROR)
    return None


def ours_table(rec: dict) -> pd.DataFrame:
    """Ours beside the published value: st.table reads its cells as markdown, so each is
    escaped (they hold model names)."""
    return pd.DataFrame([[guards.md_text(str(c)) for c in row] for row in rec["rows"]],
                        columns=["measure", "ours", "published"])


name = sidebar.current_model()
PAGE.heading("Papers", f"Seven papers' attention results rerun on {guards.md_text(name)}, one "
             "at a time: ours beside the published value.")
guards.model_or_stop(name)
link_paper()
pick, get = st.columns([5, 1], vertical_alignment="bottom")
key = pick.selectbox("Paper", KEYS, key="pp_paper", format_func=option,  # on a projector: the
                     label_visibility="collapsed" if presenting() else "visible")  # figure's room
link.write_query_params(paper=None if key == KEYS[0] else key)
view = computed(name, key)
if view is None:
    st.stop()
rec, p, md = view["record"], pp.paper(key), guards.md_text
if "skipped" in rec:  # the model lacks what the paper needs (an LM head): the paper's sentence
    st.container(key="pp_main").info(md(rec["skipped"]), icon=style.ICON_INFO)
    if name != BUNDLED_DECODER:
        st.button(f"Switch to {BUNDLED_DECODER}", key="pp_to_decoder", on_click=to_decoder,
                  icon=":material/swap_horiz:")
    st.stop()
get.download_button("JSON", view["json"], file_name=f"{key}.json", mime="application/json",
                    key="pp_json", on_click="ignore", icon=":material/download:", width="stretch",
                    help="The whole record: every number, per head where the paper has one, "
                         "the settings, the model, the sentences, the date and the machine.")
res = rec["results"]
note(f"On the first {pp.SENTENCES} of the {view['sample']} hand-made sentences shipped with "
     f"headscope ({md(rec['corpus']['name'])}), each read alone, with the paper's own limits "
     f"({res['sentences']} used); {rec['seconds']:.1f} s, kept for this model. All of them or "
     "your own corpus: `headscope reproduce` (docs/reproductions.md).")
with st.container(key="pp_figure"):
    st.image(view["png"], width="stretch" if presenting() else pp.SHOWN_PX)
note("", f"The first {pp.SENTENCES} sample sentences, each alone ({res['sentences']} used).")
st.subheader("Ours beside the published value")
with st.container(key="pp_table"):
    st.table(ours_table(rec), border="horizontal")
m = rec["model"]
st.markdown(f"**The paper:** {md(p.title)} ({md(p.citation)}): {md(p.model)}; {md(p.data)}.  \n"
            f"**Ours:** {md(name)} ({md(m['family'])}, {m['layers']} layers × {m['heads']} "
            f"heads) on {res['sentences']} short single sentences.  \n"
            f"**What differs:** {md(rec['differs'])}")
