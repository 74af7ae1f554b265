"""`python -m streamlit`, with every script run timed on the server: a benchmark's launcher.

Appends one line per run, "<seconds>", to the file named by HEADSCOPE_RUN_TIMES: the time from
the start of a script run to its end, on the server, waits for the GIL included. The app's
code is not touched.

    python bench/timed_server.py run app.py [streamlit options]
"""

import os
import sys
import threading
import time

from streamlit.runtime.scriptrunner import script_runner
from streamlit.web import cli

_lock = threading.Lock()
_run = script_runner.ScriptRunner._run_script


def _timed_run(self, rerun_data):
    t0 = time.perf_counter()
    try:
        return _run(self, rerun_data)
    finally:
        with _lock, open(os.environ["HEADSCOPE_RUN_TIMES"], "a") as f:
            f.write(f"{time.perf_counter() - t0:.4f}\n")


if __name__ == "__main__":
    script_runner.ScriptRunner._run_script = _timed_run
    sys.argv = ["streamlit", *sys.argv[1:]]
    sys.exit(cli.main())
