"""The Training lab page under AppTest: renders, and a small-steps run finishes and shows its
curves; a second visit gets the cached result."""

import base64
import json

import numpy as np
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


def titles(at):
    return [json.loads(c.proto.spec)["layout"].get("title", {}).get("text", "")
            for c in at.get("plotly_chart")]


def array(v):
    """Plotly 6+ writes numpy arrays as {"dtype", "bdata"} (base64) in its JSON."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])
    return np.asarray(v)


def lab_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("pages/training_lab.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_lab_renders_trains_small_steps_and_caches():
    at = lab_page()
    assert any("Train" in b.label for b in at.button)
    at.toggle(key="lab_small_steps").set_value(True).run()
    at.number_input(key="lab_seed").set_value(917).run()  # a seed no other test trains
    at.button(key="train_heads").click().run()
    assert not at.exception, [e.value for e in at.exception]
    shown = titles(at)
    for t in ("training loss", "held-out accuracy (both answers)",
              "head diversity over training"):
        assert t in shown
    loss = next(c for c in at.get("plotly_chart")
                if json.loads(c.proto.spec)["layout"].get("title", {}).get("text")
                == "training loss")
    lines = json.loads(loss.proto.spec)["data"]
    assert {ln["name"] for ln in lines} == {"1 head", "2 heads"}
    assert all(array(ln["x"])[-1] == 30 for ln in lines)  # the small-steps run went to the end

    at.button(key="train_symmetry").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "largest weight difference between two heads" in titles(at)
    assert any("Identical heads stay identical" in m.value for m in at.markdown)

    again = lab_page()  # a new session: the runs come from the cache, no button needed
    again.toggle(key="lab_small_steps").set_value(True).run()
    again.number_input(key="lab_seed").set_value(917).run()
    assert "training loss" in titles(again)
    assert not again.exception
