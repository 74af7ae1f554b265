"""The package around the app: one list of dependencies (pyproject.toml), the `headscope`
command, a lazy `import headscope`, and a wheel that carries every file the app reads.
(tests/browser/test_installed_wheel.py installs that wheel and runs it.)"""

import os
import subprocess
import sys
import tomllib
import zipfile

import pytest

from headscope import cli
from testkit.requirements import ROOT, expected


def test_requirements_files_are_generated_from_pyproject():
    for name, text in expected().items():
        assert (ROOT / name).read_text(encoding="utf-8") == text, (
            f"{name} differs from pyproject.toml: put the dependency in pyproject.toml's "
            "[project] and run `make requirements`")


def test_the_package_accepts_a_torch_range_and_make_run_pins_one():
    """pip install headscope keeps the user's torch (a CUDA build, say); make run installs the
    exact one."""
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    torch_req = Requirement(next(r for r in project["dependencies"] if r.startswith("torch")))
    for version in ("2.4.1", "2.11.0", "2.13.0", "2.14.1"):
        assert torch_req.specifier.contains(version), version
    assert "torch==2.13.0" in (ROOT / "requirements.txt").read_text().splitlines()


def test_the_installed_streamlit_config_is_the_apps():
    # Streamlit reads .streamlit/ from the current directory only: an installed headscope
    # passes the copy's settings as flags, so the copy must say what the checkout's says
    assert (ROOT / "headscope" / "streamlit.toml").read_text() == \
        (ROOT / ".streamlit" / "config.toml").read_text()
    assert "--server.fileWatcherType=none" in cli.config_flags()
    assert "--runner.postScriptGC=false" in cli.config_flags()


def run_cli(*args, code=None, timeout=60):
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "headscope", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_import_headscope_loads_neither_torch_nor_streamlit():
    out = run_cli(code="import sys, headscope; "
                       "print(sorted({'torch', 'streamlit', 'mha_core'} & set(sys.modules)))")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_load_bert_is_re_exported():
    import headscope
    import mha_core
    assert headscope.load_model is mha_core.load_model
    assert headscope.AttentionResult is mha_core.AttentionResult
    with pytest.raises(AttributeError):
        headscope.no_such_thing  # noqa: B018


def test_help_and_a_wrong_command():
    out = run_cli("--help")
    assert out.returncode == 0
    assert [line.split()[0] for line in out.stdout.splitlines() if line.startswith("  ")
            and line.split()[0] in cli.COMMANDS] == ["run", "serve", "syntax", "reproduce",
                                                     "export"]
    out = run_cli("nonsense")
    assert out.returncode == 2 and "invalid choice: 'nonsense'" in out.stderr
    assert "Traceback" not in out.stderr
    out = run_cli()
    assert out.returncode == 2 and "commands:" in out.stderr


@pytest.mark.parametrize("argv", [["syntax", "--help"], ["reproduce", "--help"],
                                  ["export", "--help"], ["run", "--help"]])
def test_every_command_takes_a_device(argv, capsys):
    try:
        cli.main(argv)
    except SystemExit:
        pass
    assert "--device" in capsys.readouterr().out


def test_python_m_commands_take_a_device(capsys):
    from mha_core import norms, syntax
    from mha_core.one_head import cli as one_head
    from mha_core.reproduce import __main__ as reproduce
    for main in (norms.main, syntax.main, one_head.main, reproduce.main):
        with pytest.raises(SystemExit):
            main(["--help"])
        assert "--device" in capsys.readouterr().out


def test_run_and_serve_pass_the_device_to_the_app(monkeypatch):
    monkeypatch.setenv("HEADSCOPE_DEVICE", "auto")  # restored after the test
    assert cli.take_device(["--server.port", "8600", "--device", "cuda:1"]) == [
        "--server.port", "8600"]
    assert os.environ["HEADSCOPE_DEVICE"] == "cuda:1"
    assert cli.take_device(["--device=cpu"]) == [] and os.environ["HEADSCOPE_DEVICE"] == "cpu"


def test_a_device_not_here_is_a_message_not_a_traceback(tmp_path, capsys):
    from mha_core.one_head.cli import main
    corpus = tmp_path / "c.txt"
    corpus.write_text("one sentence.\nanother sentence.\n")
    assert main([str(corpus), "--json", str(tmp_path / "o.json"), "--device", "tpu"]) == 2
    err = capsys.readouterr().err
    assert "device must be one of" in err and "Traceback" not in err


def test_export_without_its_module_says_how_to_get_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "headscope.export", None)  # as if it failed to import
    assert cli.main(["export", "out.html"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("headscope export") and "Traceback" not in err


@pytest.mark.slow  # loads the model and scores the sample treebank: ~5-12 s
def test_syntax_runs_mha_core_syntax(tmp_path):
    out = run_cli("syntax", str(ROOT / "mha_core" / "data" / "headscope-sample.conllu"),
                  "--min-arcs", "1", "--json", str(tmp_path / "s.json"), timeout=300)
    assert out.returncode == 0, out.stderr
    assert "sentences scored" in out.stdout and (tmp_path / "s.json").stat().st_size > 0


# checkout path -> its path in the wheel, for the folders pyproject.toml maps into headscope
MAPPED = {"pages/": "headscope/pages/", "docs/": "headscope/guide/",
          "deploy/": "headscope/deploy/"}


def in_wheel(name: str) -> str:
    return next((new + name[len(old):] for old, new in MAPPED.items() if name.startswith(old)),
                name)


def test_the_wheel_carries_every_file_the_app_reads_and_two_top_level_names(tmp_path):
    names = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           check=True, capture_output=True, text=True).stdout.split()
    sources = {n for n in names if n.split("/")[0] in ("headscope", "mha_core", "pages")
               and (ROOT / n).is_file() and "__pycache__" not in n}
    sources |= {"docs/teaching.md", "docs/glossary.md", "deploy/serve_many.py",
                "deploy/nginx/headscope.conf.template"}
    src = tmp_path / "src"
    for name in {*sources, "pyproject.toml", "README.md"}:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes((ROOT / name).read_bytes())
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path / "dist"), str(src)], check=True,
                   capture_output=True)
    wheel, = (tmp_path / "dist").glob("headscope-*.whl")
    with zipfile.ZipFile(wheel) as z:
        inside = {n for n in z.namelist() if ".dist-info/" not in n}
        entry_points = z.read(next(n for n in z.namelist()
                                   if n.endswith("entry_points.txt"))).decode()
    wanted = {in_wheel(n) for n in sources}
    assert wanted <= inside, sorted(wanted - inside)
    assert {n.split("/")[0] for n in inside} == {"headscope", "mha_core"}
    assert "headscope = headscope.cli:main" in entry_points


def test_every_package_of_the_source_is_in_the_wheel_list():
    """A new folder of modules under headscope/ or mha_core/ must be named in pyproject.toml's
    packages (the list is explicit because three folders are mapped into headscope)."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {str(p.parent.relative_to(ROOT)).replace("/", ".")
             for top in ("headscope", "mha_core") for p in (ROOT / top).rglob("*.py")
             if "__pycache__" not in p.parts}
    assert found <= listed, sorted(found - listed)
