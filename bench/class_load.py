"""A whole class at once: 30 browser sessions on one server, each typing its own sentence.

Starts `streamlit run app.py` on a free port and opens 30 sessions at the same moment (one
Debian chromium, one context per student). Each session waits for the Explorer, types a
different sentence and presses Ctrl+Enter, then moves the layer slider 3 times. Every step is
timed from the key press until the per-head grid shows all H heatmaps of the new tokens with
the entropy titles of the new layer (checked against our own model here), its tick labels
drawn. Prints p50/p95 of those times, the failed sessions (a Streamlit exception element or a
60 s timeout), and the server's peak RSS (VmHWM).

In a classroom every student's browser draws on its own machine; here 30 chromium renderers
share the server's two cores and draw plotly charts without a GPU. So the browsers run at
nice 19 (--browser-nice; 0 turns it off): the server keeps the CPU it would have on its own
machine, and the students' screens get what is left. The server is started through
bench/timed_server.py, which times every script run on the server itself; those times are
printed beside the browser's.

    .venv/bin/python bench/class_load.py [--sessions 30] [--layer-moves 3] [--browser-nice 19]
"""

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.browser_latency import SENTENCES  # noqa: E402
from bench.measure import (  # noqa: E402
    CpuWatch,
    ServerClock,
    cpu_seconds,
    peak_rss_mb,
    percentile,
)
from testkit.browser import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    GRID_SHOWS,  # noqa: E402
    HOST,
)
from testkit.server import start_app, stop_app  # noqa: E402

MORE = [
    "The teacher explained attention with a diagram on the board.",
    "Rain is expected in the north by the weekend.",
    "Our team won the match in the last minute.",
    "The museum opens at nine and closes at five.",
    "He painted the fence before the guests arrived.",
    "Which planet has the most moons?",
    "The recipe needs two eggs and a cup of flour.",
    "A train left the station an hour late.",
    "The violinist tuned her instrument before the concert.",
    "Students argued about whether robots can be creative.",
]
GRID = HOST.format(key="ex_grid")  # the Explorer's attention component
TIMEOUT_MS = 60_000  # a step (Enter, a layer move) that takes longer fails the session
OPEN_TIMEOUT_MS = 300_000  # opening the page: 30 Streamlit front ends boot on these 2 cores

# True once the grid shows `tokens` for this layer: the component's data-drawn and data-tag
# ("layer N", numbered from 1), see testkit.browser.
GRID_LAYER_SHOWS = """([sel, tokens, heads, layer]) => {
  if (!(GRID_SHOWS)([sel, tokens, heads])) return false;
  return document.querySelector(sel).dataset.tag === `layer ${layer + 1}`;
}""".replace("GRID_SHOWS", GRID_SHOWS.strip())


async def wait_view(page, bert, text, layer, heads, timeout_ms):
    tokens = bert.encode(text).tokens
    await page.wait_for_function(GRID_LAYER_SHOWS, arg=[GRID, tokens, heads, layer],
                                 polling=100, timeout=timeout_ms)


async def failed_element(page) -> bool:
    return await page.locator('[data-testid="stException"]').count() > 0


def layer_input(page):
    """The layer slider's range input (react-aria keeps it visually hidden, keyboard-driven)."""
    return page.locator('.st-key-ex_layer input[type="range"]').first


async def student(browser, url, bert, text, moves, heads, start: asyncio.Event,
                  delay: float) -> dict:
    out = dict(text=text, steps=[], server=[], error=None)
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(TIMEOUT_MS)
    page = await context.new_page()
    clock = ServerClock(page)

    async def step(kind, press, text_now, layer):
        t = time.perf_counter()
        await press()
        await wait_view(page, bert, text_now, layer, heads, TIMEOUT_MS)
        out["steps"].append((kind, time.perf_counter() - t))
        out["server"].append(clock.since(t))

    try:
        await start.wait()  # everybody opens the link at the same moment (or `delay` later)
        await asyncio.sleep(delay)
        t = time.perf_counter()
        await page.goto(url, wait_until="commit", timeout=OPEN_TIMEOUT_MS)
        await page.wait_for_selector(GRID, timeout=OPEN_TIMEOUT_MS)
        layer = int(await layer_input(page).input_value()) - 1  # the slider shows 1..L
        await wait_view(page, bert, "I saw the man with a telescope.", layer, heads,
                        OPEN_TIMEOUT_MS)
        out["open"] = time.perf_counter() - t

        box = page.locator('[data-testid="stSidebar"] textarea').first
        await box.click()
        await box.press("Control+a")
        await box.press_sequentially(text)
        await step("enter", lambda: box.press("Control+Enter"), text, layer)

        thumb = layer_input(page)
        top = int(await thumb.get_attribute("max")) - 1  # the last layer's index
        for _ in range(moves):
            key, layer = ("ArrowRight", layer + 1) if layer < top else ("ArrowLeft", layer - 1)
            await thumb.focus()
            await step("layer", lambda key=key: thumb.press(key), text, layer)
        if await failed_element(page):
            out["error"] = "exception element"
    except Exception as e:  # a timeout: the session failed
        out["error"] = ("exception element" if await failed_element(page)
                        else f"{type(e).__name__}: {str(e).splitlines()[0][:120]}")
    finally:
        await context.close()
    return out


