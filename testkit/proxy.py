"""`make serve` for tests and benchmarks: deploy/serve_many.py (nginx in front of N app
processes) on a free port, the processes it started, and which worker served a browser.

The launcher writes RUN_DIR/serve.json once nginx answers on the public port, after every
worker answered /_stcore/health: {"url", "run_dir", "nginx_pid", "workers": [{"index",
"port", "pid", "log"}]}. nginx adds X-Headscope-Upstream (the worker's address) to every
response, the websocket's handshake included: that is how a test knows where a session lives.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from testkit.server import ROOT, free_port

LAUNCHER = ROOT / "deploy" / "serve_many.py"
NGINX = next((p for p in (shutil.which("nginx"), "/usr/sbin/nginx", "/usr/local/sbin/nginx")
              if p and os.access(p, os.X_OK)), None)


def start_proxy(run_dir: Path, workers: int = 2, env_extra=None, worker_script=None,
                timeout: float = 300, upstream_header: bool = True):
    """Start the launcher; return (process, state) once serve.json says everything is up.
    upstream_header: X-Headscope-Upstream on every response (off in production)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, str(LAUNCHER), "--workers", str(workers), "--port", str(free_port()),
           "--address", "127.0.0.1", "--run-dir", str(run_dir)]
    if NGINX:
        cmd += ["--nginx", NGINX]
    if worker_script:
        cmd += ["--worker-script", str(worker_script)]
    if upstream_header:
        cmd += ["--upstream-header"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env_extra or {})}
    log_path = run_dir / "launcher.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    while not (run_dir / "serve.json").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_proxy(proc)
            raise RuntimeError(f"make serve did not come up:\n{log_path.read_text()[-3000:]}")
        time.sleep(0.2)
    return proc, read_state(run_dir)


def read_state(run_dir: Path) -> dict:
    return json.loads((Path(run_dir) / "serve.json").read_text())


def stop_proxy(proc: subprocess.Popen, sig=signal.SIGTERM, timeout: float = 60) -> int:
    """Signal the launcher (SIGTERM, or SIGINT as Ctrl+C does) and wait for it to finish."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def alive(pid: int) -> bool:
    """pid runs (a zombie, exited but not yet reaped, does not count)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def children(pid: int) -> list:
    """The pids whose parent is pid (nginx's worker processes, for example)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d.name))
            except (OSError, ValueError, IndexError):
                pass
    return out


def worker_of(upstream: str, state: dict) -> dict:
    """The worker behind an X-Headscope-Upstream value. After a failover nginx lists every
    address it tried ("127.0.0.1:1, 127.0.0.1:2"); the last one answered."""
    port = int(upstream.split(",")[-1].strip().rsplit(":", 1)[1])
    return next(w for w in state["workers"] if w["port"] == port)


def upstream_of_handshake(event: dict) -> str:
    """X-Headscope-Upstream of a DevTools Network.webSocketHandshakeResponseReceived event."""
    headers = {k.lower(): v for k, v in event["response"]["headers"].items()}
    return headers.get("x-headscope-upstream", "")


def watch_websockets(context, page) -> list:
    """A list that receives the X-Headscope-Upstream header of every websocket handshake of
    `page` (read with Chrome's DevTools protocol: playwright does not show handshake headers).
    Filled while playwright processes events (during any call on the page)."""
    seen = []
    cdp = context.new_cdp_session(page)
    cdp.on("Network.webSocketHandshakeResponseReceived",
           lambda event: seen.append(upstream_of_handshake(event)))
    cdp.send("Network.enable")
    return seen
