"""The app as an ASGI application: Streamlit's own server running the frame (app.py beside this
file) with the app's HTTP route (headscope.ui.explorer_route), through st.App, Streamlit's
public API for routes. `headscope run` and the tests start it with `streamlit run` on this
file, which finds `app` below and serves it with uvicorn (importing this file as a top-level
module: hence its name); the checkout's app.py does the same for `streamlit run app.py`."""

import streamlit as st

from headscope.files import FRAME
from headscope.ui import budget, explorer_route

budget.return_freed_memory()  # before any model's tensors (idempotent: `headscope run` did)
app = st.App(FRAME, routes=explorer_route.routes())