async def run(args, bert, url, server_pid):
    from playwright.async_api import async_playwright

    heads = bert.config.num_attention_heads
    texts = (SENTENCES + MORE) * (args.sessions // 30 + 1)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # The teacher's screen: the app is open before the class arrives (model loaded)
        teacher = await browser.new_page(viewport={"width": 1280, "height": 800})
        await teacher.goto(url)
        await teacher.wait_for_selector(GRID, timeout=TIMEOUT_MS)
        await teacher.close()
        start = asyncio.Event()
        tasks = [asyncio.create_task(student(browser, url, bert, texts[i], args.layer_moves,
                                             heads, start, i * args.stagger))
                 for i in range(args.sessions)]
        await asyncio.sleep(2)  # contexts created; now all at once
        watch, server_cpu = CpuWatch(), cpu_seconds([server_pid])
        watch.start()
        start.set()
        everyone = asyncio.gather(*tasks)
        while not everyone.done():
            watch.poll()
            await asyncio.wait([everyone], timeout=0.5)
        results = everyone.result()
        cpu = cpu_seconds([server_pid]) - server_cpu, watch.total()
        await browser.close()
    return results, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--layer-moves", type=int, default=3)
    ap.add_argument("--stagger", type=float, default=0.0,
                    help="seconds between two students opening the link (default: all at once)")
    ap.add_argument("--browser-nice", type=int, default=19,
                    help="niceness of the browsers (and of this script), not of the server")
    args = ap.parse_args()

    import mha_core

    bert = mha_core.load_bert()  # the expected tokens and entropies
    out = Path(tempfile.mkdtemp())
    log, run_times = out / "streamlit.log", out / "run_times.txt"
    proc, url = start_app(log, launcher=(str(Path(__file__).with_name("timed_server.py")),),
                          env_extra={"HEADSCOPE_RUN_TIMES": str(run_times)})
    os.nice(args.browser_nice)  # after the server started: chromium inherits it, the server not
    t0 = time.perf_counter()
    try:
        results, cpu = asyncio.run(run(args, bert, url, proc.pid))
        rss = peak_rss_mb(proc.pid)
        if os.environ.get("CLASS_LOAD_PAUSE"):
            input(f"server pid {proc.pid}; press Enter to stop")
    finally:
        stop_app(proc)
    wall = time.perf_counter() - t0

    failed = [r for r in results if r["error"]]
    opens = [r["open"] for r in results if "open" in r]
    enter = [s for r in results for k, s in r["steps"] if k == "enter"]
    layer = [s for r in results for k, s in r["steps"] if k == "layer"]
    steps = enter + layer
    server = [x for r in results for x in r["server"] if x is not None]
    runs = [float(x) for x in run_times.read_text().split()] if run_times.exists() else []
    for r in failed:
        print(f"FAILED ({r['error']}): {r['text']}")
    print(f"\n{args.sessions} sessions at once, {wall:.0f} s in all; server log {log}")
    if opens:
        print(f"open link -> grid:      p50 {statistics.median(opens):.2f} s   "
              f"max {max(opens):.2f} s")
    for name, xs in (("Enter -> heatmaps", enter), ("layer -> heatmaps", layer),
                     ("every step", steps), ("  server's part", server),
                     ("server: one script run", runs)):
        if xs:
            print(f"{name:22s} p50 {percentile(xs, 0.5):.2f} s   p95 {percentile(xs, 0.95):.2f} s"
                  f"   max {max(xs):.2f} s   (n={len(xs)})")
    print(f"failed sessions: {len(failed)} of {args.sessions}")
    print(f"server peak RSS: {rss:.0f} MB")
    print(f"CPU time while the class worked: server {cpu[0]:.0f} s, chromium {cpu[1]:.0f} s "
          f"(of {wall:.0f} s x {os.cpu_count()} cores); browsers at nice {args.browser_nice}")
    print("goals: 0 failed, p95 <= 3 s, peak RSS <= 1536 MB")


if __name__ == "__main__":
    main()
