"""The Explorer's browser code (explore.js, causal.js, run by node) on a tiny random Llama's
payload: the cells it draws as not attendable (isBlocked: the payload's `causal` flag, key after
query) are exactly the cells whose weight is 0 because the model could not look there, in every
map it derives (each head, the summed head, the mean, by norm) and in both views (tokens, and
whole words merged from byte-level BPE pieces); on and below the diagonal every token may look,
and the tiny model's weights there are never exactly 0."""

import json

import pytest

from headscope.ui import models
from headscope.ui.explorer_cache import explorer_data
from testkit.explore_js import NODE, run_js
from testkit.families import save_tiny_family
from tests.conftest import require

TEXT = "The animal didn't cross the street because it was too tired."
SCRIPT = """
const res = [];
for (const words of [false, true]) for (const norm of [false, true]) {
  const sv = shownView(d, words, false), G = sv.G, n = G * G;
  for (const layer of d.sent) {
    const lm = layerMaps(src, sv, layer, norm);
    let blocked = 0, blockedNonzero = 0, openZero = 0;
    for (let m = 0; m < d.heads + 2; m++) for (let q = 0; q < G; q++) for (let k = 0; k < G; k++) {
      const w = lm.maps[m * n + q * G + k];
      if (isBlocked(d, q, k)) { blocked++; if (w !== 0) blockedNonzero++; }
      else if (w === 0) openZero++;
    }
    res.push({ words, norm, layer, G, blocked, blockedNonzero, openZero });
  }
}
out(res);
"""


@pytest.fixture(scope="module")
def payload(tmp_path_factory):
    require(NODE is not None, "node is not installed (apt-get install nodejs; .ci/run does)")
    path = save_tiny_family("llama", tmp_path_factory.mktemp("llama") / "llama")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HEADSCOPE_MODELS", f"tiny-llama-js={path}")
        data = explorer_data("tiny-llama-js", TEXT, None, 0, ())
        words = models.get_bert("tiny-llama-js")[0].attend(TEXT).words()[0]
    return json.loads(json.dumps(data)), words


def test_not_attendable_cells_are_the_causal_zeros_in_every_view(payload):
    d, words = payload
    assert d["causal"] is True
    T, H = len(d["tokens"]), d["heads"]
    assert len(words) < T  # whole words merge pieces here
    got = run_js(d, SCRIPT)
    assert len(got) == 2 * 2 * d["layers"]
    for r in got:
        G = len(words) if r["words"] else T
        assert r["G"] == G
        assert r["blocked"] == (H + 2) * G * (G - 1) // 2, r  # every map's upper triangle
        assert r["blockedNonzero"] == 0, r  # none of them holds weight
        assert r["openZero"] == 0, r  # and no cell a token may see is drawn as blocked


def test_an_encoders_payload_blocks_nothing(bundled):
    require(NODE is not None, "node is not installed")
    d = json.loads(json.dumps(explorer_data(models.BUNDLED, TEXT, None, 0, ())))
    assert d["causal"] is False
    got = run_js(d, SCRIPT)
    assert all(r["blocked"] == 0 for r in got)
