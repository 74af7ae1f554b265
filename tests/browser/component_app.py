"""A test-only Streamlit script: the attention component alone, on data the tests control (a
sentence pair given directly, without the pages' frame). Run by tests/browser/conftest.py's
`component_url`; never part of the app.

    ?text=...&pair=...   the two segments (bundled model); ?view=model opens the model view
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import streamlit as st  # noqa: E402

import mha_core  # noqa: E402
from headscope.ui.attention import attention, lines_payload  # noqa: E402


@st.cache_resource
def bert():
    return mha_core.load_model()


qp = st.query_params
text = qp.get("text", "The cat sat on the mat.")
pair = qp.get("pair", "It was warm there.")
res = bert().attend(text, text_pair=pair or None)
payload = lines_payload(res.attentions.numpy(), res.tokens, res.special,
                        segments=res.encoded.token_type_ids.tolist(),
                        view=dict(mode=qp.get("view", "head"), layer=1, seq=0))
attention(payload, key="tc_lines")
