"""Start headscope from the checkout, without installing it: `python app.py [streamlit options]`
is `headscope run` (`make run` calls it). The app's Streamlit script is headscope/frame/app.py;
`streamlit run app.py` gets a note that says so."""

import sys

from streamlit import runtime

if runtime.exists():  # run by `streamlit run app.py`: this file is not the app's script
    import streamlit as st

    st.info("Start headscope with `python app.py` (or `make run`, or `headscope run` once "
            "installed): the app's own script is headscope/frame/app.py.")
else:
    from headscope.cli import run

    sys.exit(run(sys.argv[1:]))
