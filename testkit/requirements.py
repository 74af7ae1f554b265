"""requirements.txt and requirements-dev.txt written from pyproject.toml, the one list of
headscope's dependencies (`make requirements`; tests/unit/test_packaging.py checks them).

    python -m testkit.requirements          # rewrite both files
"""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = ("# Generated from pyproject.toml by `make requirements`: edit pyproject.toml, not this "
          "file\n# (the reasons for each bound are there).\n")


def name_of(requirement: str) -> str:
    return re.split(r"[<>=!~ \[;]", requirement, maxsplit=1)[0].strip().lower()


def expected() -> dict[str, str]:
    """{file name: its text} as pyproject.toml's [project] says, with [tool.headscope]'s exact
    pins in place of the package's ranges in requirements.txt."""
    toml = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project, pins = toml["project"], toml["tool"]["headscope"]["pins"]
    pinned = {name_of(p): p for p in pins}
    runtime = [pinned.get(name_of(r), r) for r in project["dependencies"]]
    dev = project["optional-dependencies"]["dev"]
    return {
        "requirements.txt": HEADER + "".join(f"{r}\n" for r in runtime),
        "requirements-dev.txt": HEADER + "".join(f"{r}\n" for r in dev),
    }


if __name__ == "__main__":
    for name, text in expected().items():
        (ROOT / name).write_text(text, encoding="utf-8")
        print(f"wrote {name}")
