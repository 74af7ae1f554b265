"""The app with every script run timed on the server: a benchmark's launcher, `headscope run`
with a clock. The app's code is not touched.

Appends one line per run, "<seconds>", to the file named by HEADSCOPE_RUN_TIMES ("{pid}" in
that name becomes the server's process id: one file per worker behind nginx): the time from the
start of a script run to its end, on the server, waits for the GIL included (the wait for the
worker's run slot is not: the app's slot wraps around this clock). The Explorer's route
(headscope/ui/explorer_route.py) goes the same way into that name + ".route".
With HEADSCOPE_RUN_STAMPS set, also "<start> <end>" per run into that file, in Unix ms (a
browser on the same machine places them on its own clock: bench/explorer_latency.py split).

    python bench/timed_server.py [streamlit options]            # as `headscope run`; what
                                                                # make serve's workers run
    python bench/timed_server.py run SCRIPT [streamlit options] # as `python -m streamlit`
                                                                # (testkit.server.start_app)

bench/harness.py starts it (`app(timed=True)`, `serve(...)`); it is not run by hand.
"""

import functools
import os
import sys
import threading
import time
from pathlib import Path

_lock = threading.Lock()


def install(times: str, stamps: str | None):
    """Wrap Streamlit's ScriptRunner._run_script with the clock."""
    from streamlit.runtime.scriptrunner import script_runner

    run = script_runner.ScriptRunner._run_script

    @functools.wraps(run)
    def timed_run(self, rerun_data):
        t0, wall0 = time.perf_counter(), time.time()
        try:
            return run(self, rerun_data)
        finally:
            with _lock, open(times, "a") as f:
                f.write(f"{time.perf_counter() - t0:.4f}\n")
            if stamps:
                with _lock, open(stamps, "a") as f:
                    f.write(f"{wall0 * 1000:.1f} {time.time() * 1000:.1f}\n")

    script_runner.ScriptRunner._run_script = timed_run

    # the Explorer's route, timed the same way into "<times>.route" (its answer, from the
    # request's body read to its data built; the HTTP around it is not in it)
    from headscope.ui import explorer_route

    answer = explorer_route.answer

    @functools.wraps(answer)
    def timed_answer(*args):
        t0 = time.perf_counter()
        try:
            return answer(*args)
        finally:
            with _lock, open(times + ".route", "a") as f:
                f.write(f"{time.perf_counter() - t0:.4f}\n")

    explorer_route.answer = timed_answer


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(f"usage: {Path(__file__).name} [run SCRIPT] [streamlit options]\n\n{__doc__}")
        return 0
    times = os.environ.get("HEADSCOPE_RUN_TIMES", "").replace("{pid}", str(os.getpid()))
    if not times:
        print("timed_server: set HEADSCOPE_RUN_TIMES to the file for the run times",
              file=sys.stderr)
        return 2
    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))  # this checkout's headscope, as `python app.py` finds it
    from headscope.cli import run
    from headscope.files import FRAME, SERVER

    install(times, os.environ.get("HEADSCOPE_RUN_STAMPS"))
    if argv[:1] == ["run"]:  # `run SCRIPT options`: the frame is `headscope run`
        script, options = argv[1], argv[2:]
        if Path(script).resolve() not in (FRAME.resolve(), SERVER.resolve()):
            from streamlit.web import cli

            sys.argv = ["streamlit", "run", script, *options]
            return cli.main()
        argv = options
    return run(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
