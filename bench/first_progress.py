"""Time to the first progress indicator on a 512-token text, in a real browser (issue 14).

Starts `streamlit run app.py` on a free port, opens the model once (so that loading it is not
timed), then opens each page with a 512-token text in the link (presentation mode off) and
reads, from the page's own clock (performance.now(): milliseconds since navigation start),
when a Streamlit spinner first appears ([data-testid=stSpinner]), when the running status
widget first appears ([data-testid=stStatusWidget]), and when the page's main figure is drawn.
A MutationObserver installed before the page's scripts records each moment. Every run gets a
text of its own (a different first word), so that no cache answers it. Prints the median of
--runs runs per page.

    .venv/bin/python bench/first_progress.py [--runs 3]
"""

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from testkit.browser import launch, wait_settled  # noqa: E402
from testkit.server import start_app, stop_app  # noqa: E402

WORDS = ["word", "another", "sentence", "keeps", "going"] * 130  # 650 words: cut to 512 tokens
# page (its url path) -> the selector that is there once its main figure is drawn
PAGES = {
    "explorer": ("", ".st-key-ex_grid [data-drawn]"),
    "all_heads": ("all_heads", ".st-key-ah_atlas .main-svg"),
    "head_view": ("head_view", ".st-key-hv_lines [data-drawn]"),
}
WATCH = """(drawnSelector) => {
  const marks = window.__marks = {};
  const seen = (name, sel) => {
    if (!(name in marks) && document.querySelector(sel)) marks[name] = performance.now();
  };
  const check = () => {
    seen('spinner', '[data-testid="stSpinner"]');
    seen('status', '[data-testid="stStatusWidget"]');
    seen('drawn', drawnSelector);
  };
  new MutationObserver(check).observe(document, {childList: true, subtree: true,
                                                 attributes: true});
}"""


def one_run(browser, url: str, path: str, drawn: str, text: str) -> dict:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    page.add_init_script(f"({WATCH})({drawn!r})")
    page.goto(f"{url}/{path}?text={quote(text)}", wait_until="commit")
    page.wait_for_function("() => window.__marks && 'drawn' in window.__marks",
                           timeout=120_000)
    marks = page.evaluate("window.__marks")
    ctx.close()
    return marks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    log = Path(tempfile.mkdtemp()) / "streamlit.log"
    proc, url = start_app(log)
    try:
        with sync_playwright() as p:
            browser = launch(p)
            warm = browser.new_page()
            warm.goto(url, wait_until="commit")  # the model loads here, not in a timed run
            wait_settled(warm, {"ex_grid": "component"}, timeout_ms=180_000)
            warm.close()
            print(f"512-token text ({len(WORDS)} words cut to 512 tokens), presentation off; "
                  f"ms from navigation start, median of {args.runs} runs (each its own text)")
            print(f"{'page':12} {'spinner':>9} {'status':>9} {'drawn':>9}   runs (spinner/drawn)")
            for name, (path, drawn) in PAGES.items():
                runs = [one_run(browser, url, path, drawn, " ".join([f"run{name}{i}", *WORDS]))
                        for i in range(args.runs)]

                def med(key, runs=runs):
                    got = [r[key] for r in runs if key in r]
                    return f"{statistics.median(got):9.0f}" if len(got) == len(runs) else \
                        f"{'none' if not got else f'{len(got)}/{len(runs)}':>9}"

                each = " ".join(f"{r.get('spinner', float('nan')):.0f}/{r['drawn']:.0f}"
                                for r in runs)
                print(f"{name:12} {med('spinner')} {med('status')} {med('drawn')}   {each}",
                      flush=True)
            browser.close()
    finally:
        stop_app(proc)


if __name__ == "__main__":
    main()
