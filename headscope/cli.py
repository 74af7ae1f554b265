"""The `headscope` command (also `python -m headscope`):

    headscope run [streamlit options]        the app on the bundled model (as `make run`)
    headscope serve [--workers N --port P]   several app processes behind nginx (as `make serve`)
    headscope syntax TREEBANK.conllu [...]   score every head against a treebank (Clark et al.)
    headscope reproduce NAME [...]           rerun a paper's measurement beside its numbers
    headscope export [...]                   the views as standalone HTML and figures

Each subcommand passes its own arguments on (`headscope run --server.port 8600`); `headscope
CMD --help` shows them. The app runs from wherever headscope is installed: its files are found by
headscope/files.py, in a checkout as in an installed wheel.
"""

import argparse
import os
import runpy
import sys
import threading
import tomllib
import traceback
from pathlib import Path

from .files import DEPLOY, SERVER

SERVE_MANY = DEPLOY / "serve_many.py"
# The app's Streamlit settings (no file watcher, cache bound, no GC after each run), passed as
# flags: Streamlit reads .streamlit/ only from the current directory, which is wherever the user
# is. The package's copy of the checkout's .streamlit/config.toml (a test keeps them equal), so
# a checkout and a wheel read the same file.
CONFIG = Path(__file__).with_name("streamlit.toml")


def config_flags() -> list[str]:
    """The app's Streamlit config as `--section.option value` flags (user flags come after and
    win)."""
    flags = []
    for section, options in tomllib.loads(CONFIG.read_text(encoding="utf-8")).items():
        for name, value in options.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            flags.append(f"--{section}.{name}={text}")
    return flags


def _warm():
    from headscope.ui import models
    try:
        models.warm_up()
    except Exception:  # the page shows a broken model's error when it asks for it
        print("headscope: warming up the bundled model failed:", file=sys.stderr)
        traceback.print_exc()


def run(argv: list[str]) -> int:
    """`streamlit run headscope/frame/headscope_asgi.py` (the app with its route) with the
    bundled model loading meanwhile: `streamlit run` runs nothing until the first browser
    connects, so the first visitor would wait for torch, transformers and the weights
    (docs/performance.md, "Start-up")."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the bundled model needs no network
    from streamlit.web import cli

    # imported before the thread: never two threads importing at once
    from headscope.ui import budget, models, threads  # noqa: F401  (models: see _warm)

    budget.return_freed_memory()  # before the model's tensors (headscope/ui/budget.py)
    threads.limit()  # before the warm-up's forward pass (the frame sets it too)
    threading.Thread(target=_warm, name="headscope-warm-up", daemon=True).start()
    sys.argv = ["streamlit", "run", str(SERVER), *config_flags(), *argv]
    return cli.main()


def serve(argv: list[str]) -> int:
    """deploy/serve_many.py: WORKERS app processes (each `headscope run`) behind nginx."""
    if not SERVE_MANY.is_file():
        print(f"headscope serve: {SERVE_MANY} is missing; reinstall headscope", file=sys.stderr)
        return 1
    sys.argv = [str(SERVE_MANY), *argv]
    runpy.run_path(str(SERVE_MANY), run_name="__main__")
    return 0


def syntax(argv: list[str]) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from mha_core.syntax import main as syntax_main
    return syntax_main(argv) or 0


def reproduce(argv: list[str]) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from mha_core.reproduce.__main__ import main as reproduce_main
    return reproduce_main(argv) or 0


def export(argv: list[str]) -> int:
    try:
        from headscope.export import main as export_main
    except ImportError as e:
        if getattr(e, "name", None) == "headscope.export":
            print("headscope export: this version of headscope has no export module",
                  file=sys.stderr)
        else:
            print(f"headscope export needs the notebook extra ({e}): "
                  "pip install 'headscope[notebook]'", file=sys.stderr)
        return 1
    return export_main(argv) or 0


COMMANDS = {
    "run": (run, "start the app on the bundled model (as `make run`)"),
    "serve": (serve, "several app processes behind nginx, sticky sessions (as `make serve`)"),
    "syntax": (syntax, "score every attention head against a CoNLL-U treebank"),
    "reproduce": (reproduce, "rerun a paper's attention measurement beside its numbers"),
    "export": (export, "the views as standalone HTML and figures for a paper"),
}


def take_device(args: list[str]) -> list[str]:
    """`--device X` (or --device=X) for the app's commands: set as HEADSCOPE_DEVICE, which the
    app and its workers read (headscope.settings), and taken out of Streamlit's arguments. A word
    that names no device is a settings message; a device this machine lacks is the model's load
    error on the page."""
    out, rest = [], iter(args)
    for a in rest:
        if a == "--device":
            os.environ["HEADSCOPE_DEVICE"] = next(rest, "auto")
        elif a.startswith("--device="):
            os.environ["HEADSCOPE_DEVICE"] = a.split("=", 1)[1]
        else:
            out.append(a)
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(
        prog="headscope", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="What every attention head of a real BERT looks at.\n\ncommands:\n"
                    + "".join(f"  {name:<11}{text}\n" for name, (_, text) in COMMANDS.items()),
        epilog="`headscope COMMAND --help` shows a command's own options.")
    ap.add_argument("command", choices=COMMANDS, metavar="COMMAND")
    if not argv:
        ap.print_help(sys.stderr)
        return 2
    if argv[0] not in COMMANDS:
        ap.parse_args(argv[:1])  # exits: the help, or an error that names the commands
    command, args = argv[0], argv[1:]
    if command == "run" and args[:1] in (["-h"], ["--help"]):
        print("usage: headscope run [--device auto|cpu|cuda|cuda:N|mps] [streamlit options, "
              "e.g. --server.port 8600]\nAll of `streamlit run --help`'s options apply.")
        return 0
    if command in ("run", "serve"):
        args = take_device(args)
        from .settings import settings

        for problem in settings().problems:
            print(f"headscope: {problem}", file=sys.stderr)
    try:
        return COMMANDS[command][0](args)
    except KeyboardInterrupt:
        return 130
