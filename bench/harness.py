"""What every benchmark shares: its command line, the app started on a free port, Debian's
chromium, `make serve` behind nginx, percentiles and tables, and the CPU time and memory of
processes (from /proc).

Nothing heavy is imported here (streamlit, torch and playwright are imported inside the
functions that need them), so every script's `--help` answers at once. A script starts with

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench import harness as h

and parses its arguments with `h.parser(__doc__)` before it imports anything else. Every
script prints `h.machine()` first: a figure is quoted with its machine, date and load.
"""

import argparse
import contextlib
import datetime
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"  # what a benchmark keeps (git ignores it)
TIMED_SERVER = Path(__file__).with_name("timed_server.py")

# Held out from the presets: the sentences a benchmark types into the Explorer, one after another
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
FIRST = "I saw the man with a telescope."  # the Explorer's sentence before the first Enter
# A simulated student's own sentences (random_sentence): 7-14 words from a seeded word list
WORDS = dict(
    adj="old young quiet bright small heavy clever tired busy careful hungry famous".split(),
    noun=("teacher student river dog farmer doctor city train garden letter painter robot "
          "child window museum storm").split(),
    verb="saw found painted carried followed opened watched visited cleaned described".split(),
    prep="near behind under beside across inside".split(),
    tail=("before the rain started", "after the long lesson", "because it was late",
          "while the bell rang", "on a cold morning", "with great care"),
)
# Words a text of any length is made of (text_of)
FILLER = ("the astronomer saw a man with a telescope while students in the old library read "
          "letters that their teachers had written about rivers mountains and distant cities "
          "because every sentence needs words").split()


def random_sentence(rng) -> str:
    """A 7-14-word sentence of its own ('The <adj> <noun> <verb> the <noun> ...'); rng: a
    random.Random."""
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


def text_of(bert, T: int, variant: int) -> str:
    """A text of T tokens ([CLS] and [SEP] included; one more if its last word has two
    pieces); `variant` makes each text new (no cache answers it on the server)."""
    words, i = [f"run{variant}"], variant
    while len(bert.encode(" ".join(words)).tokens) < T:
        words.append(FILLER[i % len(FILLER)])
        i += 1
    return " ".join(words)


# --- the command line ------------------------------------------------------------------------

def parser(doc: str, **kwargs) -> argparse.ArgumentParser:
    """The scripts' parser: the module's docstring is the help's text (its usage lines
    included), shown as written."""
    return argparse.ArgumentParser(description=doc, **kwargs,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


class Ints(argparse.Action):
    """A list of whole numbers, written either way: `--sizes 16,128,400` or `--sizes 16 128 400`
    (add_argument(..., nargs="+", action=Ints))."""

    def __call__(self, parser, namespace, values, option_string=None):
        try:
            setattr(namespace, self.dest, [int(x) for v in values for x in v.split(",") if x])
        except ValueError:
            parser.error(f"{option_string}: whole numbers, e.g. 16,128,400")


# --- what a figure is quoted with ------------------------------------------------------------

def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f}"


def machine() -> str:
    """One line to quote with the figures: date, CPU, cores this process may use, load."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (f"{now}; {cpu_model()}, {len(os.sched_getaffinity(0))} of {os.cpu_count()} cores; "
            f"{load()}")


# --- figures ---------------------------------------------------------------------------------

def percentile(xs, q: float) -> float:
    """The q-quantile (0..1) of xs, linearly interpolated."""
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def spread(xs, unit: str = "ms", digits: int = 0) -> str:
    """'p50 .. p95 .. min .. max .. (n=..)' of xs, in `unit`."""
    if not xs:
        return "-"
    f = f"{{:.{digits}f}} {unit}"
    return (f"p50 {f.format(percentile(xs, .5))}   p95 {f.format(percentile(xs, .95))}   "
            f"min {f.format(min(xs))}   max {f.format(max(xs))}   (n={len(xs)})")


def median(xs):
    return statistics.median(xs) if xs else None


def table(header: list[str], rows: list[list]) -> str:
    """A Markdown table (docs/ quotes them as printed)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# --- the app, chromium, make serve -----------------------------------------------------------

