"""headscope from the checkout. `streamlit run app.py` (Streamlit's convention, what Community
Cloud and Spaces run) shows the app: this file then runs the app's script,
headscope/frame/app.py, on every run Streamlit makes of it. `python app.py [streamlit options]`
is `headscope run` (`make run` calls it): the same app, with the bundled model warmed up before
the first browser connects."""

import runpy
import sys

from streamlit import runtime

if runtime.exists():  # run by `streamlit run app.py`: this file is Streamlit's main script
    from headscope.files import FRAME
    from headscope.ui import budget

    budget.return_freed_memory()  # what `headscope run` does first (idempotent)
    runpy.run_path(str(FRAME), run_name="__main__")
else:
    from headscope.cli import run

    sys.exit(run(sys.argv[1:]))
