"""How many students does one machine hold? A class of simulated students speaking Streamlit's own
websocket protocol (testkit.protocol: no browser), through `make serve`'s nginx.

    .venv/bin/python bench/class_protocol.py [--students 30,100,300] [--workers 1,2]
                                             [--script full|explorer] [--think 5] [--rounds 3]
                                             [--ramp 10] [--browsers 3 [--browser-gap 8] [--pin]]
    .venv/bin/python bench/class_protocol.py --script explorer --students 30 --workers 2
                                             # two minutes: this machine's estimated knee

For each --workers N and each --students S, a fresh `make serve` (deploy/serve_many.py, the
workers being bench/timed_server.py: `headscope run` with a clock on every script run) takes S
students. Each student has its own websocket, its own nginx sticky cookie and its own
sentences (7-14 words, drawn from a seeded word list), and follows one script:

  open      the teacher's shared link (?text=<the teacher's sentence>): the Explorer
  enter     types its own sentence (a new one each round): first asks the  } --rounds times
            app's route for the maps, then reruns, as a browser's Enter does }
            (headscope/ui/explorer_route.py; --no-route: the rerun alone)    }
  layer     moves the layer slider to another layer, 3 times             }
            (drawn in the browser from the maps Enter sent: no message, only the
            student's thinking time; counted as local actions)
  head view opens the Head view page
  head lab  opens the Head lab page
  head off  switches one head off there
(--script explorer stops after the rounds: the Explorer alone.)

The teacher's own session opens the link and the Head lab first (not counted). Students
arrive uniformly over --ramp seconds; between two actions each thinks for a time drawn
uniformly from [0.5, 1.5] x --think seconds (default 5: 2.5-7.5 s). Every action is timed from
sending its rerun to its script_finished (the server's time, queueing included, as a browser
would see it before drawing); "maps" is the route's answer to Enter, and "enter" the route's
answer and the rerun after it. Prints, per configuration, each action's p50/p95/p99, the bytes
and messages sent per action, failed sessions (an exception element, a timeout, a closed
socket), CPU per action (workers and nginx, from /proc), RSS per worker (after the class,
sessions still open) and its growth per session, and the load average; then the capacity table
and the knee: the fewest students at which Enter p95 passes 1 s. Each row also prints an
estimate of the machine's knee from its CPU per action (KNEE_BUSY below), so a small class
(--students 30) tells a teacher what their machine holds.

--browsers N adds N real chromium students as a cross-check: they open the same link before
the class arrives, then type a sentence and move the layer 3 times from mid-ramp on,
--browser-gap seconds apart; their Enter -> maps drawn should be the protocol's Enter plus the
browser's own part. On one machine chromium's own CPU takes the servers' (~0.5 s per Enter on
a 2-core machine): --pin gives the servers core 0 and the students, simulated and chromium,
core 1, as students' own laptops would.

The probe runs on the same cores as the servers (its own CPU is printed): on a 2-core machine
without --pin every figure is an upper bound of what a dedicated server would show. CPU per
action counts from the class's start: the teacher's warm-up (its Head lab ranking) and the
chromium students' first pages are not in it. Needs nginx.
"""

import asyncio
import os
import random
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness as h  # noqa: E402

TEACHER = "The teacher wrote a sentence on the board for everyone."
ACTIONS = ("open", "maps", "enter", "layer", "head view", "head lab", "head off")
KNEE_P95 = 1.0  # seconds: Enter -> script finished, p95
# The cores' busy share at which Enter p95 passed 1 s in the quiet tables of docs/capacity.md
# (2 workers: 200-250 students at 40 ms of CPU per action on one 2-core machine; 100-150 at
# 62-71 ms on a slower one): the estimate a small class's row prints for the machine it ran on
KNEE_BUSY = 0.6
BROKEN_P95 = 20.0  # a configuration this slow (or with failures) ends the list for its workers
LAYERS, HEADS = 6, 12  # the bundled model's
CLIENT = []  # the students' one HTTP client for the route (run_class; one: each new client
             # builds an SSL context, ~20 ms of the probe's loop, which delayed every student)


