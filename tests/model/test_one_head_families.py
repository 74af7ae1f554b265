"""The one-head experiment on a tiny model of every family (testkit.families' edge variants):
the command gives one row per attention layer run (ALBERT: 8 for 4 layers of 2 inner layers),
all H original heads kept reproduce the layer (R² 1 within 1e-6), and a layer replaced by its
own attention through the encoder's hooks changes no output. The layer's true input and output
come from transformers-checked hook points (tests/model/test_forward_cache.py)."""

import json

import pytest
import torch

import mha_core
from mha_core.one_head.cli import main
from mha_core.one_head.data import batch, layer_io
from mha_core.one_head.measure import head_contributions, output_bias, r2, run_replaced
from testkit.families import CORPUS, save_tiny_family, specs

FAMILIES = [n for n in specs() if n != "electra-discriminator"] + ["llama", "gpt2"]


@pytest.fixture(scope="module")
def tiny_families(tmp_path_factory):
    return {n: save_tiny_family(n, tmp_path_factory.mktemp(n)) for n in FAMILIES}


@pytest.mark.parametrize("name", FAMILIES)
def test_one_row_per_run_layer_and_all_heads_reproduce_the_layer(tiny_families, name,
                                                                 tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(CORPUS) + "\n")
    out = tmp_path / "o.json"
    assert main([str(corpus), "--json", str(out), "--model", str(tiny_families[name]),
                 "--steps", "2", "--seeds", "0", "--heads", "1", "--no-fresh", "--no-cache",
                 "--device", "cpu"]) == 0
    d = json.loads(out.read_text())
    bert = mha_core.load_model(str(tiny_families[name]), device="cpu")
    L = bert.config.num_hidden_layers
    assert [r["layer"] for r in d["layers"]] == list(range(1, L + 1))
    assert d["n_layers"] == L and d["device"] == "cpu" and "plain" in d["fitted_head"]
    for r in d["layers"]:
        # every original head kept. The random ALBERT's shared layers collapse the tokens onto
        # one vector (its last layers' outputs differ between tokens by ~1e-4 of their size),
        # where float32 rounding alone moves R² by ~2e-6; the float64 test below holds 1e-9
        tol = 1e-5 if name == "albert" and r["layer"] > 4 else 1e-6
        assert r["best_k"][-1] == pytest.approx(1, abs=tol)
        assert set(r["fitted"]) == {"1", "H"}
    assert d["layers"][0]["summed"] < 1 - 1e-3  # a layer is not its summed head
    assert "whole_model" in d


@pytest.mark.parametrize("name", FAMILIES)
def test_a_layer_replaced_by_its_own_attention_changes_nothing(tiny_families, name):
    """In float64, so that R² = 1 is tested beyond float32's rounding (a copy of the model:
    the loaded one is float32 and never changed)."""
    bert = mha_core.load_model(str(tiny_families[name]), device="cpu")
    bert.model.double()
    b = batch(bert, CORPUS)
    ios = layer_io(bert, b)
    assert len(ios) == bert.config.num_hidden_layers
    for i, io in enumerate(ios):
        attn = bert.model.layer(i).attn
        with torch.no_grad():
            y = head_contributions(attn, io).sum(0) + output_bias(attn)
        assert io.y.dtype == torch.float64
        assert r2(io.y, y, b.keep) == pytest.approx(1, abs=1e-9)
    intact = run_replaced(bert, b)
    def own_attention(i):
        attn = bert.model.layer(i).attn
        return lambda x, m: attn(x, m)[0]

    own = {i: own_attention(i) for i in range(bert.config.num_hidden_layers)}
    got = run_replaced(bert, b, own)
    torch.testing.assert_close(got, intact, atol=1e-10, rtol=0)
    # and replacing one layer by something else does change the output
    zero = run_replaced(bert, b, {0: lambda x, m: torch.zeros_like(x)})
    assert (zero - intact).abs().max() > 1e-5  # random DeBERTa's last layers saturate
