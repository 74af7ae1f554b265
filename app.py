"""headscope from the checkout. `streamlit run app.py` (Streamlit's convention, what Community
Cloud and Spaces run) serves the app: Streamlit finds `app` below, an st.App running the app's
script (headscope/frame/app.py) with its HTTP route, as headscope/frame/headscope_asgi.py does
for `headscope run`. `python app.py [streamlit options]` is `headscope run` (`make run` calls it):
the same app, with the bundled model warmed up before the first browser connects."""

import sys

if __name__ == "__main__":
    from headscope.cli import run

    sys.exit(run(sys.argv[1:]))

import streamlit as st  # noqa: E402

from headscope.files import FRAME  # noqa: E402
from headscope.ui import budget, explorer_route  # noqa: E402

budget.return_freed_memory()  # before any model's tensors (headscope/ui/budget.py)
app = st.App(FRAME, routes=explorer_route.routes())