async def student(url: str, i: int, args, start_at: float) -> dict:
    """One student's script; returns {"actions": [(kind, Run)], "error": str}."""
    from testkit.protocol import Session, multiselect_value, text_value

    rng = random.Random(1000 + i)
    out = dict(actions=[], error="", upstream="", local=0, seconds=0.0)
    await asyncio.sleep(max(0.0, start_at - time.perf_counter()))
    began = time.perf_counter()
    s = Session(url, cookie=f"student-{i:04d}-{rng.getrandbits(32):08x}", fragments=True)

    async def ask_route(text):
        """The browser's first request on Enter: the maps (sentence.js), timed as an action."""
        from headscope.ui import explorer_route
        from headscope.ui.models import BUNDLED
        from testkit.protocol import Run

        t0 = time.perf_counter()
        r = await CLIENT[0].post(f"{url}/{explorer_route.PATH}", json=dict(
            model=BUNDLED, text=text, pair=None),
            headers={"Cookie": f"headscope_affinity={s.cookie}"})  # the student's worker
        run = Run(seconds=time.perf_counter() - t0, status=0 if r.status_code == 200 else None,
                  bytes=len(r.content), messages=1)
        out["actions"].append(("maps", run))
        if r.status_code != 200:
            raise RuntimeError(f"maps: HTTP {r.status_code}")
        return run.seconds

    async def act(kind, before=0.0, **kw):
        run = await s.rerun(**kw)
        run.seconds += before  # Enter: the route's answer came first
        out["actions"].append((kind, run))
        if run.error or run.exceptions or run.status not in (0, 3):
            raise RuntimeError(f"{kind}: {run.error or run.exceptions or run.status}")
        await asyncio.sleep(rng.uniform(0.5, 1.5) * args.think)
        return run

    try:
        await s.connect()
        out["upstream"] = s.upstream
        await act("open", query=urlencode({"text": TEACHER}))
        for _ in range(args.rounds):
            text = h.random_sentence(rng)
            before = 0.0 if args.no_route else await ask_route(text)
            await act("enter", before=before, widgets={"text": text_value(text)})
            for _ in range(3):  # a layer move: the browser draws it, the server hears nothing
                out["local"] += 1
                await asyncio.sleep(rng.uniform(0.5, 1.5) * args.think)
        if args.script == "explorer":
            return out
        await act("head view", page="head_view")
        await act("head lab", page="head_lab")
        head = f"L{rng.randint(1, LAYERS)} H{rng.randint(1, HEADS)}"
        await act("head off", widgets={"hl_heads": multiselect_value([head])})
    except Exception as e:  # noqa: BLE001 - any failure is a failed session, reported
        out["error"] = f"{type(e).__name__}: {e}"[:200]
    finally:
        out["seconds"] = time.perf_counter() - began  # this student's time in class
        try:
            await s.close()
        except Exception:  # noqa: BLE001
            pass
    return out


async def warm_up(url: str):
    """The teacher opens the link before the class (not counted): the model is loaded and the
    first run's one-off work (the default layer over the presets) is done."""
    from testkit.protocol import Session

    s = Session(url, cookie="teacher")
    await s.connect()
    await s.rerun(query=urlencode({"text": TEACHER}), timeout=300)
    await s.rerun(page="head_lab", timeout=300)
    await s.close()


# True once the Explorer's maps are drawn for `tokens` (testkit.browser.MAPS_DRAWN) and its grid
# is tagged with this layer ("layer N", numbered from 1)
GRID_LAYER_SHOWS = """([tokens, heads, layer]) => {
  if (!(MAPS_DRAWN)([tokens, heads])) return false;
  return FIND(GRID).dataset.tag === `layer ${layer + 1}`;
}"""
STEP_MS, OPEN_MS = 60_000, 300_000  # a step that takes longer fails the student; opening


