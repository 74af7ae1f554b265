"""The Explorer's browser math (headscope/ui/attention/explore.js) run by node on a payload, for
tests that compare it with numpy, transformers and mha_core."""

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from headscope.ui.attention.component import JS

NODE = shutil.which("node")


def run_js(data: dict, script: str):
    """Run `script` after the component's module with `d` the payload (JSON as the page sends
    it) and `src = exSource(d)`; the script calls out(value) once. Returns that value, parsed.
    Typed arrays become lists, NaN becomes None."""
    prelude = (
        "const d = JSON.parse(process.env.EXPLORE_DATA_FILE ? "
        "(await import('node:fs')).readFileSync(process.env.EXPLORE_DATA_FILE, 'utf8') : '{}');\n"
        "const src = exSource(d);\n"
        "const plain = (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : "
        "(typeof v === 'number' && Number.isNaN(v) ? null : v));\n"
        "const out = (v) => console.log(JSON.stringify(v, (k, x) => plain(k, x)));\n")
    with tempfile.TemporaryDirectory() as tmp:
        module, payload = Path(tmp) / "explore.mjs", Path(tmp) / "data.json"
        payload.write_text(json.dumps(data), encoding="utf-8")
        module.write_text(JS + "\n" + prelude + script + "\n", encoding="utf-8")
        done = subprocess.run([NODE, str(module)], capture_output=True, text=True,
                              env={"EXPLORE_DATA_FILE": str(payload)}, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
