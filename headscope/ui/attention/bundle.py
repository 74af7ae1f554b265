"""The attention views' JavaScript, assembled at import time: one drawing core (CORE_FILES, in
order) and a thin adapter per host, joined into one ES module each. No copy, no npm, no CDN.

    streamlit_js()   core + host_streamlit.js   (component.py mounts it)
    anywidget_js()   core + host_anywidget.js   (headscope.widgets and the standalone HTML)

    served/          the Streamlit module and CSS as files named by their content's hash, which
                     Streamlit serves (headscope/pyproject.toml declares the folder): the
                     browser fetches them once, not with every rerun. `make component` writes
                     them after a change to the .js or .css files (a test fails while stale).

No Streamlit here: the notebook imports this without it."""

import hashlib
import json
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVED = HERE / "served"
CORE_FILES = ("core.js", "causal.js", "grid.js", "gridui.js", "lines.js", "controls.js", "focus.js",
              "bars.js", "explore.js", "explorer.js", "excontrols.js", "main.js",
              "figure.js")  # in order: draw(component) is defined in main.js


def _read(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


@cache
def core_js() -> str:
    """The drawing core: every view, its controls and exports, and draw(component)."""
    return "\n".join(_read(f) for f in CORE_FILES)


@cache
def css() -> str:
    return _read("attention.css")


@cache
def streamlit_js() -> str:
    return core_js() + "\n" + _read("host_streamlit.js")


@cache
def anywidget_js() -> str:
    """The anywidget module (export default {render}); the CSS travels inside it (HS_CSS)."""
    return f"const HS_CSS = {json.dumps(css())};\n" + core_js() + "\n" + _read("host_anywidget.js")


def served_files() -> dict[str, str]:
    """What served/ must hold: file name -> text. The name carries a hash of the content, so
    that a browser's cached copy is never an older version's."""
    return {f"attention.{hashlib.sha256(text.encode()).hexdigest()[:12]}.{ext}": text
            for text, ext in ((streamlit_js(), "js"), (css(), "css"))}


def write_served(folder: Path = SERVED) -> list[str]:
    """served_files() written into folder, and older versions removed; returns the names."""
    folder.mkdir(exist_ok=True)
    wanted = served_files()
    for old in folder.glob("attention.*"):
        if old.name not in wanted:
            old.unlink()
    for name, text in wanted.items():
        (folder / name).write_text(text, encoding="utf-8")
    return sorted(wanted)
