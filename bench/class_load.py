"""A whole class at once: 30 browser sessions, each typing its own sentence, against one app
process and against two behind nginx (`make serve`), side by side in one run.

What its figures are: the browsers' figures on the server's own machine. The 30 chromium
renderers run on the same cores as the servers and use ~20x their CPU (268-297 s against
13-14 s), so "open the link -> maps drawn" and "Enter -> maps drawn" measure chromium queueing
for those cores, not what a student's own laptop would see, and not the server's capacity. For
how many students a server holds, use bench/class_protocol.py (no browsers, docs/capacity.md);
this bench stays as an end-to-end check that 30 real browsers get their maps with 0 failures.

For each --workers N (default: 1 and 2) the bench starts make serve's launcher
(deploy/serve_many.py) with N workers and opens --sessions sessions at the same moment through
its proxy (one Debian chromium, one context per student). Each session waits for the Explorer,
types a different sentence and presses Ctrl+Enter, then moves the layer slider 3 times. Every
step is timed from the key press:
  Enter -> maps drawn   until testkit.browser.MAPS_DRAWN holds for the new tokens (the one
                        condition the tests use; it follows the grid when the grid changes);
  layer -> maps drawn   until the component's grid is tagged with the new layer (data-tag
                        "layer N") and shows the new tokens.
Prints p50/p95 of those, of every script run timed on the server (the workers run
bench/timed_server.py, which is serve.py with a clock), the failed sessions (a Streamlit
exception element or a 60 s timeout), the sessions each worker held (nginx's
X-Headscope-Upstream on each websocket's handshake), each process's peak RSS (VmHWM: every
worker, nginx's master and workers), CPU, and the load average before and after: other
programs on the machine skew every figure.

In a classroom every student's browser draws on its own machine; here all the chromium
renderers share the server's cores and draw without a GPU. So the browsers run at nice 19
(--browser-nice; 0 turns it off): the workers keep the CPU they would have on their own
machine, and the students' screens get what is left. Every configuration's servers start
before the bench lowers its own priority (chromium inherits it, the servers must not).

    .venv/bin/python bench/class_load.py [--workers 1 2] [--sessions 30] [--layer-moves 3]
                                         [--browser-nice 19] [--stagger 0]
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
from headscope.ui.presets import DEFAULT_TEXT  # noqa: E402
from testkit.browser import CHROMIUM, CHROMIUM_ARGS, HOST, MAPS_DRAWN  # noqa: E402
from testkit.proxy import (  # noqa: E402
    NGINX,
    children,
    start_proxy,
    stop_proxy,
    upstream_of_handshake,
    worker_of,
)

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

# True once the maps are drawn for `tokens` (MAPS_DRAWN) and the component's grid is tagged with
# this layer ("layer N", numbered from 1; see testkit.browser).
GRID_LAYER_SHOWS = """([tokens, heads, layer]) => {
  if (!(MAPS_DRAWN)([tokens, heads])) return false;
  return document.querySelector(GRID).dataset.tag === `layer ${layer + 1}`;
}""".replace("MAPS_DRAWN", MAPS_DRAWN.strip()).replace("GRID", repr(HOST.format(key="ex_grid")))


async def wait_drawn(page, bert, text, heads, timeout_ms):
    await page.wait_for_function(MAPS_DRAWN, arg=[bert.encode(text).tokens, heads],
                                 polling=100, timeout=timeout_ms)


async def wait_layer(page, bert, text, layer, heads, timeout_ms):
    tokens = bert.encode(text).tokens
    await page.wait_for_function(GRID_LAYER_SHOWS, arg=[tokens, heads, layer], polling=100,
                                 timeout=timeout_ms)


async def failed_element(page) -> bool:
    return await page.locator('[data-testid="stException"]').count() > 0


def layer_input(page):
    """The layer slider's range input (react-aria keeps it visually hidden, keyboard-driven)."""
    return page.locator('.st-key-ex_layer input[type="range"]').first


