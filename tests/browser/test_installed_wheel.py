"""`pip install` of the built wheel into a fresh virtual environment outside the repository:
it installs two top-level names only (headscope, mha_core), so an environment's own `ui`
package and `app` module keep working beside it; `headscope --help`, `import headscope` with no
checkout on sys.path, and `headscope run` started from another directory draws the Explorer in
chromium with the component's files served through the package's manifest.

The new environment gets the wheel's dependencies from the project's own virtualenv (a .pth
line naming its site-packages; `venv --system-site-packages` would name the base Python's) and
the wheel itself with `pip install --no-deps`: the only files of headscope and mha_core (pages
included) it can import are the wheel's, and each requirement in the wheel's metadata must be
met there. (Installing the dependencies again would test only pip's resolver;
tests/unit/test_packaging.py compares the requirements with pyproject.toml.) Slow: the app's
start and first draw take most of it (docs/testing.md).
"""

import os
import shutil
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest

from testkit.browser import FIND, windowed
from testkit.proxy import NGINX, read_state, stop_proxy
from testkit.server import ROOT, free_port, wait_healthy
from tests.conftest import require

# One test, not three: pytest-xdist would build and install the wheel once per worker.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
# The project's installed dependencies (its virtualenv's site-packages): none of our own code
DEPS = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
OURS = ("headscope", "mha_core")
# Each requirement of the installed wheel (its metadata; extras left out) is met in the new venv
REQUIREMENTS_MET = """
from importlib.metadata import requires, version
from packaging.requirements import Requirement
wanted = [Requirement(r) for r in requires("headscope")]
assert {"torch", "streamlit", "transformers"} <= {r.name for r in wanted}, wanted
for r in wanted:
    if r.marker is None or r.marker.evaluate({"extra": ""}):
        assert r.specifier.contains(version(r.name), prereleases=True), (str(r), version(r.name))
"""


def source_copy(dest: Path) -> Path:
    """The checkout's files as git sees them (tracked and new, not ignored): the build writes
    build/ and *.egg-info into its source folder, which must not be the repository."""
    names = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                           check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def install(tmp: Path) -> Path:
    """A fresh venv in tmp holding the wheel built from a copy of the checkout, on top of the
    project's installed dependencies."""
    src = source_copy(tmp / "src")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp / "dist"), str(src)], check=True)
    built = time.perf_counter() - t0
    wheel, = (tmp / "dist").glob("headscope-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    new_site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path("
                               "'purelib'))"], check=True, capture_output=True, text=True)
    (Path(new_site.stdout.strip()) / "project_deps.pth").write_text("\n".join(DEPS) + "\n")
    t0 = time.perf_counter()
    pip = [sys.executable, "-m", "pip", "--python", python]
    subprocess.run([*pip, "install", "-q", "--no-deps", str(wheel)], check=True, cwd=tmp)
    print(f"wheel built in {built:.1f} s, installed in {time.perf_counter() - t0:.1f} s")
    out = subprocess.run([python, "-c", REQUIREMENTS_MET], capture_output=True, text=True,
                         cwd=tmp)
    assert out.returncode == 0, out.stderr  # every requirement of the wheel is installed
    return venv


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "HF_HUB_OFFLINE": "1", **extra}


def test_the_installed_wheel(tmp_path, page):
    installed = install(tmp_path)
    leaves_their_own_ui_and_app_alone(installed, tmp_path)
    help_lists_the_commands(installed, tmp_path)
    imports_with_no_repository_on_sys_path(installed, tmp_path)
    headscope_run_draws_the_explorer(installed, tmp_path, page)
    headscope_serve_answers_through_nginx(installed, tmp_path)


