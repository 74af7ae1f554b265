"""Two checkouts' Explorer reruns, interleaved: a fair comparison on a busy machine.

Starts bench/timed_server.py from checkout A and from checkout B (e.g. `git worktree add` of
main, or a `git archive` of it, against this tree), one protocol session each
(testkit.protocol), and alternates the same actions between them: A then B, B then A, ... so
that both see the same load. Per action kind ("new sentence": a sentence neither server has
seen; "view change": the layer slider; "focus change": the focus token) prints the script run
on the server (timed_server's clock) and send -> script_finished, p50/p95, the messages and
bytes sent, and the ratio A/B of the p50s, with the load average; and each server's CPU time
per action (less sensitive to the machine's load than wall-clock times).

    .venv/bin/python bench/rerun_ab.py --a /tmp/main-snapshot [--b .] [--n 20] [--query text=Hi.]
    (env for one side only: --a-env HEADSCOPE_TORCH_THREADS=2)

The sessions send fragment reruns as a browser does (testkit.protocol.Session(fragments=True)):
on a checkout whose Explorer runs as a fragment, a view change reruns the page alone.
"""

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.class_protocol import sentence  # noqa: E402
from bench.measure import cpu_seconds, percentile  # noqa: E402
from testkit.protocol import Session, select_value, slider_value, text_value  # noqa: E402
from testkit.server import free_port, wait_healthy  # noqa: E402


def start(root: Path, out: Path, name: str, env_extra: dict):
    port = free_port()
    times = out / f"runs-{name}.txt"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HEADSCOPE_RUN_TIMES": str(times), **env_extra}
    log = open(out / f"server-{name}.log", "w")
    proc = subprocess.Popen(
        [sys.executable, str(root / "bench" / "timed_server.py"), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true",
         "--browser.gatherUsageStats", "false"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, proc, 300, out / f"server-{name}.log")
    return proc, url, times


async def compare(urls: dict, n: int, pids: dict, cpu: dict, query: str = "") -> dict:
    """Alternate the actions between the servers; cpu[k]: server k's CPU seconds for them."""
    sessions = {k: Session(u, cookie=f"ab-{k}", fragments=True) for k, u in urls.items()}
    for s in sessions.values():
        await s.connect()
        await s.rerun(query=query, timeout=300)  # the first run: not counted
    cpu.update({k: -cpu_seconds([pid]) for k, pid in pids.items()})
    rng = random.Random(11)
    runs = {k: [] for k in urls}  # [(kind, Run)] in the server's order
    order = list(urls)
    layer = 1
    for i in range(n):
        text = sentence(rng)
        layer = layer % 6 + 1
        for k in (order if i % 2 == 0 else order[::-1]):
            s = sessions[k]
            runs[k].append(("new sentence", await s.rerun({"text": text_value(text)})))
            runs[k].append(("view change", await s.rerun({"ex_layer": slider_value(layer)})))
            focus = next(key for _, key in runs[k][-2][1].elements  # this sentence's own
                         if key.startswith("ex_focus_"))
            label = f"2: {runs[k][-2][1].components['ex_grid']['tokens'][2]}"
            runs[k].append(("focus change", await s.rerun({focus: select_value(label)})))
    cpu.update({k: cpu[k] + cpu_seconds([pid]) for k, pid in pids.items()})
    for s in sessions.values():
        await s.close()
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="checkout A (the before)")
    ap.add_argument("--b", default=str(Path(__file__).resolve().parent.parent))
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--query", default="", help="the first run's query string: '' opens the "
                    "bare root (the start card stays open), 'text=Hi.' a student's shared link")
    ap.add_argument("--a-env", action="append", default=[], help="NAME=VALUE for A only")
    ap.add_argument("--b-env", action="append", default=[], help="NAME=VALUE for B only")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="rerun-ab-"))
    procs, urls, times = {}, {}, {}
    load0 = os.getloadavg()
    try:
        for name, root, env in (("A", args.a, args.a_env), ("B", args.b, args.b_env)):
            procs[name], urls[name], times[name] = start(
                Path(root).resolve(), out, name, dict(e.split("=", 1) for e in env))
        cpu = {}
        runs = asyncio.run(compare(urls, args.n, {k: p.pid for k, p in procs.items()}, cpu,
                                   args.query))
    finally:
        for p in procs.values():
            p.terminate()
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
    load1 = os.getloadavg()
    print(f"A = {args.a} {args.a_env}; B = {args.b} {args.b_env}; {args.n} rounds; opened "
          f"with {args.query!r}; load "
          f"average {load0[0]:.1f} -> {load1[0]:.1f} (1 min); logs in {out}")
    print(f"{'':14s} {'':2s} {'run p50':>8s} {'run p95':>8s} {'seen p50':>9s} {'seen p95':>9s} "
          f"{'msgs':>5s} {'kB':>6s}")
    for kind in ("new sentence", "view change", "focus change"):
        p50 = {}
        for k in ("A", "B"):
            server = [float(x) for x in times[k].read_text().split()][1:]  # the first: open
            mine = [(i, r) for i, (kd, r) in enumerate(runs[k]) if kd == kind]
            srv = [server[i] * 1000 for i, _ in mine if i < len(server)]
            seen = [r.seconds * 1000 for _, r in mine]
            p50[k] = percentile(srv, .5)
            print(f"{kind:14s} {k:2s} {p50[k]:8.1f} {percentile(srv, .95):8.1f} "
                  f"{percentile(seen, .5):9.1f} {percentile(seen, .95):9.1f} "
                  f"{sum(r.messages for _, r in mine) / len(mine):5.0f} "
                  f"{sum(r.bytes for _, r in mine) / len(mine) / 1000:6.1f}")
        print(f"{kind:14s} A/B of the script run's p50: {p50['A'] / p50['B']:.2f}x")
    per = {k: cpu[k] / len(runs[k]) * 1000 for k in cpu}
    print(f"server CPU per action (all kinds; user + system, /proc): A {per['A']:.1f} ms, "
          f"B {per['B']:.1f} ms, A/B {per['A'] / per['B']:.2f}x")


if __name__ == "__main__":
    main()
