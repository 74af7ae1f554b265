"""The attention component's JavaScript parses (node --check on the module exactly as
headscope/ui/attention/component.py joins it), so a syntax slip fails here and not only in a
browser."""

import json
import shutil
import subprocess

from headscope.ui.attention.component import JS
from tests.conftest import require


def test_the_component_module_parses(tmp_path):
    node = shutil.which("node")
    require(node is not None, "node is not installed (apt-get install nodejs; .ci/run does)")
    module = tmp_path / "attention.mjs"
    module.write_text(JS, encoding="utf-8")
    done = subprocess.run([node, "--check", str(module)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "export default function" in JS


def test_raw_norms_are_written_as_pythons_3g(tmp_path):
    """The grid's hover prints a raw norm with g3, which must read as "%.3g" does (the atlas's
    hover, and the tests' expected strings)."""
    node = shutil.which("node")
    require(node is not None, "node is not installed (apt-get install nodejs; .ci/run does)")
    values = [4.5612, 4.5, 0.0123456, 0.00012345, 1.23e-5, 9.996, 99.95, 123.4, 1234.5, 0.0,
              -2.345, 1e-9, 0.1, 100.0]
    module = tmp_path / "g3.mjs"
    module.write_text(JS + f"\nconsole.log(JSON.stringify({json.dumps(values)}.map(g3)));\n",
                      encoding="utf-8")
    done = subprocess.run([node, str(module)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [f"{v:.3g}" for v in values]
