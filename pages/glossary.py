"""Glossary: the one vocabulary of the app, the guide and the README (docs/glossary.md)."""

import streamlit as st

from headscope.ui import docs
from headscope.ui.page import Page

PAGE = Page("gl")
PAGE.start()
PAGE.heading("Glossary", "Every term the pages use, in one place: nats, top key, summed head…")
# the file's own title is the heading above
st.container(key="gl_terms").markdown(docs.glossary().split("\n", 1)[1])
