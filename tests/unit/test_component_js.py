"""The attention component's JavaScript parses (node --check on the module exactly as
ui/attention/component.py joins it), so a syntax slip fails here and not only in a browser."""

import shutil
import subprocess

import pytest

from ui.attention.component import JS


def test_the_component_module_parses(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the browser tests still load the module)")
    module = tmp_path / "attention.mjs"
    module.write_text(JS, encoding="utf-8")
    done = subprocess.run([node, "--check", str(module)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "export default function" in JS