def run_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"headscope-{prefix}-"))


@contextlib.contextmanager
def app(prefix: str = "bench", timed: bool = False, env: dict | None = None, launcher=None,
        checkout: str | None = None):
    """The app (started as the tests start it: testkit.server) on a free port; yields (url,
    process, folder). timed: bench/timed_server.py (`headscope run` with a clock) launches it,
    and every script run's seconds go to folder/runs.txt (`run_times`), its start and end to
    folder/stamps.txt. checkout: another checkout's app, run from there (its own headscope:
    `-m streamlit` puts that folder first on sys.path), its server script if it has one, else
    its frame (a commit from before st.App); not with timed (bench/timed_server.py imports this
    checkout's headscope)."""
    from testkit.server import start_app, stop_app

    folder = run_dir(prefix)
    env = dict(env or {})
    if timed:
        launcher = launcher or (str(TIMED_SERVER),)
        env.setdefault("HEADSCOPE_RUN_TIMES", str(folder / "runs.txt"))
        env.setdefault("HEADSCOPE_RUN_STAMPS", str(folder / "stamps.txt"))
    kw = {"launcher": launcher} if launcher else {}
    if checkout and (timed or launcher):
        raise ValueError("checkout runs `-m streamlit` from that checkout: no launcher")
    if checkout:
        frame = Path(checkout).resolve() / "headscope" / "frame"
        kw.update(cwd=frame.parent.parent, script=next(
            p for p in (frame / "headscope_asgi.py", frame / "app.py") if p.exists()))
    proc, url = start_app(folder / "server.log", env_extra=env, **kw)
    try:
        yield url, proc, folder
    finally:
        stop_app(proc)


def run_times(path: Path) -> list[float]:
    """The seconds of every script run bench/timed_server.py wrote to `path` so far."""
    return [float(x) for x in path.read_text().split()] if path.exists() else []


@contextlib.contextmanager
def serve(folder: Path, workers: int, timed: bool = True, env: dict | None = None):
    """`make serve` (deploy/serve_many.py: nginx in front of `workers` app processes) on a free
    port; yields its state (testkit.proxy: url, nginx_pid, workers). timed: the workers are
    bench/timed_server.py, each writing folder/runs-<pid>.txt."""
    from testkit.proxy import start_proxy, stop_proxy

    env = dict(env or {})
    if timed:
        env.setdefault("HEADSCOPE_RUN_TIMES", str(Path(folder) / "runs-{pid}.txt"))
    proc, state = start_proxy(folder, workers, env_extra=env,
                              worker_script=TIMED_SERVER if timed else None)
    try:
        yield state
    finally:
        stop_proxy(proc)


@contextlib.contextmanager
def chromium():
    """Debian's chromium (testkit.browser: /usr/bin/chromium, never `playwright install`) under
    playwright's sync API; yields the browser."""
    from playwright.sync_api import sync_playwright

    from testkit.browser import launch

    with sync_playwright() as p:
        browser = launch(p)
        try:
            yield browser
        finally:
            browser.close()


def bundled():
    """The bundled model (the expected tokens of what a benchmark types) and its heads per
    layer."""
    import mha_core

    bert = mha_core.load_model()
    return bert, bert.config.num_attention_heads


# --- what the browser and the processes did --------------------------------------------------

class ServerClock:
    """The times at which this page's websocket delivered "script finished": the server's
    part of a step, before the browser draws anything."""

    def __init__(self, page):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        self._msg = ForwardMsg
        self.finished = []
        page.on("websocket", lambda ws: ws.on("framereceived", self.frame))

    def frame(self, payload):
        if isinstance(payload, bytes | bytearray):
            msg = self._msg()
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


def rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float:
    """A process's resident memory (VmRSS) or its peak (field="VmHWM"), MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def peak_rss_mb(pid: int | str = "self") -> float:
    return rss_mb(pid, "VmHWM")


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
