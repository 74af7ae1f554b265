"""A real JupyterLab (from PyPI) on 127.0.0.1 with a token, in a temporary directory, for the
notebook widget's end-to-end test and bench/views_vs_bertviz.py; notebooks written as files and
run in chromium through JupyterLab's own commands (the page exposes the app)."""

import json
import os
import secrets
import subprocess
import sys
import time
import urllib.request

from .server import ROOT, free_port, stop_app


def notebook(path, *cells: str):
    """Write a notebook of code cells (no outputs) to path."""
    nb = dict(nbformat=4, nbformat_minor=5, metadata=dict(kernelspec=dict(
        name="python3", display_name="Python 3", language="python")),
        cells=[dict(cell_type="code", id=f"c{i}", metadata={}, execution_count=None, outputs=[],
                    source=src) for i, src in enumerate(cells)])
    path.write_text(json.dumps(nb), encoding="utf-8")


SETTINGS = {"@jupyterlab/notebook-extension:tracker": {"autoStartDefaultKernel": True},
            "@jupyterlab/apputils-extension:notification": {"fetchNews": "false"}}


def start_lab(root, log_path, timeout: float = 60):
    """JupyterLab serving `root`; returns (process, base_url, token) once /api/status answers.
    Its settings, workspaces and runtime files stay in root; the kernel sees the repository."""
    port, token = free_port(), secrets.token_hex(16)
    cfg = root / ".jupyter"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT),
           "JUPYTER_CONFIG_DIR": str(cfg), "JUPYTER_RUNTIME_DIR": str(cfg / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(cfg / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(cfg / "workspaces"), "JUPYTER_NO_CONFIG": "1",
           "OMP_NUM_THREADS": "1"}
    for plugin, values in SETTINGS.items():  # user settings: no dialog, no news prompt
        pkg, name = plugin.split(":")
        f = cfg / "settings" / pkg / f"{name}.jupyterlab-settings"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(values), encoding="utf-8")
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=",
         "--LabApp.extension_manager=readonly", "--allow-root"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyterlab exited early; see {log_path}")
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                return proc, url, token
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError(f"jupyterlab did not answer in {timeout:.0f} s; see {log_path}")


def run_all(page):
    """Run every cell of the open notebook as a person does: the first cell's editor clicked,
    then Shift+Enter once per cell."""
    cells = page.locator(".jp-Notebook .jp-Cell")
    cells.first.locator(".jp-InputArea-editor").click()
    for _ in range(cells.count()):
        page.keyboard.press("Shift+Enter")


# the notebook is open and its kernel connected and idle (the execution indicator turns idle
# before the kernel's websocket is connected: keys pressed then run nothing)
APP_READY = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.connectionStatus === 'connected' && k.status === 'idle'
    && !!document.querySelector('.jp-Notebook .jp-Cell');
}"""


stop_lab = stop_app  # terminate, then kill after 10 s
