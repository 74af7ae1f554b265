"""The attention views' JavaScript: ES modules in js/, each importing what it uses by name (no npm,
no CDN). Streamlit serves that folder as it is (headscope/pyproject.toml names it) and the
browser imports host_streamlit.js, which imports the rest. A notebook widget's module, and the
standalone HTML page, must be one file: bundle() makes it here, when the package is imported,
from the same modules. Nothing generated is committed.

    MODULES               the drawing core's modules in evaluation order, then the hosts
    bundle("host_anywidget.js")   one module: the core's modules, their import lines dropped and
                          `export` taken off their declarations, then the host (its own export
                          default kept); headscope.widgets and headscope.export use it
    streamlit_js()        the same for host_streamlit.js: what component.py sends inline where
                          Streamlit found no manifest (AppTest, headscope not installed)

bundle() checks what concatenation could break: every imported name is exported by the module
named, and no two modules declare the same top-level name.

No Streamlit here: the notebook imports this without it."""

import re
from functools import cache
from pathlib import Path

JS = Path(__file__).resolve().parent / "js"
CSS_FILE = "attention.css"
# The core in an order that evaluates: each module's top-level code reads only what an earlier
# one declared (functions are called later, when everything is defined). main.js holds draw().
CORE = ("core.js", "causal.js", "grid.js", "gridui.js", "lines.js", "controls.js", "focus.js",
        "bars.js", "explore.js", "sentence.js", "explorer.js", "excontrols.js", "main.js",
        "figure.js")
HOSTS = ("host_streamlit.js", "host_anywidget.js")
MODULES = CORE + HOSTS

IMPORT = re.compile(r'^import \{([^}]*)\} from "\./([\w.]+)";\n', re.M)
EXPORT = re.compile(r"^export (?=(?:async )?function|const |let |class )", re.M)
DECLARED = re.compile(r"^(?:export )?(?:(?:async )?function\s*\*?\s*|const |let |class )([\w$]+)",
                      re.M)


@cache
def source(name: str) -> str:
    return (JS / name).read_text(encoding="utf-8")


def css() -> str:
    return source(CSS_FILE)


def exports(name: str) -> set:
    """The names a module exports (`export function f`, `export const X`)."""
    return {m.group(1) for m in DECLARED.finditer(source(name))
            if m.group(0).startswith("export ")}


def imports(name: str) -> dict:
    """{module: [names]} a module imports."""
    return {mod: [n.strip() for n in names.split(",") if n.strip()]
            for names, mod in IMPORT.findall(source(name))}


@cache
def bundle(host: str) -> str:
    """The core's modules and `host` as one ES module (see the module's docstring)."""
    parts, owner = [], {}
    for name in CORE + (host,):
        for mod, names in imports(name).items():
            missing = set(names) - exports(mod)
            if missing:
                raise ValueError(f"{name} imports {sorted(missing)} that {mod} does not export")
        for declared in DECLARED.findall(source(name)):
            if declared in owner:
                raise ValueError(f"{declared} is declared by {owner[declared]} and {name}")
            owner[declared] = name
        parts.append(f"// --- {name}\n" + EXPORT.sub("", IMPORT.sub("", source(name))))
    return "\n".join(parts)


def streamlit_js() -> str:
    return bundle("host_streamlit.js")


def anywidget_js() -> str:
    return bundle("host_anywidget.js")
