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
import traceback

from streamlit.web import cli

# imported here, before the thread: never two threads importing at once
from ui import budget, models, threads


def warm():
    try:
        models.warm_up()
    except Exception:  # the page shows a broken model's error when it asks for it
        print("headscope: warming up the bundled model failed:", file=sys.stderr)
        traceback.print_exc()


if __name__ == "__main__":
    budget.return_freed_memory()  # before the model's tensors (ui/budget.py)
    threads.limit()  # before the warm-up's forward pass (app.py sets it too)
    threading.Thread(target=warm, name="headscope-warm-up", daemon=True).start()
    sys.argv = ["streamlit", "run", "app.py", *sys.argv[1:]]
    sys.exit(cli.main())