async def browser_student(browser, link: str, bert, text: str, heads: int, opened, act) -> dict:
    """One chromium student: opens the shared link (a page that draws TEACHER), sets `opened`
    once drawn (or failed), waits for `act`, types `text`, then moves the layer 3 times, each
    step timed from its key press until the maps show it."""
    from testkit.browser import FIND, HOST, MAPS_DRAWN

    layer_shows = GRID_LAYER_SHOWS.replace("MAPS_DRAWN", MAPS_DRAWN.strip()).replace(
        "GRID", repr(HOST.format(key="ex_grid"))).replace("FIND(", FIND + "(")
    out = dict(text=text, steps=[], server=[], error=None)
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(STEP_MS)
    page = await context.new_page()
    clock = h.ServerClock(page)

    async def drawn(text, timeout_ms=STEP_MS):
        await page.wait_for_function(MAPS_DRAWN, arg=[bert.encode(text).tokens, heads],
                                     polling=100, timeout=timeout_ms)

    async def step(kind, press, wait):
        t = time.perf_counter()
        await press()
        await wait
        out["steps"].append((kind, time.perf_counter() - t))
        out["server"].append(clock.since(t))

    def failed():
        return page.locator('[data-testid="stException"]').count()

    try:
        await page.goto(link, wait_until="commit", timeout=OPEN_MS)
        await drawn(TEACHER, OPEN_MS)
        opened.set()
        await act.wait()
        slider = page.locator(".st-key-ex_view").get_by_role("slider", name="Layer")
        layer = int(await slider.input_value()) - 1  # the slider shows 1..L
        box = page.locator('[data-testid="stSidebar"] textarea').first
        await box.click()
        await box.press("Control+a")
        await box.press_sequentially(text)
        await step("enter", lambda: box.press("Control+Enter"), drawn(text))
        top = int(await slider.get_attribute("max")) - 1  # the last layer's index
        for _ in range(3):
            key, layer = ("ArrowRight", layer + 1) if layer < top else ("ArrowLeft", layer - 1)
            await slider.focus()
            await step("layer", lambda key=key: slider.press(key), page.wait_for_function(
                layer_shows, arg=[bert.encode(text).tokens, heads, layer], polling=100,
                timeout=STEP_MS))
        if await failed():
            out["error"] = "exception element"
    except Exception as e:  # a timeout: the student failed
        opened.set()  # whoever waits for the page goes on without it
        out["error"] = ("exception element" if await failed()
                        else f"{type(e).__name__}: {str(e).splitlines()[0][:120]}")
    finally:
        await context.close()
    return out


async def browsers(url: str, opened: list, act: list) -> list:
    """Real chromium students beside the simulated ones, one per event in `opened`. Like them
    they open the teacher's shared link; they do it before the class arrives (chromium's start
    and first page are not the class's load), set opened[i] once drawn, then wait for act[i]."""
    from playwright.async_api import async_playwright

    from testkit.browser import launch

    bert, heads = h.bundled()  # the expected tokens only
    link = f"{url}/?{urlencode({'text': TEACHER})}"
    async with async_playwright() as p:
        browser = await launch(p)
        out = await asyncio.gather(*(
            browser_student(browser, link, bert, h.SENTENCES[i % len(h.SENTENCES)], heads,
                            opened[i], act[i]) for i in range(len(opened))))
        await browser.close()
    return out


async def run_class(url: str, args, n: int, starts) -> tuple:
    """The teacher's warm-up, the chromium students' pages, then `starts()` (the class's
    clocks begin) and the class."""
    import httpx

    await warm_up(url)
    CLIENT[:] = [httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=None))]
    opened = [asyncio.Event() for _ in range(args.browsers)]
    act = [asyncio.Event() for _ in range(args.browsers)]
    real = asyncio.ensure_future(browsers(url, opened, act)) if args.browsers else None
    if real is not None:  # the chromium students are on the page before the class arrives
        every = asyncio.ensure_future(asyncio.gather(*(e.wait() for e in opened)))
        await asyncio.wait({every, real}, return_when=asyncio.FIRST_COMPLETED)
        every.cancel()
        if real.done():
            real.result()  # chromium did not start: its error, before the class
    starts()
    t0 = time.perf_counter() + 0.5
    loop = asyncio.get_running_loop()
    for i, e in enumerate(act):  # they act from mid-ramp on, --browser-gap seconds apart
        loop.call_at(loop.time() + 0.5 + args.ramp / 2 + i * args.browser_gap, e.set)
    simulated = await asyncio.gather(*(student(url, i, args, t0 + args.ramp * i / max(n, 1))
                                       for i in range(n)))
    await CLIENT.pop().aclose()
    return simulated, (await real if real is not None else [])


def measure(args, workers: int, n: int, out: Path) -> dict:
    from testkit.proxy import children

    run_dir = out / f"w{workers}-s{n}"
    mine = os.sched_getaffinity(0)
    with h.serve(run_dir, workers) as state:
        try:
            pids = [w["pid"] for w in state["workers"]]
            nginx = [state["nginx_pid"], *children(state["nginx_pid"])]
            if args.pin:  # the servers on one core; this probe and its chromium on another
                servers, students = sorted(mine)[:2]
                h.pin([*pids, *nginx], {servers})
                h.pin([os.getpid()], {students})
            at = {}

            def starts():  # the class's clocks, after the warm-up and the browsers' first pages
                at.update(cpu=h.cpu_seconds(pids), nginx=h.cpu_seconds(nginx),
                          me=time.process_time(), load=os.getloadavg(),
                          rss=[h.rss_mb(p) for p in pids], t=time.perf_counter())

            results, real = asyncio.run(run_class(state["url"], args, n, starts))
            rss0 = at["rss"]
            wall = time.perf_counter() - at["t"]
            cpu = h.cpu_seconds(pids) - at["cpu"]
            ngx = h.cpu_seconds(nginx) - at["nginx"]
            rss1 = [h.rss_mb(p) for p in pids]
            hwm = [h.peak_rss_mb(p) for p in pids]
            me = time.process_time() - at["me"]
            load0, load1 = at["load"], os.getloadavg()
        finally:
            if args.pin:
                h.pin([os.getpid()], mine)
    cores = 1 if args.pin else min(workers, len(mine))  # a worker is one process: one core
    return dict(workers=workers, n=n, results=results, real=real, wall=wall, cpu=cpu,
                nginx_cpu=ngx, cores=cores, probe_cpu=me, rss0=rss0, rss1=rss1, hwm=hwm,
                load=(load0, load1), run_dir=run_dir)


