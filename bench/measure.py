"""What the benchmarks measure with: percentiles, the server's part of a rerun as the browser
sees it, and CPU time and peak memory of processes (from /proc)."""

import os
import time
from pathlib import Path

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg


def percentile(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


class ServerClock:
    """The times at which this session's websocket delivered "script finished": the server's
    part of a step, before the browser draws anything."""

    def __init__(self, page):
        self.finished = []
        page.on("websocket", lambda ws: ws.on("framereceived", self.frame))

    def frame(self, payload):
        if isinstance(payload, bytes | bytearray):
            msg = ForwardMsg()
            try:
                msg.ParseFromString(bytes(payload))
            except Exception:
                return
            if msg.WhichOneof("type") == "script_finished":
                self.finished.append(time.perf_counter())

    def since(self, t: float) -> float | None:
        return next((f - t for f in self.finished if f >= t), None)


def cpu_seconds(pids) -> float:
    """User + system CPU time of these processes so far (from /proc)."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def chromium_pids(root: int | None = None) -> list:
    """The chromium processes this benchmark started: descendants of `root` (this process by
    default), not the browsers other programs on the machine run."""
    parent, cmd = {}, {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
                cmd[int(d.name)] = (d / "cmdline").read_text(errors="replace")
            except (OSError, ValueError, IndexError):
                pass
    root = os.getpid() if root is None else root

    def ours(pid):
        while pid > 1:
            pid = parent.get(pid, 0)
            if pid == root:
                return True
        return False

    return [pid for pid, c in cmd.items() if "chromium" in c and ours(pid)]


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class CpuWatch:
    """CPU seconds used by chromium's processes since start(), polled: a renderer that exits
    (a closed browser context) keeps its last reading instead of dropping out of the sum."""

    def __init__(self):
        self.base, self.last = {}, {}

    def start(self):
        self.base = {pid: cpu_seconds([pid]) for pid in chromium_pids()}
        self.last = dict(self.base)

    def poll(self):
        for pid in chromium_pids():
            self.last[pid] = cpu_seconds([pid])

    def total(self) -> float:
        return sum(v - self.base.get(pid, 0.0) for pid, v in self.last.items())


def pin(pids, cores: set):
    """Every thread of these processes on these cores (threads they start later inherit it)."""
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                os.sched_setaffinity(int(task.name), cores)
            except ProcessLookupError:  # the thread ended since the listing
                pass
