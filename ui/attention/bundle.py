"""The attention views' JavaScript, assembled at import time: one drawing core (CORE_FILES, in
order) and a thin adapter per host, joined into one ES module each. No copy, no npm, no CDN.

    streamlit_js()   core + host_streamlit.js   (component.py mounts it)
    anywidget_js()   core + host_anywidget.js   (headscope.widgets and the standalone HTML)

No Streamlit here: the notebook imports this without it."""

import json
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORE_FILES = ("core.js", "grid.js", "gridui.js", "lines.js", "controls.js", "focus.js",
              "main.js", "figure.js")  # in order: draw(component) is defined in main.js


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
