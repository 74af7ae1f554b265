"""The layers import downwards only: pages -> ui -> mha_core; mha_core never imports Streamlit
or plotly; no page imports another; the app never imports tests or testkit; bench and testkit
never import tests. Read from the source (ast), so a new import anywhere is checked."""

import ast
from pathlib import Path

import pytest

from testkit.server import ROOT


def imported(path: Path) -> set:
    """Top-level package names a file imports (relative imports count as their own package)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(path.relative_to(ROOT).parts[0] if node.level else
                      (node.module or "").split(".")[0])
    return names


RULES = {  # folder: packages it must not import
    "mha_core": {"streamlit", "plotly", "ui", "pages", "tests", "testkit", "bench"},
    "ui": {"pages", "tests", "testkit", "bench"},
    "pages": {"pages", "tests", "testkit", "bench"},
    "testkit": {"tests", "bench", "pages"},
    "bench": {"tests", "pages"},
}


@pytest.mark.parametrize("folder", list(RULES))
def test_imports_point_downwards(folder):
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files
    for path in files:
        bad = imported(path) & RULES[folder]
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_the_frame_imports_only_the_app_layer():
    assert imported(ROOT / "app.py") <= {"streamlit", "ui"}
