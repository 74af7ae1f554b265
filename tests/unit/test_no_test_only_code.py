"""Every function, class and method of the production code (mha_core/, headscope/, pages/,
app.py) is reached from production code, not only from tests/ and testkit/ (a
computation lives once, in the browser for the live view or in Python where Python needs it; a
copy kept so that a test can compare two of our own implementations is a second owner, and the
test computes its reference itself). A test's helper or reference belongs in the test or in
testkit/; an entry point that people or tools call goes in ALLOWED with its reason.

How it reads the code (ast, nothing imported):
- The roots: every production module's top-level statements (page scripts, constants,
  decorators, default values, `if __name__ == "__main__": main()`), the code of deploy/ and of
  the benchmarks docs/performance.md documents (a bench script it does not name is no caller),
  and ALLOWED.
- A use is resolved to the module it names: a bare name to the module it was imported from
  (`from M import f` ... `f()`, aliases included) or to its own module; `m.f` and `pkg.m.f` to
  module m when m was imported as a module; a package's __init__ passes a use on to the modules
  it imports from (`figures.atlas_figure` reaches figures/tiles.py). An attribute on anything
  else (`self.f`, `bert.attend`, a module held in a registry: `module.figure`) matches every def
  of that name, since the object's type is not known here.
- Reaching a def reaches what its body uses; reaching a class reaches its body, its dunder
  methods and an nn.Module's `forward`. Import lines and strings are not uses: re-exporting a
  name keeps nothing alive.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = [*sorted((ROOT / "mha_core").rglob("*.py")),
              *sorted((ROOT / "headscope").rglob("*.py")),
              *sorted((ROOT / "pages").glob("*.py")), ROOT / "app.py"]
ANY = None  # the module of a use that could be any module's def (an attribute on an object)

# Reached although no production code calls them: entry points that people and tools call.
# Add one only with its reason; a function that tests alone call belongs in the test or testkit.
ALLOWED = {
    # the public API, documented in docs/python-api.md: outside scripts and notebooks call it
    "mha_core/activations.py::activations": "Model.activations, docs/python-api.md",
    "mha_core/api.py::Model.activations": "bert.activations(res), docs/python-api.md",
    # the notebook's API, documented in docs/notebook.md; headscope/__init__.py's _LAZY names
    # the views as strings ("head_view": "headscope.widgets") and imports them on first use
    "headscope/widgets.py::head_view": "headscope.head_view(res), docs/notebook.md",
    "headscope/widgets.py::model_view": "headscope.model_view(res), docs/notebook.md",
    "headscope/widgets.py::View.save_html": "view.save_html(path), docs/notebook.md",
    "headscope/export.py::load_tensor": "reads back save_tensor's files, docs/notebook.md",
}


def documented_benchmarks() -> list:
    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    return [p for p in sorted((ROOT / "bench").glob("*.py")) if f"bench/{p.name}" in text]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


class File:
    """One file's imports, read from anywhere in it (the code here also imports inside
    functions): `modules` local name -> module file (`import m`, `from pkg import m`),
    `names` local name -> (module file, its name there) (`from m import f as g`), and
    `imports` every production module it imports from."""

    def __init__(self, path: Path, modules: dict):
        self.path, self.tree = path, ast.parse(path.read_text(encoding="utf-8"))
        self.by_name = modules
        here = module_name(path).split(".") if path.is_relative_to(ROOT) else []
        package = here if path.name == "__init__.py" else here[:-1]
        self.modules, self.names, self.imports = {}, {}, {path}
        for n in ast.walk(self.tree):
            if isinstance(n, ast.Import):
                for a in n.names:
                    if a.asname and a.name in modules:
                        self.modules[a.asname] = modules[a.name]
                    elif not a.asname:
                        self.modules[a.name.split(".")[0]] = a.name.split(".")[0]  # dotted
                    self.imports.update(modules[m] for m in [a.name] if m in modules)
            elif isinstance(n, ast.ImportFrom):
                base = n.module or ""
                if n.level:
                    base = ".".join([*package[:len(package) - n.level + 1], *([n.module]
                                                                            if n.module else [])])
                for a in n.names:
                    local = a.asname or a.name
                    if f"{base}.{a.name}" in modules:  # a module
                        self.modules[local] = modules[f"{base}.{a.name}"]
                        self.imports.add(modules[f"{base}.{a.name}"])
                    elif base in modules:
                        self.names[local] = (modules[base], a.name)
                        self.imports.add(modules[base])

    def module_of(self, node):
        """The module file an expression names (m, pkg.m, or a dotted import), else None."""
        if isinstance(node, ast.Name):
            m = self.modules.get(node.id)
            return m if isinstance(m, Path) else self.by_name.get(m) if m else None
        if isinstance(node, ast.Attribute):
            dotted = []
            while isinstance(node, ast.Attribute):
                dotted.insert(0, node.attr)
                node = node.value
            if isinstance(node, ast.Name) and self.modules.get(node.id) == node.id:
                return self.by_name.get(".".join([node.id, *dotted]))
        return None

    def uses(self, nodes) -> set:
        """(module file or ANY, name) for every name and attribute these nodes use."""
        out = set()
        for node in nodes:
            for n in ast.walk(node):
                if isinstance(n, ast.Name):
                    out.add(self.names.get(n.id, (self.path, n.id)))
                elif isinstance(n, ast.Attribute):
                    out.add((self.module_of(n.value) or ANY, n.attr))
        return out

    def defs(self) -> tuple:
        """({"path::name" or "path::Class.method": (name, what reaching it uses)}, what the
        module's top level uses)."""
        rel = self.path.relative_to(ROOT).as_posix()
        defs, top = {}, []
        for node in self.tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                top += [*node.decorator_list, node.args]  # run when the module is imported
                if is_dunder(node.name):  # a module's __getattr__ or __dir__: Python calls them
                    top.append(node)
                else:
                    defs[f"{rel}::{node.name}"] = (node.name, self.uses(node.body))
            elif isinstance(node, ast.ClassDef):
                top += [*node.decorator_list, *node.bases, *node.keywords]
                body = []  # what reaching the class reaches
                for sub in node.body:
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        top += [*sub.decorator_list, sub.args]
                        if is_dunder(sub.name) or sub.name == "forward":
                            body.append(sub)  # called by Python, or by nn.Module.__call__
                        else:
                            defs[f"{rel}::{node.name}.{sub.name}"] = (sub.name,
                                                                      self.uses(sub.body))
                    else:
                        body.append(sub)  # class attributes, dataclass fields
                defs[f"{rel}::{node.name}"] = (node.name, self.uses(body))
            else:
                top.append(node)
        return defs, self.uses(top)


def unreached_defs() -> list:
    """The production defs that no production code reaches (see the module's docstring)."""
    modules = {module_name(p): p for p in PRODUCTION}
    files = {p: File(p, modules) for p in PRODUCTION}
    defs, used = {}, set()
    for path, f in files.items():
        d, top = f.defs()
        defs.update({q: (path, *v) for q, v in d.items()})
        used |= top
    for path in [*sorted((ROOT / "deploy").rglob("*.py")), *documented_benchmarks()]:
        f = File(path, modules)
        used |= f.uses([f.tree])
    # where a use of (module, name) may land: the module, and what a package's __init__ imports
    lands = {}
    for path in PRODUCTION:
        lands[path], todo = {path}, [path]
        while todo:
            p = todo.pop()
            if p.name == "__init__.py" and p in files:
                more = files[p].imports - lands[path]
                lands[path] |= more
                todo += more
    reaches = {}  # (module, name) of a use -> the defs it reaches
    for q, (path, name, _) in defs.items():
        method = "." in q.split("::")[1]
        reaches.setdefault((ANY, name), set()).add(q)
        if not method:
            for m in PRODUCTION:
                if path in lands[m]:
                    reaches.setdefault((m, name), set()).add(q)
    reached, new = set(), set(ALLOWED) & set(defs)
    for use in used:
        new |= reaches.get(use, set())
    while new:
        reached |= new
        more = set()
        for q in new:
            for use in defs[q][2]:
                more |= reaches.get(use, set())
        new = more - reached
    return sorted(set(defs) - reached)


def test_every_production_def_has_a_production_caller():
    unreached = unreached_defs()
    assert not unreached, (
        "production code that only tests call (or nothing): move a test's reference or helper "
        "into the test or testkit/, delete what nothing needs, or, for a documented entry "
        f"point, add it to ALLOWED with its reason: {unreached}")


def test_every_allowed_entry_is_needed(monkeypatch):
    """Without the allow-list each of its entries is unreached: none is stale or misspelt."""
    allowed = set(ALLOWED)
    monkeypatch.setitem(globals(), "ALLOWED", {})
    assert allowed <= set(unreached_defs()), sorted(allowed - set(unreached_defs()))


def test_the_check_finds_what_only_a_test_calls(tmp_path, monkeypatch):
    """The check can fail: an oracle that only tests call, a helper that only the oracle calls,
    a method nothing calls and a function that shares its name with another module's live one
    are found; a def the module's top level calls, a class it builds, that class's dunder
    methods and a def reached through a package's __init__ are not."""
    pkg = tmp_path / "mha_core"
    pkg.mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "performance.md").write_text("", encoding="utf-8")
    (pkg / "__init__.py").write_text("from .other import shared\n", encoding="utf-8")
    (pkg / "other.py").write_text("def shared():\n    return 0\n\n\n"
                                  "def view():\n    return 1\n", encoding="utf-8")
    (pkg / "m.py").write_text(
        "import mha_core\n\n\n"
        "def used():\n    return Box().size + mha_core.shared()\n\n\n"
        "def oracle():\n    return helper()\n\n\n"
        "def helper():\n    return oracle()\n\n\n"
        "def view():\n    return 2\n\n\n"
        "class Box:\n    size = 1\n\n    def __init__(self):\n        self.n = 0\n\n"
        "    def unused(self):\n        return self.n\n\n\n"
        "X = used() + view()\n", encoding="utf-8")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "PRODUCTION", sorted(pkg.glob("*.py")))
    monkeypatch.setitem(globals(), "ALLOWED", {})
    assert unreached_defs() == ["mha_core/m.py::Box.unused", "mha_core/m.py::helper",
                                "mha_core/m.py::oracle", "mha_core/other.py::view"]
    monkeypatch.setitem(globals(), "ALLOWED", {"mha_core/m.py::oracle": "a documented entry"})
    assert unreached_defs() == ["mha_core/m.py::Box.unused", "mha_core/other.py::view"]
