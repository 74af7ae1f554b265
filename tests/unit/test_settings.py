"""headscope.settings: every HEADSCOPE_* variable read in one place, validated by name, never a
traceback; the only reads of HEADSCOPE_* in the shipped code (the grep the structure issue
asks for)."""

import re
import subprocess
import sys

import pytest

from headscope import settings as s
from testkit.requirements import ROOT


def test_defaults_and_good_values():
    got = s.read({})
    assert got == s.Settings() and got.problems == ()
    got = s.read({"HEADSCOPE_MODELS": "base=/m/base; large = /m/large ;junk",
                  "HEADSCOPE_CACHE_TTL": "60", "HEADSCOPE_DEVICE": "CUDA:1",
                  "HEADSCOPE_UPSTREAM_HEADER": "on", "HEADSCOPE_FRAME_ANCESTORS": "'none'"})
    assert got.models == (("base", "/m/base"), ("large", "/m/large"))
    assert got.cache_ttl == 60 and got.device == "cuda:1" and got.upstream_header
    assert got.frame_ancestors == "'none'" and got.problems == ()


@pytest.mark.parametrize("name, value, says", [
    ("HEADSCOPE_TORCH_THREADS", "many", "not a positive whole number; using 1"),
    ("HEADSCOPE_CACHE_ENTRIES", "0", "not a positive whole number; using 64"),
    ("HEADSCOPE_DEVICE", "tpu", "auto, cpu, cuda, cuda:N or mps; using auto"),
    ("HEADSCOPE_UPSTREAM_HEADER", "yes", "on or off"),
    ("HEADSCOPE_MODELS", "no-equals-sign", "name=path pairs"),
])
def test_a_bad_value_keeps_the_default_and_is_said_by_name(name, value, says):
    got = s.read({name: value})
    assert len(got.problems) == 1 and got.problems[0].startswith(f"{name}={value!r}")
    assert says in got.problems[0]
    field = name.removeprefix("HEADSCOPE_").lower()
    assert getattr(got, field) == getattr(s.Settings(), field)


def test_a_bad_value_never_breaks_an_import():
    env = {"HEADSCOPE_TORCH_THREADS": "x", "HEADSCOPE_CACHE_TTL": "-1", "PATH": "/usr/bin"}
    out = subprocess.run([sys.executable, "-c",
                          "import headscope.ui.models, headscope.ui.budget, headscope.ui.threads; "
                          "from headscope.settings import settings; "
                          "print(len(settings().problems))"],
                         cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2"


def test_the_environment_is_read_again_when_it_changes(monkeypatch):
    monkeypatch.setenv("HEADSCOPE_CACHE_TTL", "5")
    assert s.settings().cache_ttl == 5
    monkeypatch.setenv("HEADSCOPE_CACHE_TTL", "7")
    assert s.settings().cache_ttl == 7


def test_no_headscope_variable_is_read_anywhere_else():
    """os.environ.get / getenv / environ[...] of a HEADSCOPE_ name, outside settings.py; setting
    one (headscope run --device) is a write, not a read."""
    read = re.compile(r"(environ\.get|getenv)\(\s*[\"']HEADSCOPE_"
                      r"|environ\[\s*[\"']HEADSCOPE_\w+[\"']\s*\](?!\s*=[^=])")
    shipped = [ROOT / "app.py", *ROOT.glob("headscope/**/*.py"),
               *ROOT.glob("pages/*.py"),
               *ROOT.glob("mha_core/**/*.py"), *ROOT.glob("deploy/*.py")]
    found = [f"{p.relative_to(ROOT)}:{i}" for p in shipped if p.name != "settings.py"
             for i, line in enumerate(p.read_text().splitlines(), 1) if read.search(line)]
    assert found == []
    assert read.search('x = os.environ.get("HEADSCOPE_X")')  # the pattern finds a read
    assert not read.search('os.environ["HEADSCOPE_X"] = "1"')
