"""What a connected student costs a worker: memory per session and the cost of idle sessions.

For each --counts N, a fresh app process (`streamlit run app.py`, the bundled model) is warmed
by one session (the teacher opening the shared link), then N students connect through the
protocol (testkit.protocol) and open the same shared link, and stay connected, idle. Prints,
per N: the process's RSS and threads before and after, the growth per session, and the CPU
the process uses over --idle seconds while the N sessions sit idle (websocket pings, nothing
else). A fresh process per count: RSS after churn (sessions that came and went) stays high and
says nothing per session.

    .venv/bin/python bench/session_memory.py [--counts 1,30,100,300] [--idle 60]
"""

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.measure import cpu_seconds  # noqa: E402
from testkit.protocol import Session  # noqa: E402
from testkit.server import start_app, stop_app  # noqa: E402

LINK = urlencode({"text": "The teacher wrote a sentence on the board for everyone."})


def status(pid: int) -> dict:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "Threads"):
            out[key] = int(value.split()[0])
    return out


async def hold(url: str, n: int, idle: float, pid: int) -> dict:
    teacher = Session(url, cookie="teacher")
    await teacher.connect()
    await teacher.rerun(query=LINK, timeout=300)
    await asyncio.sleep(2)
    before = status(pid)
    students = [Session(url, cookie=f"s{i}") for i in range(n)]
    failed = 0
    for s in students:  # one at a time: memory, not queueing, is measured here
        await s.connect()
        run = await s.rerun(query=LINK, timeout=120)
        failed += bool(run.error or run.exceptions)
    await asyncio.sleep(2)
    after = status(pid)
    cpu0, t0 = cpu_seconds([pid]), time.perf_counter()
    await asyncio.sleep(idle)
    idle_cpu = cpu_seconds([pid]) - cpu0
    idle_wall = time.perf_counter() - t0
    alive = sum(s.ws.state.name == "OPEN" for s in students)
    for s in students + [teacher]:
        await s.close()
    return dict(before=before, after=after, idle_cpu=idle_cpu, idle_wall=idle_wall,
                alive=alive, failed=failed)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--counts", default="1,30,100,300")
    ap.add_argument("--idle", type=float, default=60.0, help="seconds the sessions sit idle")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="session-memory-"))
    print(f"{'sessions':>8s} {'RSS before MB':>13s} {'after MB':>9s} {'MB/session':>10s} "
          f"{'threads':>11s} {'idle CPU %':>10s} {'open':>5s} {'failed':>6s} {'load':>5s}")
    for n in (int(x) for x in args.counts.split(",")):
        proc, url = start_app(out / f"server-{n}.log")
        try:
            m = asyncio.run(hold(url, n, args.idle, proc.pid))
        finally:
            stop_app(proc)
        b, a = m["before"], m["after"]
        grown = (a["VmRSS"] - b["VmRSS"]) / 1024
        print(f"{n:8d} {b['VmRSS'] / 1024:13.0f} {a['VmRSS'] / 1024:9.0f} "
              f"{grown / max(n, 1):10.2f} {b['Threads']:5d}->{a['Threads']:<5d} "
              f"{100 * m['idle_cpu'] / m['idle_wall']:10.2f} {m['alive']:5d} "
              f"{m['failed']:6d} {os.getloadavg()[0]:5.1f}", flush=True)


if __name__ == "__main__":
    main()
