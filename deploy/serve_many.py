"""`make serve`: several headscope processes behind nginx, on one public port, sticky sessions.

    .venv/bin/python deploy/serve_many.py [--workers N] [--port 8501] [--address 0.0.0.0]
                                          [--run-dir DIR] [--nginx PATH]

1. Starts N app processes ("workers": `headscope run`, with the bundled model loading
   meanwhile, as `make run` does), each on its own free port of 127.0.0.1.
2. Waits until every worker answers /_stcore/health (nginx's open-source build has only
   passive health checks, so nothing is sent to a worker before it is up).
3. Fills deploy/nginx/headscope.conf.template in and starts Debian's nginx on the public port,
   in the foreground, as the current user, with its configuration, pid file, logs and temp
   paths in the run directory (no system service, no root needed).
4. Watches: a worker that dies is started again on its port (at most once every 10 s; nginx
   sends its sessions to the others meanwhile); if nginx dies, everything stops.

Ctrl+C or SIGTERM stops nginx, then the workers. The run directory keeps the logs and
serve.json, which names every process (the tests and bench/class_protocol.py read it).
"""

import argparse
import ctypes
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The repository, when this file is its deploy/ (an installed wheel carries it as
# headscope/deploy, with headscope importable already)
CHECKOUT = Path(__file__).resolve().parent.parent
if not (CHECKOUT / "headscope" / "files.py").is_file():
    CHECKOUT = None
else:
    sys.path.insert(0, str(CHECKOUT))
from headscope.settings import settings  # noqa: E402

TEMPLATE = Path(__file__).with_name("nginx") / "headscope.conf.template"
SERVER_LINE = "server 127.0.0.1:{port} max_fails=1 fail_timeout=10s;"
RESTART_EVERY = 10.0  # seconds between two starts of the same worker
STARTUP_TIMEOUT = 180.0  # N workers loading torch at once on a busy machine take a while

# The main configuration around the template: everything that would otherwise point at
# /etc/nginx, /run or /var points into the run directory.
MAIN_CONF = """\
# Written by deploy/serve_many.py: nginx as a foreground process of the current user.
daemon off;
worker_processes 1;  # the proxy needs little CPU; the cores are the workers'
pid {run}/nginx.pid;
error_log {run}/nginx-error.log warn;

worker_rlimit_nofile {files};

events {{
    # Two per open connection (browser side and worker side): one address at its limit twice
    # over (a hostile client, or a classroom's NAT) plus SESSIONS_PER_WORKER on every worker
    worker_connections {connections};
}}

http {{
    access_log {run}/nginx-access.log;
    # Run as root, nginx's worker processes switch to user nobody, who may not reach the run
    # directory (a temp dir of mode 0700): they never write a response or an upload to disk.
    # A response larger than the memory buffers is passed on as the browser reads it.
    proxy_max_temp_file_size 0;
    proxy_request_buffering off;
    client_body_temp_path {run}/temp/body;
    proxy_temp_path {run}/temp/proxy;
    fastcgi_temp_path {run}/temp/fastcgi;
    uwsgi_temp_path {run}/temp/uwsgi;
    scgi_temp_path {run}/temp/scgi;

    include {run}/headscope.conf;
}}
"""


# The proxy's limits (docs/limits.md, "Deploying"): the template's per-address and per-browser
# connection caps, and nginx's worker_connections sized from them and the number of workers.
CONN_PER_ADDRESS = settings().conn_per_address  # a NAT'd class
CONN_PER_BROWSER = settings().conn_per_browser  # tabs + loads
SESSIONS_PER_WORKER = 300  # idle sessions a worker can hold (its file descriptors: ulimit -n)


def worker_connections(workers: int) -> int:
    return 2 * (2 * CONN_PER_ADDRESS + SESSIONS_PER_WORKER * workers) + 256


def template_values(listen: str, servers: str, upstream_header: bool) -> dict:
    return dict(HEADSCOPE_LISTEN=listen, HEADSCOPE_SERVERS=servers,
                HEADSCOPE_CONN_PER_ADDRESS=str(CONN_PER_ADDRESS),
                HEADSCOPE_CONN_PER_BROWSER=str(CONN_PER_BROWSER),
                HEADSCOPE_FRAME_ANCESTORS=settings().frame_ancestors,
                HEADSCOPE_UPSTREAM_HEADER="on" if upstream_header else "off")


def log(msg: str):
    print(f"headscope serve: {msg}", flush=True)


def find_nginx(given: str | None) -> str:
    """nginx from --nginx, $PATH or /usr/sbin (not on a normal user's $PATH on Debian)."""
    for candidate in (given, shutil.which("nginx"), "/usr/sbin/nginx", "/usr/local/sbin/nginx"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("headscope serve: nginx not found. Install it (Debian: apt-get install nginx) "
             "or pass --nginx PATH.")


def free_ports(n: int) -> list:
    """n distinct free ports of 127.0.0.1 (all held open while choosing)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.read().strip() == b"ok"
    except OSError:
        return False


def render(template: str, values: dict) -> str:
    """Fill ${HEADSCOPE_...} in; nginx's own $variables are left alone."""
    return re.sub(r"\$\{(HEADSCOPE_\w+)\}", lambda m: values[m.group(1)], template)


_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def die_with_us():
    """In the child, before exec: get SIGTERM if this launcher dies, even of SIGKILL."""
    if _libc is not None:
        _libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def spawn(cmd, log_path: Path, env=None) -> subprocess.Popen:
    out = open(log_path, "a")  # a file, not a pipe: a full pipe would block the process
    # A session of its own: Ctrl+C reaches only this launcher, which stops the rest in order.
    # cwd: `-m headscope.worker` puts it first on sys.path; in a wheel, not the caller's folder
    return subprocess.Popen(cmd, cwd=CHECKOUT or HERE, env=env, stdout=out,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=die_with_us)


def stop(proc: subprocess.Popen | None, timeout: float = 10):
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Worker:
    """One app process on 127.0.0.1:port, started again if it dies."""

    def __init__(self, index: int, port: int, script: Path, run: Path, env: dict):
        self.index, self.port, self.script, self.env = index, port, script, env
        self.url = f"http://127.0.0.1:{port}"
        self.log = run / f"worker-{index}.log"
        self.proc, self.started = None, 0.0

    def start(self):
        self.started = time.monotonic()
        script = ["-m", "headscope.worker"] if self.script is None else [str(self.script)]
        self.proc = spawn([sys.executable, *script, "--server.port", str(self.port),
                           "--server.address", "127.0.0.1", "--server.headless", "true"],
                          self.log, self.env)

    def wait_healthy(self, deadline: float):
        while not healthy(self.url):
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker {self.index} exited during start-up; see {self.log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"worker {self.index} not healthy in time; see {self.log}")
            time.sleep(0.3)

    def restart_if_dead(self) -> bool:
        if self.proc.poll() is None or time.monotonic() - self.started < RESTART_EVERY:
            return False
        log(f"worker {self.index} (port {self.port}) exited with code {self.proc.returncode}; "
            f"starting it again (its sessions reconnect to the other workers meanwhile)")
        self.start()
        return True

    def state(self) -> dict:
        return dict(index=self.index, port=self.port, pid=self.proc.pid, log=str(self.log))


def write_state(run: Path, url: str, nginx: subprocess.Popen, workers: list):
    state = dict(url=url, run_dir=str(run), nginx_pid=nginx.pid,
                 workers=[w.state() for w in workers])
    tmp = run / "serve.json.tmp"
    tmp.write_text(json.dumps(state, indent=2))
    tmp.replace(run / "serve.json")  # readers never see half a file


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="app processes (default: the number of cores)")
    ap.add_argument("--port", type=int, default=8501, help="the public port (default 8501)")
    ap.add_argument("--address", default="0.0.0.0",
                    help="the public address (default: all interfaces, as `make run`)")
    ap.add_argument("--run-dir", help="config, pid, logs and temp files (default: a new "
                                      "directory under the system's temp directory)")
    ap.add_argument("--nginx", help="the nginx binary (default: from $PATH or /usr/sbin)")
    ap.add_argument("--upstream-header", action="store_true",
                    default=settings().upstream_header,
                    help="add X-Headscope-Upstream (which worker answered: internal addresses) "
                         "to every response; tests use it (default: off)")
    ap.add_argument("--worker-script", type=Path,
                    help="a script each worker runs instead of `headscope run`, with its "
                         "arguments (benchmarks pass a timed version)")
    args = ap.parse_args()
    if args.workers < 1:
        sys.exit("headscope serve: --workers must be at least 1")

    nginx_bin = find_nginx(args.nginx)
    run = Path(args.run_dir or tempfile.mkdtemp(prefix="headscope-serve-")).resolve()
    (run / "temp").mkdir(parents=True, exist_ok=True)

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    # One secret for every worker, so a cookie Streamlit signs in one process (st.login's; the
    # app has no login today) is valid in the others, as behind any load balancer.
    env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))
    workers = [Worker(i, port, args.worker_script, run, env)
               for i, port in enumerate(free_ports(args.workers))]
    nginx = None

    def on_signal(signum, frame):
        raise KeyboardInterrupt  # into the finally below, wherever main is
    # Set explicitly: a shell without job control starts background commands with SIGINT
    # ignored, and Python then leaves it ignored. SIGHUP: the terminal was closed.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)

    try:
        for w in workers:
            w.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        for w in workers:
            w.wait_healthy(deadline)
        log(f"{len(workers)} workers healthy on ports {', '.join(str(w.port) for w in workers)}")

        servers = "\n    ".join(SERVER_LINE.format(port=w.port) for w in workers)
        listen = f"[{args.address}]:{args.port}" if ":" in args.address else \
            f"{args.address}:{args.port}"
        (run / "headscope.conf").write_text(render(
            TEMPLATE.read_text(), template_values(listen, servers, args.upstream_header)))
        connections = worker_connections(len(workers))
        (run / "nginx.conf").write_text(MAIN_CONF.format(run=run, connections=connections,
                                                         files=connections + 256))
        nginx = spawn([nginx_bin, "-p", str(run), "-c", str(run / "nginx.conf"),
                       "-e", str(run / "nginx-error.log")], run / "nginx.out")

        local = "127.0.0.1" if args.address in ("0.0.0.0", "::") else args.address
        url = f"http://{local}:{args.port}"
        while not healthy(url):
            if nginx.poll() is not None:
                raise RuntimeError(f"nginx exited (port {args.port} in use?); see "
                                   f"{run / 'nginx-error.log'} and {run / 'nginx.out'}")
            time.sleep(0.2)
        write_state(run, url, nginx, workers)
        log(f"serving on http://{args.address}:{args.port} through nginx "
            f"({len(workers)} workers, sticky sessions); logs in {run}; Ctrl+C stops")

        while True:
            if nginx.poll() is not None:
                raise RuntimeError(f"nginx exited with code {nginx.returncode}; see "
                                   f"{run / 'nginx-error.log'}")
            if any([w.restart_if_dead() for w in workers]):
                write_state(run, url, nginx, workers)
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    except RuntimeError as e:
        log(str(e))
        sys.exit(1)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # a second Ctrl+C must not cut this short
        log("stopping nginx and the workers")
        stop(nginx)
        for w in workers:
            if w.proc is not None and w.proc.poll() is None:
                w.proc.terminate()
        for w in workers:
            stop(w.proc)


if __name__ == "__main__":
    main()