def leaves_their_own_ui_and_app_alone(installed, tmp_path):
    python = str(installed / "bin" / "python")
    gone = subprocess.run([python, "-c", "import ui"], cwd=tmp_path, capture_output=True,
                          text=True, env=clean_env())
    assert gone.returncode != 0 and "No module named 'ui'" in gone.stderr
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path("
                                "'purelib'))"], check=True, capture_output=True,
                               text=True).stdout.strip())
    (site / "ui").mkdir()
    (site / "ui" / "__init__.py").write_text("WHO = 'theirs'\n")
    (site / "app.py").write_text("WHO = 'theirs'\n")
    out = subprocess.run([python, "-c", "import ui, app, headscope.ui, headscope.files; "
                          "print(ui.WHO, app.WHO, headscope.files.PAGES.name)"],
                         cwd=tmp_path, capture_output=True, text=True, env=clean_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["theirs", "theirs", "pages"]


def help_lists_the_commands(installed, tmp_path):
    out = subprocess.run([str(installed / "bin" / "headscope"), "--help"], cwd=tmp_path,
                         capture_output=True, text=True, env=clean_env())
    assert out.returncode == 0, out.stderr
    for command in ("run", "serve", "syntax", "export"):
        assert f"\n  {command} " in out.stdout


def imports_with_no_repository_on_sys_path(installed, tmp_path):
    for folder in DEPS:  # the dependencies' folder holds none of our code
        assert not [n for n in OURS if (Path(folder) / n).exists()], folder
    code = (
        "import os, sys, headscope, mha_core, headscope.ui.attention.component as c\n"
        f"root, deps = {os.path.realpath(ROOT)!r}, {[os.path.realpath(d) for d in DEPS]!r}\n"
        "paths = [os.path.realpath(p) for p in sys.path if p]\n"
        "assert not [p for p in paths if p not in deps and (p + '/').startswith(root + '/')], "
        "sys.path\n"
        "for m in (headscope, mha_core, c):\n"
        "    assert m.__file__.startswith(sys.prefix), m.__file__\n"
        "assert headscope.load_model is mha_core.load_model\n"
        "res = headscope.load_model().attend('The cat sat.')\n"
        "print(' '.join(res.tokens), tuple(res.attentions.shape))\n")
    out = subprocess.run([str(installed / "bin" / "python"), "-c", code], cwd=tmp_path,
                         capture_output=True, text=True, env=clean_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[CLS]", "the", "cat", "sat", ".", "[SEP]", "(6,", "12,", "6,",
                                  "6)"]


def headscope_run_draws_the_explorer(installed, tmp_path, page):
    import mha_core
    from headscope.ui.models import DEFAULT_TEXT

    tokens = mha_core.load_model().attend(DEFAULT_TEXT).tokens
    port = free_port()
    log_path = tmp_path / "run.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [str(installed / "bin" / "headscope"), "run", "--server.port", str(port),
             "--server.address", "127.0.0.1"],
            cwd=tmp_path, env=clean_env(), stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc, 120, log_path)
        page.goto(url)
        page.wait_for_function(
            "([sel, tokens]) => { const h = " + FIND + "(sel);"
            " return !!h && h.dataset.drawn === tokens.join(' '); }",
            arg=[".st-key-ex_grid [data-drawn]", windowed(tokens)], polling="raf",
            timeout=120_000)
        assert page.locator('[data-testid="stException"]').count() == 0
        # the component's modules came from the wheel's asset folder, not inline
        from headscope.ui.attention import bundle
        fetched = page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
        for js in ("host_streamlit.js", "main.js"):
            module = f"{url}/_stcore/bidi-components/headscope.attention/{js}"
            assert module in fetched
            with urllib.request.urlopen(module, timeout=10) as r:
                assert r.status == 200 and r.read().decode() == bundle.source(js)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def headscope_serve_answers_through_nginx(installed, tmp_path):
    """`headscope serve` from the wheel: deploy/serve_many.py and its nginx template came
    along, and its workers run `python -m headscope.worker` (the launcher writes serve.json
    once nginx answers, after every worker answered /_stcore/health)."""
    require(NGINX is not None, "nginx is not installed (apt-get install nginx; .ci/run does)")
    run_dir = tmp_path / "serve"
    with open(tmp_path / "serve.log", "w") as log:
        proc = subprocess.Popen(
            [str(installed / "bin" / "headscope"), "serve", "--workers", "1", "--port",
             str(free_port()), "--address", "127.0.0.1", "--run-dir", str(run_dir),
             "--nginx", NGINX, "--upstream-header"], cwd=tmp_path, env=clean_env(), stdout=log,
            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while not (run_dir / "serve.json").exists():
            assert proc.poll() is None and time.monotonic() < deadline, \
                (tmp_path / "serve.log").read_text()[-3000:]
            time.sleep(0.2)
        state = read_state(run_dir)
        with urllib.request.urlopen(state["url"] + "/_stcore/health", timeout=10) as r:
            assert r.read().strip() == b"ok"
            assert r.headers["X-Headscope-Upstream"] == f"127.0.0.1:{state['workers'][0]['port']}"
    finally:
        assert stop_proxy(proc) == 0
