"""`make run`'s entry point: `streamlit run app.py`, with the bundled model loading meanwhile.

`streamlit run` runs nothing until the first browser connects, so the first visitor would wait
for torch, transformers and the weights (about 3 s here, bench/fast_start.py). This starts
that load in a thread, into the same st.cache_resource the pages read, while Streamlit's server
starts; then it is `streamlit run app.py` with the arguments given here. A load failure is left
to the page, which shows it when it asks for the model.

    .venv/bin/python serve.py [--server.port 8501 ...]
"""

import sys
import threading


def warm():
    from pages import common

    try:
        common.warm_up()
    except Exception:  # the page reports a broken model when it asks for it
        pass


if __name__ == "__main__":
    threading.Thread(target=warm, name="headscope-warm-up", daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", "app.py", *sys.argv[1:]]
    sys.exit(cli.main())
