"""Explorer latency in a real browser: Enter -> every map of the page shows the new sentence.

Starts `streamlit run app.py` on a free port, drives Debian's chromium, types 20 different
sentences one after another and, for each, times Ctrl+Enter until (a) the attention component
has drawn the heads, single head and mean of the new tokens (its data-drawn), and (b) every map
of the page is drawn: also the plotly charts (enlarged head, focus grid, focus bars), none of
them stale (testkit.browser.EXPLORER_DRAWN). Prints p50/p95 of both, chromium's CPU per rerun
(this process's chromium only, from Enter until 300 ms after the last map), and the server's
part: the time until the browser received the rerun's "script finished" message.

    .venv/bin/python bench/browser_latency.py [--screenshot docs/explorer.png]
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.measure import CpuWatch, ServerClock, percentile  # noqa: E402
from testkit.browser import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    submit,
    type_sentence,
    type_text,
    wait_for_explorer,
    wait_for_grid,
)
from testkit.server import start_app, stop_app  # noqa: E402

SENTENCES = [
    "The astronomer saw the man with a telescope.",
    "The cat sat on the mat.",
    "I went to the bank to deposit money.",
    "We sat on the bank of the river.",
    "Time flies like an arrow; fruit flies like a banana.",
    "The animal didn't cross the street because it was too tired.",
    "She read the letter that her brother had written.",
    "A quick brown fox jumps over the lazy dog.",
    "Teachers put the attention maps on the projector.",
    "The keys to the cabinet are on the table.",
    "Every student typed a sentence of their own.",
    "The old man the boats.",
    "Colorless green ideas sleep furiously.",
    "He gave her the book because she asked for it.",
    "The trophy didn't fit in the suitcase because it was too big.",
    "Birds of a feather flock together.",
    "The committee approved the proposal after a long debate.",
    "Can you see the mountain behind the clouds?",
    "My neighbour's dog barks at the postman every morning.",
    "The scientist who discovered the comet won a prize.",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--screenshot", help="save the page on the telescope sentence here")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    import mha_core

    bert = mha_core.load_bert()  # for the expected tokens only
    heads = bert.config.num_attention_heads
    log = Path(tempfile.mkdtemp()) / "streamlit.log"
    proc, url = start_app(log)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            clock = ServerClock(page)
            page.goto(url)
            wait_for_grid(page, bert.encode("I saw the man with a telescope.").tokens, heads)
            times, grid, server, cpu = [], [], [], []
            watch = CpuWatch()
            for text in SENTENCES:
                tokens = bert.encode(text).tokens
                type_text(page, text)
                watch.start()
                t_enter = time.perf_counter()
                submit(page)
                wait_for_grid(page, tokens, heads, timeout_ms=30_000)
                grid.append((time.perf_counter() - t_enter) * 1000)
                wait_for_explorer(page, tokens, heads, timeout_ms=30_000)
                times.append((time.perf_counter() - t_enter) * 1000)
                page.wait_for_timeout(300)  # the run may finish after the maps are drawn
                watch.poll()
                cpu.append(watch.total() * 1000)
                if clock.since(t_enter) is not None:
                    server.append(clock.since(t_enter) * 1000)
                print(f"{grid[-1]:7.0f} ms grid  {times[-1]:7.0f} ms all  {cpu[-1]:5.0f} ms CPU"
                      f"  T={len(tokens):2d}  {text}", flush=True)
            if args.screenshot:
                text = "I saw the man with a telescope."
                type_sentence(page, text)
                wait_for_grid(page, bert.encode(text).tokens, heads)
                page.evaluate("document.activeElement.blur()")  # no focus ring in the picture
                page.mouse.move(150, 700)  # over the sidebar, off the charts
                page.wait_for_timeout(1500)  # let the focus charts below finish drawing
                page.screenshot(path=args.screenshot)
                print(f"screenshot: {args.screenshot}")
            browser.close()
    finally:
        stop_app(proc)
    def line(xs):
        return (f"p50 {percentile(xs, 0.5):.0f} ms   p95 {percentile(xs, 0.95):.0f} ms   "
                f"min {min(xs):.0f} ms   max {max(xs):.0f} ms   mean {statistics.mean(xs):.0f} ms")

    print(f"\n{len(times)} sentences, Enter ->")
    print(f"  the component's {heads} heads + single head + mean drawn: {line(grid)}")
    print(f"  every map of the page drawn (and the plotly charts): {line(times)}")
    print(f"  chromium CPU per rerun: {line(cpu)}")
    print(f"  the whole rerun (Enter -> 'script finished' received): p50 "
          f"{percentile(server, 0.5):.0f} ms   p95 {percentile(server, 0.95):.0f} ms")


if __name__ == "__main__":
    main()
