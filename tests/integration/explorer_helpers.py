"""Reading the Explorer back out of Streamlit's AppTest: the plotly figures as numbers."""

import base64
import json

import numpy as np

from mha_core.figures import plain_label
from tests.conftest import ROOT

APP = str(ROOT / "app.py")


def _decode(value):
    """Plotly writes numpy arrays as {"dtype": "f4", "bdata": base64, "shape": "10, 10"}."""
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if isinstance(value.get("bdata"), str) and "dtype" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            arr = arr.reshape([int(s) for s in str(shape).split(",")])
        return arr
    return {k: _decode(v) for k, v in value.items()}


def charts(at) -> dict:
    """{key: figure dict} for every st.plotly_chart on the page (the key ends the element id)."""
    out = {}
    for el in at.get("plotly_chart"):
        key = el.proto.id.rsplit("-", 1)[-1]
        out[key] = _decode(json.loads(el.proto.spec))
    return out


def z(trace) -> np.ndarray:
    return np.asarray(trace["z"], dtype=np.float64)


def axis_tokens(values) -> list:
    return [plain_label(v) for v in values]


def run(at):
    """One rerun of the whole app. Because the project has a pages/ directory, AppTest (which
    rebuilds its PagesManager every run) falls back to Streamlit's old pages/ mode and on a
    rerun executes pages/explorer.py alone, without app.py and its sidebar. Asking for the main
    script each time runs app.py, whose st.navigation picks the default page, the Explorer."""
    at._finished_page_script_hash = ""
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def messages(at) -> str:
    return " | ".join(str(m.value) for kind in (at.warning, at.info, at.error) for m in kind)