def ms(xs, q) -> str:
    return f"{h.percentile(xs, q) * 1000:.0f}" if xs else "-"


def report(m: dict) -> dict:
    res = m["results"]
    failed = [r for r in res if r["error"]]
    by = {k: [run for r in res for kind, run in r["actions"] if kind == k]
          for k in ACTIONS}
    actions = sum(len(r["actions"]) for r in res)
    print(f"\n== {m['workers']} worker(s), {m['n']} students: {m['wall']:.0f} s; "
          f"load average {m['load'][0][0]:.1f} -> {m['load'][1][0]:.1f}; logs in {m['run_dir']}")
    print(f"{'action':10s} {'n':>5s} {'p50 ms':>8s} {'p95 ms':>8s} {'p99 ms':>8s} "
          f"{'kB/action':>10s} {'msgs':>5s}")
    for kind, runs in by.items():
        ok = [r.seconds for r in runs if r.status in (0, 3)]
        if runs:
            kb = sum(r.bytes for r in runs) / len(runs) / 1000
            msgs = sum(r.messages for r in runs) / len(runs)
            print(f"{kind:10s} {len(runs):5d} {ms(ok, .5):>8s} {ms(ok, .95):>8s} "
                  f"{ms(ok, .99):>8s} {kb:10.1f} {msgs:5.0f}")
    for r in failed[:5]:
        print(f"FAILED: {r['error']}")
    grown = [b - a for a, b in zip(m["rss0"], m["rss1"])]
    local = sum(r["local"] for r in res)
    minutes = sum(r["seconds"] for r in res) / 60  # the students' time in class
    print(f"{local} layer moves drawn in the browser (no message); server CPU per "
          f"student-minute {m['cpu'] / max(minutes, 1e-9):.3f} s (workers; {minutes:.1f} "
          "student-minutes)")
    print(f"failed sessions {len(failed)} of {m['n']}; CPU per action: workers "
          f"{m['cpu'] / max(actions, 1) * 1000:.0f} ms, nginx "
          f"{m['nginx_cpu'] / max(actions, 1) * 1000:.1f} ms ({actions} actions; the probe "
          f"itself {m['probe_cpu']:.0f} s of CPU)")
    if m["cpu"] > 0:  # the class whose actions would keep the workers' cores KNEE_BUSY busy
        busy = m["cpu"] / (m["cores"] * m["wall"])
        print(f"estimated knee of this machine: about {m['n'] * KNEE_BUSY / busy:.0f} students "
              f"(the workers kept {m['cores']} core(s) {busy:.0%} busy; a row below the knee "
              "gives the best estimate)")
    print("RSS per worker after the class (peak): " + ", ".join(
        f"{a:.0f} MB ({h:.0f})" for a, h in zip(m["rss1"], m["hwm"]))
          + f"; grown {sum(grown) / max(m['n'], 1):.2f} MB per student")
    enter = [r.seconds for r in by["enter"] if r.status in (0, 3)]
    layer = [r.seconds for r in by["layer"] if r.status in (0, 3)]
    if m["real"]:  # the cross-check: a browser's Enter = the server's part + its drawing
        drawn = [sec for r in m["real"] for kind, sec in r["steps"] if kind == "enter"]
        part = [x for r in m["real"] for x in r["server"][:1] if x is not None]
        bad = sum(bool(r["error"]) for r in m["real"])
        print(f"{len(m['real'])} chromium students beside them ({bad} failed): Enter -> "
              f"maps drawn p50 {ms(drawn, .5)} ms, p95 "
              f"{ms(drawn, .95)} ms; of it the server's part (script_finished seen by the "
              f"browser) p50 {ms(part, .5)} ms; the protocol's Enter p50 {ms(enter, .5)} ms")
    return dict(workers=m["workers"], n=m["n"], failed=len(failed),
                enter=(ms(enter, .5), ms(enter, .95), ms(enter, .99)),
                layer=(ms(layer, .5), ms(layer, .95)),
                p95=h.percentile(enter, .95) if enter else float("inf"),
                cpu=m["cpu"] / max(actions, 1) * 1000,
                per_minute=m["cpu"] / max(minutes, 1e-9),
                kb=sum(r.bytes for r in by["enter"]) / max(len(by["enter"]), 1) / 1000,
                rss=", ".join(f"{a:.0f}" for a in m["rss1"]),
                per=sum(grown) / max(m["n"], 1), load=m["load"][1][0])


