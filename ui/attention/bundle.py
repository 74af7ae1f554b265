"""The attention views' JavaScript, assembled at import time: one drawing core (CORE_FILES, in
order) and a thin adapter per host, joined into one ES module each. No copy, no npm, no CDN.

    streamlit_js()   core + host_streamlit.js   (component.py mounts it)
    anywidget_js()   core + host_anywidget.js   (headscope.widgets and the standalone HTML)

    write_served(folder) the Streamlit module and CSS as files named by their content's hash
                     (component.py has Streamlit serve them: fetched once, not per rerun)

No Streamlit here: the notebook imports this without it."""

import hashlib
import json
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORE_FILES = ("core.js", "grid.js", "gridui.js", "lines.js", "controls.js", "focus.js",
              "bars.js", "main.js", "figure.js")  # in order: draw(component) is defined in main.js


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


def write_served(folder: Path) -> tuple[str, str]:
    """streamlit_js() and css() written into folder as attention.<hash>.js and .css, the hash
    of their content in the name (a browser's cached copy is never an older version's);
    returns the two file names."""
    names = []
    for text, ext in ((streamlit_js(), "js"), (css(), "css")):
        name = f"attention.{hashlib.sha256(text.encode()).hexdigest()[:12]}.{ext}"
        (Path(folder) / name).write_text(text, encoding="utf-8")
        names.append(name)
    return names[0], names[1]
