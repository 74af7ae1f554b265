"""ELECTRA's discriminator on the Explorer: per token, how likely the model thinks it was
replaced (a word the generator put there, not the author). Drawn only for a checkpoint with
that head (ElectraForPreTraining); text is shown as text (a dataframe), never as HTML."""

import pandas as pd
import streamlit as st

from . import models


@st.cache_data(**models.bounded(), show_spinner=False)
def replaced(name: str, text: str, pair: str | None) -> dict:
    bert = models.bert_or_raise(name)
    enc = bert.encode(text, pair)
    return dict(tokens=enc.tokens, special=enc.special,
                p=bert.replaced_probabilities(enc).tolist())


def section(name: str, text: str, pair: str | None, bert):
    """Nothing for a model without the head."""
    if bert.model.replaced is None:
        return
    r = replaced(name, text, pair)
    st.subheader("Replaced tokens (ELECTRA's discriminator)")
    st.caption("ELECTRA was trained to spot words a small generator put in place of the "
               "author's. Each token's probability that it was replaced:")
    rows = [{"token": t, "replaced (probability)": p}
            for t, s, p in zip(r["tokens"], r["special"], r["p"]) if not s]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="ex_replaced",
                 column_config={"replaced (probability)": st.column_config.ProgressColumn(
                     min_value=0.0, max_value=1.0, format="%.2f")})