def main():
    ap = h.parser(__doc__)
    ap.add_argument("--students", nargs="+", action=h.Ints, default=[30, 100, 300],
                    help="comma-separated class sizes")
    ap.add_argument("--workers", nargs="+", action=h.Ints, default=[1, 2],
                    help="comma-separated worker counts")
    ap.add_argument("--think", type=float, default=5.0, help="mean think time, seconds")
    ap.add_argument("--rounds", type=int, default=3, help="sentences each student types")
    ap.add_argument("--no-route", action="store_true",
                    help="Enter reruns alone, without asking the app's route first (a server "
                         "from before the route)")
    ap.add_argument("--ramp", type=float, default=10.0, help="seconds over which students arrive")
    ap.add_argument("--script", choices=("full", "explorer"), default="full",
                    help="explorer: the Explorer's actions only (open, enter, layer), without "
                         "the Head view and the Head lab")
    ap.add_argument("--browsers", type=int, default=0,
                    help="real chromium students beside the simulated ones (cross-check: "
                         "their Enter -> maps drawn = the protocol's Enter + drawing)")
    ap.add_argument("--browser-gap", type=float, default=1.0,
                    help="seconds between two chromium students' first actions (8: one after "
                         "the other, each with its core alone, as on its own laptop)")
    ap.add_argument("--pin", action="store_true",
                    help="the servers (workers, nginx) on core 0, the simulated students and "
                         "the chromium ones on core 1: a browser's own work then does not take "
                         "the servers' CPU, as on students' own laptops (2 cores or more)")
    args = ap.parse_args()
    if args.pin and len(os.sched_getaffinity(0)) < 2:  # measure() pins to the first two of them
        sys.exit("class_protocol: --pin needs 2 cores this process may run on")
    from testkit.proxy import NGINX

    if NGINX is None:
        sys.exit("class_protocol: nginx not found (apt-get install nginx)")
    print(h.machine())
    out = h.run_dir("class")
    rows = []
    for w in args.workers:
        for n in args.students:
            row = report(measure(args, w, n, out))
            rows.append(row)
            if row["failed"] or row["p95"] > BROKEN_P95:
                print(f"(broken at {n} students with {w} worker(s): larger classes skipped)")
                break
    print(f"\nCapacity ({os.cpu_count()} cores; script {args.script}; think {args.think:g} s; "
          f"{args.rounds} rounds; "
          "times: send -> script finished, ms)")
    print(f"{'workers':>7s} {'students':>8s} {'failed':>6s} {'Enter p50/p95/p99':>18s} "
          f"{'layer p50/p95':>14s} {'CPU/action':>10s} {'kB/Enter':>8s} {'RSS/worker MB':>14s} "
          f"{'MB/student':>10s} {'load':>5s}")
    for r in rows:
        print(f"{r['workers']:7d} {r['n']:8d} {r['failed']:6d} {'/'.join(r['enter']):>18s} "
              f"{'/'.join(r['layer']):>14s} {r['cpu']:8.0f} ms {r['kb']:8.0f} {r['rss']:>14s} "
              f"{r['per']:10.2f} {r['load']:5.1f}")
    for w in sorted({r["workers"] for r in rows}):
        mine = [r for r in rows if r["workers"] == w]
        over = next((r for r in mine if r["p95"] > KNEE_P95 or r["failed"]), None)
        under = [r["n"] for r in mine if r["p95"] <= KNEE_P95 and not r["failed"]]
        if over is None:
            print(f"knee, {w} worker(s): not reached (Enter p95 <= 1 s up to {max(under)} "
                  "students)")
        else:
            print(f"knee, {w} worker(s): between {max(under) if under else 0} and {over['n']} "
                  "students (Enter p95 passes 1 s, or a session failed)")


if __name__ == "__main__":
    main()
