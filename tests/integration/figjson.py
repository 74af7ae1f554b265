"""Reading plotly figures back out of an AppTest run (used by the issue-4 page tests)."""

import base64
import json

import numpy as np


def chart(at, key):
    """The figure JSON of the st.plotly_chart with this key, or None if the page has none."""
    found = [c for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}")]
    return json.loads(found[0].proto.spec) if found else None


def array(v) -> np.ndarray:
    """A plotly array: a plain list, or {"dtype", "bdata" (base64), "shape": "R, C"}."""
    if isinstance(v, dict):
        shape = tuple(int(x) for x in str(v.get("shape", "-1")).split(","))
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).reshape(shape)
    return np.asarray(v, dtype=float)
