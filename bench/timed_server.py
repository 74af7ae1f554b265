"""A Streamlit server with every script run timed on the server: a benchmark's launcher.

Appends one line per run, "<seconds>", to the file named by HEADSCOPE_RUN_TIMES ("{pid}" in
that name becomes the server's process id: one file per worker behind a proxy): the time from
the start of a script run to its end, on the server, waits for the GIL included. With
HEADSCOPE_RUN_STAMPS set, also "<start> <end>" per run into that file, as Unix time in ms (a
browser on the same machine can place them on its own clock: bench/explorer_path.py). The app's
code is not touched. With HEADSCOPE_PROFILE_DIR set, each run is also profiled (cProfile, the
script runner's thread only) into DIR/run-<n>.prof, n counting from 0 (bench/rerun_profile.py).

    python bench/timed_server.py run app.py [streamlit options]   # as `python -m streamlit`
    python bench/timed_server.py [streamlit options]              # as serve.py (make run,
                                                                  # make serve's workers)
"""

import os
import runpy
import sys
import threading
import time
from pathlib import Path

from streamlit.runtime.scriptrunner import script_runner
from streamlit.web import cli

_lock = threading.Lock()
_run = script_runner.ScriptRunner._run_script
_path = os.environ.get("HEADSCOPE_RUN_TIMES", "").replace("{pid}", str(os.getpid()))
_profile_dir = os.environ.get("HEADSCOPE_PROFILE_DIR")
_stamps = os.environ.get("HEADSCOPE_RUN_STAMPS")
_runs = [0]


def _timed_run(self, rerun_data):
    t0, wall0 = time.perf_counter(), time.time()
    prof = None
    if _profile_dir:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    try:
        return _run(self, rerun_data)
    finally:
        if prof is not None:
            prof.disable()
            with _lock:
                prof.dump_stats(Path(_profile_dir) / f"run-{_runs[0]}.prof")
                _runs[0] += 1
        with _lock, open(_path, "a") as f:
            f.write(f"{time.perf_counter() - t0:.4f}\n")
        if _stamps:
            with _lock, open(_stamps, "a") as f:
                f.write(f"{wall0 * 1000:.1f} {time.time() * 1000:.1f}\n")


if __name__ == "__main__":
    if not _path:
        sys.exit("timed_server: set HEADSCOPE_RUN_TIMES to the file for the run times")
    script_runner.ScriptRunner._run_script = _timed_run
    if sys.argv[1:2] == ["run"]:
        sys.argv = ["streamlit", *sys.argv[1:]]
        sys.exit(cli.main())
    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))  # serve.py imports ui, as it does when run itself
    sys.argv = [str(root / "serve.py"), *sys.argv[1:]]
    runpy.run_path(sys.argv[0], run_name="__main__")
