"""How many students one machine holds: a class of simulated students speaking Streamlit's own
websocket protocol (testkit.protocol: no browser), through `make serve`'s nginx.

For each --workers N and each --students S, a fresh `make serve` (deploy/serve_many.py, the
workers being bench/timed_server.py: serve.py with a clock on every script run) takes S
students. Each student has its own websocket, its own nginx sticky cookie and its own
sentences (7-14 words, drawn from a seeded word list), and follows one script:

  open      the teacher's shared link (?text=<the teacher's sentence>): the Explorer
  enter     types its own sentence (a new one each round)               } --rounds times
  layer     moves the layer slider to another layer, 3 times             }
  head view opens the Head view page
  head lab  opens the Head lab page
  head off  switches one head off there
(--script explorer stops after the rounds: the Explorer alone.) --browsers 3 adds three real
chromium students (bench/class_load.py's script: they open the same link before the class
arrives, then type a sentence and move the layer from mid-ramp on, --browser-gap seconds
apart), as a cross-check: their Enter -> maps drawn should be the protocol's Enter plus the
browser's own part. On one machine chromium's own CPU takes the servers' (~0.5 s per Enter);
--pin gives the servers core 0 and the students, simulated and chromium, core 1, as students'
own laptops would.

The teacher's own session opens the link and the Head lab first (not counted). Students
arrive uniformly over --ramp seconds; between two actions each thinks for a time
drawn uniformly from [0.5, 1.5] x --think seconds (default 5: 2.5-7.5 s). Every action is
timed from sending its rerun to its script_finished (the server's time, queueing included, as
a browser would see it before drawing). Prints, per configuration, each action's p50/p95/p99,
the bytes and messages sent per action, failed sessions (an exception element, a timeout, a
closed socket), CPU per action (workers and nginx, from /proc), RSS per worker (after the
class, sessions still open) and its growth per session, and the load average; then the
capacity table and the knee: the fewest students at which Enter p95 passes 1 s. Each row also
prints an estimate of the machine's knee from its CPU per action (KNEE_BUSY below), so a small
class (--students 30) tells a teacher what their machine holds.

The probe runs on the same cores as the servers (its own CPU is printed): on a 2-core machine
without --pin every figure is an upper bound of what a dedicated server would show. CPU per
action counts from the class's start: the teacher's warm-up (its Head lab ranking) and the
chromium students' first pages are not in it.

    .venv/bin/python bench/class_protocol.py [--students 30,100,300] [--workers 1,2]
                                             [--think 5] [--rounds 3] [--ramp 10]
                                             [--browsers 3 [--browser-gap 8] [--pin]]
"""

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.measure import cpu_seconds, percentile, pin  # noqa: E402
from testkit.protocol import Session, multiselect_value, slider_value, text_value  # noqa: E402
from testkit.proxy import NGINX, children, start_proxy, stop_proxy  # noqa: E402

TEACHER = "The teacher wrote a sentence on the board for everyone."
ACTIONS = ("open", "enter", "layer", "head view", "head lab", "head off")
KNEE_P95 = 1.0  # seconds: Enter -> script finished, p95
# The cores' busy share at which Enter p95 passed 1 s in the quiet tables of docs/capacity.md
# (2 workers: 200-250 students at 40 ms of CPU per action, stop 28's machine; 100-150 at
# 62-71 ms, stop 29's): the estimate a small class's row prints for the machine it ran on
KNEE_BUSY = 0.6
BROKEN_P95 = 20.0  # a configuration this slow (or with failures) ends the list for its workers
LAYERS, HEADS = 6, 12  # the bundled model's

WORDS = dict(
    adj="old young quiet bright small heavy clever tired busy careful hungry famous".split(),
    noun=("teacher student river dog farmer doctor city train garden letter painter robot "
          "child window museum storm").split(),
    verb="saw found painted carried followed opened watched visited cleaned described".split(),
    prep="near behind under beside across inside".split(),
    tail=("before the rain started", "after the long lesson", "because it was late",
          "while the bell rang", "on a cold morning", "with great care"),
)


def sentence(rng: random.Random) -> str:
    """A 7-14-word sentence of its own: 'The <adj> <noun> <verb> the <noun> ...'."""
    w = WORDS
    words = ["The", rng.choice(w["adj"]), rng.choice(w["noun"]), rng.choice(w["verb"]), "the",
             rng.choice(w["noun"])]
    if rng.random() < 0.6:
        words += [rng.choice(w["prep"]), "the", rng.choice(w["adj"]), rng.choice(w["noun"])]
    if rng.random() < 0.6:
        words += rng.choice(w["tail"]).split()
    if len(words) < 7:
        words.insert(4, "slowly")
    return " ".join(words) + "."


async def student(url: str, i: int, args, start_at: float) -> dict:
    """One student's script; returns {"actions": [(kind, Run)], "error": str}."""
    rng = random.Random(1000 + i)
    out = dict(actions=[], error="", upstream="")
    await asyncio.sleep(max(0.0, start_at - time.perf_counter()))
    s = Session(url, cookie=f"student-{i:04d}-{rng.getrandbits(32):08x}", fragments=True)

    async def act(kind, **kw):
        run = await s.rerun(**kw)
        out["actions"].append((kind, run))
        if run.error or run.exceptions or run.status not in (0, 3):
            raise RuntimeError(f"{kind}: {run.error or run.exceptions or run.status}")
        await asyncio.sleep(rng.uniform(0.5, 1.5) * args.think)
        return run

    try:
        await s.connect()
        out["upstream"] = s.upstream
        await act("open", query=urlencode({"text": TEACHER}))
        layer = None
        for _ in range(args.rounds):
            run = await act("enter", widgets={"text": text_value(sentence(rng))})
            layer = int(run.components["ex_grid"]["tag"].split()[-1])
            for _ in range(3):
                layer = rng.choice([x for x in range(1, LAYERS + 1) if x != layer])
                await act("layer", widgets={"ex_layer": slider_value(layer)})
        if args.script == "explorer":
            return out
        await act("head view", page="head_view")
        await act("head lab", page="head_lab")
        head = f"L{rng.randint(1, LAYERS)} H{rng.randint(1, HEADS)}"
        await act("head off", widgets={"hl_heads": multiselect_value([head])})
    except Exception as e:  # noqa: BLE001 - any failure is a failed session, reported
        out["error"] = f"{type(e).__name__}: {e}"[:200]
    finally:
        try:
            await s.close()
        except Exception:  # noqa: BLE001
            pass
    return out


