"""The layers import downwards only: pages -> headscope.ui -> mha_core; mha_core never imports
Streamlit, plotly or headscope; no page imports another; the app never imports tests or testkit;
bench and testkit never import tests. Read from the source (ast), so a new import anywhere is
checked."""

import ast
from pathlib import Path

import pytest

from testkit.server import ROOT


def layer(module: str) -> str:
    """The layer a module belongs to: its top-level package, or headscope.ui for the app layer
    (a package inside headscope)."""
    return "headscope.ui" if module.startswith("headscope.ui") else module.split(".")[0]


def imported(path: Path) -> set:
    """The layers a file imports (relative imports count as the file's own layer)."""
    own = layer(".".join(path.relative_to(ROOT).parts))
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {layer(a.name) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(own if node.level else layer(node.module or ""))
    return names


RULES = {  # folder: layers it must not import
    "mha_core": {"streamlit", "plotly", "headscope", "headscope.ui", "pages", "tests",
                 "testkit", "bench"},
    "headscope/ui": {"pages", "tests", "testkit", "bench"},
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
    assert imported(ROOT / "headscope" / "frame" / "app.py") <= {"streamlit", "headscope",
                                                                  "headscope.ui"}


def module_of(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def import_edges(files, root: Path = ROOT) -> dict:
    """{module: the modules of ours it imports}, imports inside function bodies included: a
    name imported from a package resolves to its submodule when there is one."""
    mods = {module_of(p, root): p for p in files}
    edges = {}
    for m, path in mods.items():
        is_pkg = path.name == "__init__.py"
        out = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = m.split(".") if is_pkg else m.split(".")[:-1]
                    base = base[:len(base) - node.level + 1]
                    pkg = ".".join(base + ([node.module] if node.module else []))
                else:
                    pkg = node.module or ""
                targets = [f"{pkg}.{a.name}".strip(".") if f"{pkg}.{a.name}".strip(".") in mods
                           else pkg for a in node.names]
            out |= {t for t in targets if t in mods and t != m}
        edges[m] = out
    return edges


def circles(edges: dict) -> list:
    """(module, a module that imports it back, through any chain) for every circle."""
    found = []

    def reach(start, node, seen):
        for nxt in edges.get(node, ()):
            if nxt == start:
                found.append((start, node))
            elif nxt not in seen:
                seen.add(nxt)
                reach(start, nxt, seen)

    for m in edges:
        reach(m, m, {m})
    return sorted(set(found))


def test_no_import_circles():
    """No two of our files import each other, directly, through others or from a function body
    (a circle hidden by an import inside a function is still a circle)."""
    files = [ROOT / "app.py", *[p for d in ("mha_core", "headscope", "pages")
                                for p in (ROOT / d).rglob("*.py")]]
    found = circles(import_edges(files))
    assert not found, "import circles (module <- the one that imports it back): " + ", ".join(
        f"{a} <- {b}" for a, b in found)


def test_the_circle_check_finds_a_circle_through_a_function_body(tmp_path):
    for name, text in (("a", "from . import b\n"), ("b", "def f():\n    from . import c\n"),
                       ("c", "from .a import x\n"), ("d", "from . import a\n")):
        (tmp_path / f"{name}.py").write_text(text)
    edges = import_edges(sorted(tmp_path.glob("*.py")), tmp_path)
    assert edges == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [a for a, _ in circles(edges)] == ["a", "b", "c"]  # d only imports the circle
