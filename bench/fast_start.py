"""How long does the app take to start? From `make run` to every head's map drawn in a browser.

Runs the README's `make run` (after the install: .venv must exist) on a free port, with
chromium already open on an empty tab, as a teacher's browser would be. Prints, per run, the
seconds until the server answers /_stcore/health, until the page shows a spinner or the
sidebar, and until the Explorer's grid holds every head's heatmap of the default sentence
with its tick labels drawn. Each run is a cold process (the OS file cache stays warm, as it
does on a second `make run`).

    .venv/bin/python bench/fast_start.py [--runs 3]
"""

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import harness as h  # noqa: E402

# Anything Streamlit draws first: the status widget, a spinner, or the sidebar itself
FIRST_PAINT = '[data-testid="stSidebar"], [data-testid="stSpinner"], [data-testid="stStatusWidget"]'
# The sidebar's "6 layers × 12 heads" caption: the model is loaded
MODEL_READY = '[data-testid="stSidebar"] [data-testid="stCaptionContainer"]'


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as r:
            return r.read().strip() == b"ok"
    except OSError:
        return False


def one_run(page, tokens, heads) -> dict:
    from testkit.browser import wait_for_grid
    from testkit.server import free_port

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(Path(tempfile.mkdtemp()) / "make_run.log", "w")
    t0 = time.perf_counter()
    proc = subprocess.Popen(["make", "run", f"PORT={port}"], cwd=ROOT, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "STREAMLIT_SERVER_ADDRESS": "127.0.0.1"})
    try:
        while not healthy(url):
            if proc.poll() is not None:
                raise RuntimeError(f"make run exited; see {log.name}")
            time.sleep(0.05)
        t_health = time.perf_counter() - t0
        page.goto(url)
        page.wait_for_selector(FIRST_PAINT, timeout=60_000)
        t_paint = time.perf_counter() - t0
        page.wait_for_selector(MODEL_READY, timeout=60_000)
        t_model = time.perf_counter() - t0
        page.wait_for_selector("[data-drawn], .js-plotly-plot", timeout=60_000)
        t_chart = time.perf_counter() - t0
        wait_for_grid(page, tokens, heads, timeout_ms=120_000)
        t_grid = time.perf_counter() - t0
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # make and the streamlit it started
        proc.wait(10)
        page.goto("about:blank")
    return dict(health=t_health, paint=t_paint, model=t_model, chart=t_chart, grid=t_grid)


def main():
    ap = h.parser(__doc__)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if not (ROOT / ".venv" / ".runtime").exists():
        sys.exit("run `make run` once first: this measures the start after the install")
    print(h.machine())
    from headscope.ui.presets import DEFAULT_TEXT

    bert, heads = h.bundled()  # the expected tokens only
    tokens = bert.encode(DEFAULT_TEXT).tokens
    with h.chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        runs = []
        for i in range(args.runs):
            r = one_run(page, tokens, heads)
            runs.append(r)
            print(f"run {i + 1}: health {r['health']:.1f} s   first paint {r['paint']:.1f} s   "
                  f"model loaded {r['model']:.1f} s   first chart element {r['chart']:.1f} s   "
                  f"first heatmap {r['grid']:.1f} s", flush=True)
    grid = [r["grid"] for r in runs]
    print(f"\n`make run` -> every head's heatmap drawn: median {statistics.median(grid):.1f} s, "
          f"max {max(grid):.1f} s over {len(grid)} runs (goal <= 8 s)")


if __name__ == "__main__":
    main()