def rss_mb(pid: int, field: str = "VmRSS:") -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


async def warm_up(url: str):
    """The teacher opens the link before the class (not counted): the model is loaded and the
    first run's one-off work (the default layer over the presets) is done."""
    s = Session(url, cookie="teacher")
    await s.connect()
    await s.rerun(query=urlencode({"text": TEACHER}), timeout=300)
    await s.rerun(page="head_lab", timeout=300)
    await s.close()


async def browsers(url: str, opened: list, act: list) -> list:
    """Real chromium students (bench/class_load.py's: type a sentence, move the layer 3
    times) beside the simulated ones, one per event in `opened`. Like them they open the
    teacher's shared link; they do it before the class arrives (chromium's start and first page
    are not the class's load), set opened[i] once drawn, then wait for act[i] to act."""
    from playwright.async_api import async_playwright

    import mha_core
    from bench.browser_latency import SENTENCES
    from bench.class_load import student as browser_student
    from testkit.browser import CHROMIUM, CHROMIUM_ARGS

    bert = mha_core.load_bert()  # the expected tokens only
    heads = bert.config.num_attention_heads
    link = f"{url}/?{urlencode({'text': TEACHER})}"
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        out = await asyncio.gather(*(
            browser_student(browser, link, bert, SENTENCES[i], 3, heads, shows=TEACHER,
                            opened=opened[i], act=act[i]) for i in range(len(opened))))
        await browser.close()
    return out


async def run_class(url: str, args, n: int, starts) -> tuple:
    """The teacher's warm-up, the chromium students' pages, then `starts()` (the class's
    clocks begin) and the class."""
    await warm_up(url)
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
    return simulated, (await real if real is not None else [])


def measure(args, workers: int, n: int, out: Path) -> dict:
    run_dir = out / f"w{workers}-s{n}"
    proc, state = start_proxy(run_dir, workers,
                              env_extra={"HEADSCOPE_RUN_TIMES": str(run_dir / "runs-{pid}.txt")},
                              worker_script=Path(__file__).with_name("timed_server.py"))
    mine = os.sched_getaffinity(0)
    try:
        pids = [w["pid"] for w in state["workers"]]
        nginx = [state["nginx_pid"], *children(state["nginx_pid"])]
        if args.pin:  # the servers on one core; this probe and what it starts (chromium) on another
            servers, students = sorted(mine)[:2]
            pin([*pids, *nginx], {servers})
            pin([os.getpid()], {students})
        at = {}

        def starts():  # the class's clocks, after the warm-up and the browsers' first pages
            at.update(cpu=cpu_seconds(pids), nginx=cpu_seconds(nginx), me=time.process_time(),
                      load=os.getloadavg(), rss=[rss_mb(p) for p in pids], t=time.perf_counter())

        results, real = asyncio.run(run_class(state["url"], args, n, starts))
        rss0 = at["rss"]
        wall = time.perf_counter() - at["t"]
        cpu, ngx = cpu_seconds(pids) - at["cpu"], cpu_seconds(nginx) - at["nginx"]
        rss1 = [rss_mb(p) for p in pids]
        hwm = [rss_mb(p, "VmHWM:") for p in pids]
        me = time.process_time() - at["me"]
        load0, load1 = at["load"], os.getloadavg()
    finally:
        if args.pin:
            pin([os.getpid()], mine)
        stop_proxy(proc)
    cores = 1 if args.pin else min(workers, len(mine))  # a worker is one process: one core
    return dict(workers=workers, n=n, results=results, real=real, wall=wall, cpu=cpu, nginx_cpu=ngx,
                cores=cores, probe_cpu=me, rss0=rss0, rss1=rss1, hwm=hwm, load=(load0, load1),
                run_dir=run_dir)


def ms(xs, q) -> str:
    return f"{percentile(xs, q) * 1000:.0f}" if xs else "-"


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
                p95=percentile(enter, .95) if enter else float("inf"),
                cpu=m["cpu"] / max(actions, 1) * 1000,
                kb=sum(r.bytes for r in by["enter"]) / max(len(by["enter"]), 1) / 1000,
                rss=", ".join(f"{a:.0f}" for a in m["rss1"]),
                per=sum(grown) / max(m["n"], 1), load=m["load"][1][0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", default="30,100,300", help="comma-separated class sizes")
    ap.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    ap.add_argument("--think", type=float, default=5.0, help="mean think time, seconds")
    ap.add_argument("--rounds", type=int, default=3, help="sentences each student types")
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
    if NGINX is None:
        sys.exit("class_protocol: nginx not found (apt-get install nginx)")
    out = Path(tempfile.mkdtemp(prefix="class-protocol-"))
    rows = []
    for w in (int(x) for x in args.workers.split(",")):
        for n in (int(x) for x in args.students.split(",")):
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