async def student(browser, url, bert, text, moves, heads, start: asyncio.Event | None = None,
                  delay: float = 0, shows: str = DEFAULT_TEXT, opened=None, act=None) -> dict:
    """One chromium student: waits for `start` and `delay` s, opens url (a page that draws the
    sentence `shows`), types `text`, moves the layer `moves` times. Optional asyncio.Events:
    `opened` is set once the page is drawn (or the student failed), `act` is waited for before
    typing (bench/class_protocol.py opens its pages before the class and acts mid-ramp)."""
    out = dict(text=text, steps=[], server=[], error=None, upstreams=[])
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(TIMEOUT_MS)
    page = await context.new_page()
    clock = ServerClock(page)
    cdp = await context.new_cdp_session(page)  # which worker holds this session's websocket
    cdp.on("Network.webSocketHandshakeResponseReceived",
           lambda event: out["upstreams"].append(upstream_of_handshake(event)))
    await cdp.send("Network.enable")

    async def step(kind, press, wait):
        t = time.perf_counter()
        await press()
        await wait
        out["steps"].append((kind, time.perf_counter() - t))
        out["server"].append(clock.since(t))

    try:
        if start is not None:
            await start.wait()  # everybody opens the link at the same moment (or `delay` later)
        await asyncio.sleep(delay)
        t = time.perf_counter()
        await page.goto(url, wait_until="commit", timeout=OPEN_TIMEOUT_MS)
        await wait_drawn(page, bert, shows, heads, OPEN_TIMEOUT_MS)
        out["open"] = time.perf_counter() - t
        if opened is not None:
            opened.set()
        if act is not None:
            await act.wait()
        layer = int(await layer_input(page).input_value()) - 1  # the slider shows 1..L

        box = page.locator('[data-testid="stSidebar"] textarea').first
        await box.click()
        await box.press("Control+a")
        await box.press_sequentially(text)
        await step("enter", lambda: box.press("Control+Enter"),
                   wait_drawn(page, bert, text, heads, TIMEOUT_MS))

        thumb = layer_input(page)
        top = int(await thumb.get_attribute("max")) - 1  # the last layer's index
        for _ in range(moves):
            key, layer = ("ArrowRight", layer + 1) if layer < top else ("ArrowLeft", layer - 1)
            await thumb.focus()
            await step("layer", lambda key=key: thumb.press(key),
                       wait_layer(page, bert, text, layer, heads, TIMEOUT_MS))
        if await failed_element(page):
            out["error"] = "exception element"
    except Exception as e:  # a timeout: the session failed
        if opened is not None:
            opened.set()  # whoever waits for the page goes on without it
        out["error"] = ("exception element" if await failed_element(page)
                        else f"{type(e).__name__}: {str(e).splitlines()[0][:120]}")
    finally:
        await context.close()
    return out


