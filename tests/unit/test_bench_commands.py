"""The benchmarks' commands keep working as bench/ changes: every bench/<name>.py that README.md,
docs/*.md or a benchmark's own docstring names exists, and every benchmark answers --help (rc 0,
a usage line) without importing torch, transformers, Streamlit or playwright first: a script
parses its arguments before any heavy import, so its --help is instant."""

import ast
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NAMED = re.compile(r"(?<![\w./-])bench/([\w-]+)\.py\b")
SCRIPTS = sorted(p for p in BENCH.glob("*.py")
                 if "__name__ == \"__main__\"" in p.read_text(encoding="utf-8"))
HEAVY = {"torch", "transformers", "streamlit", "playwright"}


def named() -> dict:
    """{bench/<name>.py: [the files that name it]} (HTML comments included: a hidden
    "remeasure" note is a command too)."""
    texts = {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
             for path in DOCS}
    for path in sorted(BENCH.glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        texts[path.relative_to(ROOT).as_posix()] = doc
    out = {}
    for where, text in texts.items():
        for name in NAMED.findall(text):
            out.setdefault(f"bench/{name}.py", set()).add(where)
    return {name: sorted(where) for name, where in out.items()}


def test_the_documents_name_benchmarks():
    assert len(named()) >= 5  # the pattern still finds what the documents name


def test_every_named_benchmark_exists():
    missing = {name: where for name, where in named().items() if not (ROOT / name).is_file()}
    assert not missing, f"named but not in bench/: {missing}"


def help_of(script: Path) -> tuple:
    """(rc, stdout, the heavy top-level modules imported) of `python bench/X.py --help`."""
    out = subprocess.run([sys.executable, "-X", "importtime", str(script), "--help"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0]
                for line in out.stderr.splitlines() if line.startswith("import time:")}
    return out.returncode, out.stdout, imported & HEAVY


def test_every_benchmark_answers_help_at_once():
    assert len(SCRIPTS) >= 10
    with ThreadPoolExecutor(4) as pool:
        results = dict(zip(SCRIPTS, pool.map(help_of, SCRIPTS)))
    bad = {}
    for script, (rc, stdout, heavy) in results.items():
        if rc != 0 or "usage:" not in stdout:
            bad[script.name] = f"rc {rc}, output {stdout[:200]!r}"
        elif heavy:
            bad[script.name] = f"imports {sorted(heavy)} before parsing its arguments"
    assert not bad, bad
