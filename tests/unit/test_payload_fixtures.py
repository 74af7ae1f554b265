"""The browser's decoder (core.js `decode`, lines.js's reading of a lines payload) and its Python
twin (testkit.payloads.unpack, unpack_lines, which the app tests read payloads with) against the
same hand-made payloads (tests/fixtures/payloads.json: bytes written one by one, the expected values
by plain arithmetic), so that neither can drift from the other. The JS runs in node, which
.ci/run installs (Debian's nodejs)."""

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from headscope.ui.attention.bundle import streamlit_js
from testkit.payloads import unpack, unpack_lines
from tests.conftest import require

JS = streamlit_js()  # the component's modules joined into one (bundle.py)

FIXTURES = json.loads((Path(__file__).parents[1] / "fixtures" / "payloads.json").read_text())
ARRAYS = FIXTURES["arrays"]
# What node prints: every array decoded, and every head's lines of the lines payload as
# eachLine(v, layer, head, ...) hands them to the drawing (threshold 0: all of them)
READ_THEM = """
const fx = JSON.parse(process.argv[2]);
const arrays = Object.fromEntries(Object.entries(fx.arrays).map(
  ([name, a]) => [name, Array.from(decode(a.payload))]));
const v = { data: { ...fx.lines.payload, tokens: [], segments: null }, threshold: 0 };
linesData(v);
const lines = {};
for (let l = 0; l < v.data.layers; l++) for (let h = 0; h < v.data.heads; h++) {
  const got = [];
  eachLine(v, l, h, 1e9, (q, k, w) => got.push([q, k, w]));
  lines[`${l},${h}`] = got;
}
console.log(JSON.stringify({ arrays, lines }));
"""


@pytest.fixture(scope="module")
def from_node(tmp_path_factory):
    node = shutil.which("node")
    require(node is not None, "node is not installed (apt-get install nodejs; .ci/run does)")
    module = tmp_path_factory.mktemp("js") / "read.mjs"
    module.write_text(JS + "\n" + READ_THEM, encoding="utf-8")
    done = subprocess.run([node, str(module), json.dumps(FIXTURES)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("name", list(ARRAYS))
def test_python_decodes_each_array_as_expected(name):
    a = ARRAYS[name]
    got = unpack(a["payload"])
    assert list(got.shape) == a["payload"]["shape"]
    np.testing.assert_allclose(got.ravel(), np.asarray(a["expect"], dtype=np.float64),
                               rtol=1e-7, atol=0)


@pytest.mark.parametrize("name", list(ARRAYS))
def test_the_browser_decodes_each_array_as_expected(from_node, name):
    np.testing.assert_allclose(np.asarray(from_node["arrays"][name], dtype=np.float64),
                               np.asarray(ARRAYS[name]["expect"], dtype=np.float64),
                               rtol=1e-7, atol=0)


def test_both_read_the_lines_payload_as_expected(from_node):
    expect = FIXTURES["lines"]["expect"]
    python = {f"{layer},{h}": [[int(q), int(k), float(w)] for q, k, w in zip(*entries)]
              for (layer, h), entries in unpack_lines(FIXTURES["lines"]["payload"]).items()}
    for key, want in expect.items():
        for reader in (python[key], from_node["lines"][key]):
            assert [e[:2] for e in reader] == [e[:2] for e in want], key
            np.testing.assert_allclose([e[2] for e in reader], [e[2] for e in want], rtol=1e-7)
