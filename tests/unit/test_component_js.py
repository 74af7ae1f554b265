"""The attention component's JavaScript parses (node --check on the module exactly as
headscope/ui/attention/component.py joins it), so a syntax slip fails here and not only in a
browser."""

import json
import shutil
import subprocess

from headscope.ui.attention.bundle import streamlit_js
from tests.conftest import require

JS = streamlit_js()  # the component's modules joined into one (bundle.py)


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


def test_every_module_links_and_loads_as_an_es_module(tmp_path):
    """Each module of js/ imported by node as the browser imports it (a module graph, no
    bundle): an import of a name its module does not export fails at link time, and a module
    whose top-level code reads a name it neither declares nor imports fails when it runs."""
    from headscope.ui.attention import bundle

    node = shutil.which("node")
    require(node is not None, "node is not installed (apt-get install nodejs; .ci/run does)")
    for name in bundle.MODULES:
        (tmp_path / name).write_text(bundle.source(name), encoding="utf-8")
    (tmp_path / "package.json").write_text('{"type": "module"}')  # .js files are modules here
    script = ("for (const m of process.argv.slice(1)) await import('./' + m);"
              "console.log('loaded');")
    done = subprocess.run([node, "--input-type=module", "-e", script, *bundle.MODULES],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "loaded", done.stderr