async def run_class(args, bert, url, server_pids):
    from playwright.async_api import async_playwright

    heads = bert.config.num_attention_heads
    texts = (SENTENCES + MORE) * (args.sessions // 30 + 1)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # The teacher's screen: the app is open before the class arrives (model loaded)
        teacher = await browser.new_page(viewport={"width": 1280, "height": 800})
        await teacher.goto(url)
        await wait_drawn(teacher, bert, DEFAULT_TEXT, heads, OPEN_TIMEOUT_MS)
        await teacher.close()
        start = asyncio.Event()
        tasks = [asyncio.create_task(student(browser, url, bert, texts[i], args.layer_moves,
                                             heads, start, i * args.stagger))
                 for i in range(args.sessions)]
        await asyncio.sleep(2)  # contexts created; now all at once
        watch, server_cpu = CpuWatch(), cpu_seconds(server_pids)
        watch.start()
        start.set()
        everyone = asyncio.gather(*tasks)
        while not everyone.done():
            watch.poll()
            await asyncio.wait([everyone], timeout=0.5)
        results = everyone.result()
        cpu = cpu_seconds(server_pids) - server_cpu, watch.total()
        await browser.close()
    return results, cpu


def start_config(workers: int, out: Path):
    """make serve's launcher with `workers` timed workers; (launcher, state, run_dir)."""
    run_dir = out / f"workers-{workers}"
    proc, state = start_proxy(run_dir, workers,
                              env_extra={"HEADSCOPE_RUN_TIMES": str(run_dir / "runs-{pid}.txt")},
                              worker_script=Path(__file__).with_name("timed_server.py"))
    return proc, state, run_dir


def measure(args, bert, workers: int, proc, state, run_dir: Path) -> dict:
    nginx = [state["nginx_pid"], *children(state["nginx_pid"])]
    pids = [w["pid"] for w in state["workers"]]
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    try:
        results, cpu = asyncio.run(run_class(args, bert, state["url"], pids + nginx))
        rss = {w["index"]: peak_rss_mb(w["pid"]) for w in state["workers"]}
        rss_nginx = [peak_rss_mb(p) for p in nginx]
        nginx_cpu = cpu_seconds(nginx)
    finally:
        stop_proxy(proc)
    wall = time.perf_counter() - t0
    held = {w["index"]: 0 for w in state["workers"]}
    for r in results:
        if r["upstreams"]:
            held[worker_of(r["upstreams"][-1], state)["index"]] += 1
    runs = {w["index"]: [float(x) for x in (run_dir / f"runs-{w['pid']}.txt").read_text().split()]
            if (run_dir / f"runs-{w['pid']}.txt").exists() else [] for w in state["workers"]}
    return dict(workers=workers, results=results, cpu=cpu, nginx_cpu=nginx_cpu, rss=rss,
                rss_nginx=rss_nginx, wall=wall, held=held, runs=runs, run_dir=run_dir,
                load=(load_before, os.getloadavg()))


def pct(xs) -> str:
    if not xs:
        return "-"
    return f"{percentile(xs, 0.5):.2f} / {percentile(xs, 0.95):.2f} s"


def report(args, m: dict) -> dict:
    """Print one configuration's details; return its column of the side-by-side table."""
    results = m["results"]
    failed = [r for r in results if r["error"]]
    opens = [r["open"] for r in results if "open" in r]
    enter = [s for r in results for k, s in r["steps"] if k == "enter"]
    layer = [s for r in results for k, s in r["steps"] if k == "layer"]
    server = [x for r in results for x in r["server"] if x is not None]
    runs = [x for xs in m["runs"].values() for x in xs]
    n = m["workers"]
    print(f"\n== {n} worker{'s' * (n != 1)} behind nginx: {args.sessions} sessions at once, "
          f"{m['wall']:.0f} s in all; logs in {m['run_dir']}")
    for r in failed:
        print(f"FAILED ({r['error']}): {r['text']}")
    for name, xs in (("Enter -> maps drawn", enter), ("layer -> maps drawn", layer),
                     ("  server's part", server), ("server: one script run", runs)):
        if xs:
            print(f"{name:24s} p50 {percentile(xs, 0.5):.2f} s   "
                  f"p95 {percentile(xs, 0.95):.2f} s   max {max(xs):.2f} s   (n={len(xs)})")
    if opens:
        print(f"{'open link -> maps':24s} p50 {statistics.median(opens):.2f} s   "
              f"max {max(opens):.2f} s")
    print(f"failed sessions: {len(failed)} of {args.sessions}")
    print("sessions held per worker: " + ", ".join(f"#{i} {k}" for i, k in m["held"].items()))
    print("script runs per worker:   " + ", ".join(f"#{i} {len(xs)}"
                                                  for i, xs in m["runs"].items()))
    print("peak RSS per worker:      " + ", ".join(f"#{i} {v:.0f} MB"
                                                  for i, v in m["rss"].items()))
    print("peak RSS nginx:           " + ", ".join(f"{v:.0f} MB" for v in m["rss_nginx"]))
    print(f"CPU while the class worked: workers+nginx {m['cpu'][0]:.0f} s (nginx "
          f"{m['nginx_cpu']:.1f} s), chromium {m['cpu'][1]:.0f} s (of {m['wall']:.0f} s x "
          f"{os.cpu_count()} cores); browsers at nice {args.browser_nice}")
    before, after = m["load"]
    print(f"load average (1/5/15 min) before {before[0]:.1f}/{before[1]:.1f}/{before[2]:.1f}, "
          f"after {after[0]:.1f}/{after[1]:.1f}/{after[2]:.1f}")
    return {
        "failed sessions": f"{len(failed)} of {args.sessions}",
        "Enter -> maps drawn (browsers' CPU) p50 / p95": pct(enter),
        "layer -> maps drawn (browsers' CPU) p50 / p95": pct(layer),
        "server: one script run p50 / p95": pct(runs),
        "open link -> maps p50": f"{statistics.median(opens):.1f} s" if opens else "-",
        "sessions per worker": ", ".join(str(k) for k in m["held"].values()),
        "peak RSS per worker": ", ".join(f"{v:.0f} MB" for v in m["rss"].values()),
        "peak RSS nginx (master, workers)": ", ".join(f"{v:.0f}" for v in m["rss_nginx"])
                                            + " MB",
        "CPU workers / chromium": f"{m['cpu'][0]:.0f} s / {m['cpu'][1]:.0f} s",
        "load avg before -> after": f"{before[0]:.1f} -> {after[0]:.1f}",
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2],
                    help="app processes behind the proxy, one configuration each (default 1 2)")
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--layer-moves", type=int, default=3)
    ap.add_argument("--stagger", type=float, default=0.0,
                    help="seconds between two students opening the link (default: all at once)")
    ap.add_argument("--browser-nice", type=int, default=19,
                    help="niceness of the browsers (and of this script), not of the servers")
    args = ap.parse_args()
    if NGINX is None:
        sys.exit("class_load: nginx not found (apt-get install nginx)")

    import mha_core

    bert = mha_core.load_bert()  # the expected tokens and entropies
    out = Path(tempfile.mkdtemp(prefix="class-load-"))
    started = [(n, *start_config(n, out)) for n in args.workers]
    os.nice(args.browser_nice)  # after the servers started: chromium inherits it, they do not
    columns = {}
    try:
        for n, proc, state, run_dir in started:
            columns[n] = report(args, measure(args, bert, n, proc, state, run_dir))
    finally:
        for _, proc, _, _ in started:
            stop_proxy(proc)

    names = [f"{n} worker{'s' * (n != 1)}" for n in columns]
    print(f"\n{'':48s}" + "".join(f"{name:>22s}" for name in names))
    for row in next(iter(columns.values())):
        print(f"{row:48s}" + "".join(f"{col[row]:>22s}" for col in columns.values()))
    print("\nThe 'maps drawn' rows are the browsers' figures, with every chromium on this "
          "machine's own cores (see 'CPU workers / chromium'): not a server's capacity; for that, "
          "bench/class_protocol.py.")
    print(f"goals ({args.sessions} sessions, {os.cpu_count()} cores): 0 failed; server's "
          "script run p95 <= 2 s with 2 workers; Enter -> maps drawn p95 <= 5 s")


if __name__ == "__main__":
    main()
