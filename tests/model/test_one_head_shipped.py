"""The shipped results (mha_core/data/one_head_*.json) are what the command makes: one layer of one
seed regenerated with the shipped settings equals the shipped per-seed numbers, and so the
shipped mean within the stated seed spread."""

import json

import pytest
import torch

from headscope.ui.models import BUNDLED
from headscope.ui.one_head_results import SHIPPED
from mha_core.one_head import FitConfig, Settings, read_corpus
from mha_core.one_head.run import measure_seed
from mha_core.treebank import DEFAULT_TREEBANK

LAYER = 2  # one layer of the six keeps the test to a minute on one thread


@pytest.mark.slow
def test_command_regenerates_the_shipped_layer(bundled):
    shipped = json.loads(SHIPPED[BUNDLED].read_text())
    s, seed = shipped["settings"], shipped["settings"]["seeds"][0]
    settings = Settings(sentences=s["sentences"], held_out=s["held_out"], seeds=(seed,),
                        heads=tuple(s["heads"]), fresh_full=s["fresh_full"],
                        max_tokens=s["max_tokens"], layers=(LAYER,), fit=FitConfig(**s["fit"]))
    threads = torch.get_num_threads()
    torch.set_num_threads(shipped["threads"])
    try:
        texts = read_corpus(DEFAULT_TREEBANK)[:settings.sentences]
        new = measure_seed(bundled, texts, settings, seed)
    finally:
        torch.set_num_threads(threads)
    assert new["tokens"] == shipped["per_seed"][0]["tokens"]
    got = new["layers"][0]
    was = shipped["per_seed"][0]["layers"][LAYER - 1]
    mean, spread = shipped["layers"][LAYER - 1], shipped["layers"][LAYER - 1]["spread"]
    assert got["best_head"] == was["best_head"] and got["greedy_order"] == was["greedy_order"]
    for key in ("summed", "best_head_r2"):
        assert got[key] == pytest.approx(was[key], abs=1e-4)
        assert abs(got[key] - mean[key]) <= spread[key] + 1e-4
    for h, r2 in got["fitted"].items():  # training in float32: a little looser
        assert r2 == pytest.approx(was["fitted"][h], abs=5e-3)
        assert abs(r2 - mean["fitted"][h]) <= spread["fitted"][h] + 5e-3
    assert got["best_k"] == pytest.approx(was["best_k"], abs=1e-4)
