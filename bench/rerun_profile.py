"""Where the Explorer's rerun goes, on the server: one protocol session (testkit.protocol, no
browser) against bench/timed_server.py with cProfile on every script run.

Opens the Explorer, then types --n new sentences (each followed by a layer move) and prints,
for "a new sentence" and "a view change" (the layer slider) apart: the client's send ->
script_finished p50/p95, the script run on the server (timed_server's clock) p50/p95, the bytes
and messages sent per action and what they are made of (per element type, the attention
component's JS apart from its data), and the functions that take the most cumulative time
(cProfile, summed over the runs of that kind, per run; cProfile's own overhead inflates
them: read them as shares).

    .venv/bin/python bench/rerun_profile.py [--n 20] [--top 30]
"""

import argparse
import asyncio
import io
import pstats
import random
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.class_protocol import sentence  # noqa: E402
from bench.measure import percentile  # noqa: E402
from testkit.protocol import Session, slider_value, text_value  # noqa: E402
from testkit.server import start_app, stop_app  # noqa: E402


async def drive(url: str, n: int, query: str = "") -> list:
    """[(kind, Run)] in the order of the server's runs (one run per action)."""
    rng = random.Random(7)
    s = Session(url, cookie="profile", fragments=True)
    await s.connect()
    out = [("open", await s.rerun(query=query, timeout=300))]
    layer = int(out[0][1].components["ex_grid"]["tag"].split()[-1])
    for _ in range(n):
        out.append(("new sentence", await s.rerun({"text": text_value(sentence(rng))})))
        layer = layer % 6 + 1
        out.append(("view change", await s.rerun({"ex_layer": slider_value(layer)})))
    await s.close()
    return out


def sizes(run) -> str:
    parts = ", ".join(f"{k} {v / 1000:.1f}" for k, v in
                      sorted(run.sizes.items(), key=lambda kv: -kv[1])[:6])
    return f"{run.bytes / 1000:.1f} kB in {run.messages} messages ({parts})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--query", default="", help="the first run's query string: '' opens the "
                    "bare Explorer (the start card shown), 'text=Hi.' a student's shared link")
    ap.add_argument("--no-profile", action="store_true", help="the times alone, without "
                    "cProfile's overhead (about a fifth of a run)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rerun-profile-"))
    (tmp / "prof").mkdir()
    times = tmp / "runs.txt"
    env = {"HEADSCOPE_RUN_TIMES": str(times)}
    if not args.no_profile:
        env["HEADSCOPE_PROFILE_DIR"] = str(tmp / "prof")
    proc, url = start_app(tmp / "server.log", launcher=(str(Path(__file__).with_name(
        "timed_server.py")),), env_extra=env)
    try:
        runs = asyncio.run(drive(url, args.n, args.query))
    finally:
        stop_app(proc)
    server = [float(x) for x in times.read_text().split()]
    import os

    print(f"load average {os.getloadavg()[0]:.1f} (1 min)"
          + ("" if args.no_profile else f"; profiles in {tmp / 'prof'}"))
    by = defaultdict(list)
    for i, (kind, run) in enumerate(runs):
        by[kind].append((i, run))
    for kind in ("new sentence", "view change"):
        got = by[kind]
        client = [r.seconds * 1000 for _, r in got]
        srv = [server[i] * 1000 for i, _ in got if i < len(server)]
        print(f"\n== {kind} ({len(got)} runs): send -> finished p50 {percentile(client, .5):.0f} "
              f"ms, p95 {percentile(client, .95):.0f} ms; script run p50 "
              f"{percentile(srv, .5):.0f} ms, p95 {percentile(srv, .95):.0f} ms; "
              f"{sizes(got[-1][1])}")
        if args.no_profile:
            continue
        stats = pstats.Stats(*(str(tmp / "prof" / f"run-{i}.prof") for i, _ in got),
                             stream=(buf := io.StringIO()))
        stats.sort_stats("cumulative").print_stats(args.top)
        lines = buf.getvalue().splitlines()
        start = next(i for i, line in enumerate(lines) if "cumtime" in line)
        print("  cumulative ms per run, function")
        for line in lines[start + 1:]:
            parts = line.split(None, 5)
            if len(parts) == 6:
                print(f"  {float(parts[3]) * 1000 / len(got):8.1f}  {parts[5][-90:]}")


if __name__ == "__main__":
    main()
