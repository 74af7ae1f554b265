"""Checks of mha_core.one_head (is one head enough?) on tiny random models: each number is compared
with an independent computation (transformers' weights read by hand, scikit-learn's R², the model's
own forward), never with the code under test."""

import json

import numpy as np
import pytest
import torch
from sklearn.metrics import r2_score

from mha_core.attention import MultiHeadSelfAttention
from mha_core.one_head.cli import main
from mha_core.one_head.data import batch, layer_io, split_sentences
from mha_core.one_head.fit import FitConfig, fit_layer, start_layer
from mha_core.one_head.measure import (
    greedy_heads,
    head_contributions,
    r2,
    run_replaced,
    summed_head_output,
)
from mha_core.one_head.run import Settings, measure_seed

TEXTS = ["the cat sat on the mat .", "i saw the man with a telescope .", "time flies like an arrow",
         "we went to the bank of the river .", "the animal didn ' t cross the street .",
         "fruit flies like a banana !", "hello world", "the man sat with the cat on a mat ."]


@pytest.fixture(scope="module")
def io(tiny):
    b = batch(tiny, TEXTS)
    return b, layer_io(tiny, b)


def test_r2_matches_scikit_learn():
    g = torch.Generator().manual_seed(0)
    y, y_hat = torch.randn(3, 5, 4, generator=g), torch.randn(3, 5, 4, generator=g)
    keep = torch.ones(3, 5, dtype=torch.long)
    keep[0, 3:] = 0
    sel = keep.bool()
    want = r2_score(y[sel].double().numpy(), y_hat[sel].double().numpy(),
                    multioutput="variance_weighted")
    assert r2(y, y_hat, keep) == pytest.approx(want, abs=1e-9)


def test_summed_head_is_the_explorers_single_head_through_value_and_output(tiny):
    """(a): the Explorer's single-head map (bert.attend) times the layer's own value and output
    projections, computed here from the weights by hand."""
    res = tiny.attend(TEXTS[1])
    b = batch(tiny, [TEXTS[1]])
    for layer, io in enumerate(layer_io(tiny, b)):
        block = tiny.model.layer(layer)
        x = res.hidden_states[layer]  # (T, D)
        a = res.single_head[layer]  # (T, T): what the Explorer shows
        sd = block.attn.state_dict()
        v = x @ sd["value.weight"].T + sd["value.bias"]  # (T, D)
        want = (a @ v) @ sd["out.weight"].T + sd["out.bias"]  # (T, D)
        with torch.no_grad():
            got = summed_head_output(block.attn, io)[0]
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_unmodified_layer_has_r2_one(tiny, io):
    b, ios = io
    for i, part in enumerate(ios):
        attn = tiny.model.layer(i).attn
        with torch.no_grad():
            all_heads = head_contributions(attn, part).sum(0) + attn.out.bias
            copy = start_layer(attn, attn.n_heads, "layer")(part.x, part.mask)[0]
        assert r2(part.y, all_heads, b.keep) == pytest.approx(1, abs=1e-6)
        assert r2(part.y, copy, b.keep) == pytest.approx(1, abs=1e-6)


def test_greedy_best_k_rises_to_one(tiny, io):
    b, ios = io
    for i, io_ in enumerate(ios):
        attn = tiny.model.layer(i).attn
        with torch.no_grad():
            part = (head_contributions(attn, io_), attn.out.bias, io_.y, b.keep)
        order, curve = greedy_heads(part, part)
        assert sorted(order) == list(range(attn.n_heads))
        assert np.all(np.diff(curve) >= -1e-9), curve
        assert curve[-1] == pytest.approx(1, abs=1e-6)


def test_a_layer_built_from_one_head_is_fitted_from_a_fresh_start():
    """(c) can reach what one head represents exactly: a random H = 1 layer, fitted from a
    seeded fresh start (not from its own weights), on held-out tokens."""
    torch.manual_seed(1)
    D, T = 4, 5
    true = MultiHeadSelfAttention(D, 1)
    x_fit, x_held = torch.randn(64, T, D), torch.randn(16, T, D)
    with torch.no_grad():
        y_fit, y_held = true(x_fit)[0], true(x_held)[0]
    keep_fit, keep_held = torch.ones(64, T), torch.ones(16, T)
    fitted = start_layer(true, 1, "fresh", seed=0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: more threads only wait for each other
    try:
        curve = fit_layer(fitted, (x_fit, y_fit, keep_fit, None),
                          (x_held, y_held, keep_held, None),
                          FitConfig(steps=800, lr=2e-2, eval_every=200))
    finally:
        torch.set_num_threads(threads)
    assert curve[0][1] < 0.9 and curve[-1][1] >= 0.999, curve


def test_replacing_a_layer_by_its_own_attention_changes_nothing(tiny, io):
    b, _ = io
    with torch.no_grad():
        want = tiny.model(b.input_ids, b.keep, token_type_ids=b.token_type_ids).last_hidden_state
    own = {i: (lambda x, m, a=blk.attn: a(x, m)[0]) for i, blk in enumerate(tiny.model.layers)}
    for replace in ({}, {0: own[0]}, own):
        got = run_replaced(tiny, b, replace)
        sel = b.keep.bool()
        torch.testing.assert_close(got[sel], want[sel], atol=1e-5, rtol=1e-5)


def test_one_seed_end_to_end_on_a_masked_lm(mlm):
    s = Settings(seeds=(0,), fit=FitConfig(steps=3, eval_every=1))
    out = measure_seed(mlm, TEXTS, s, seed=0)
    H = mlm.config.num_attention_heads
    assert out["sentences"] == {"fit": 6, "held_out": 2}
    for row in out["layers"]:
        assert set(row["fitted"]) == {"1", "2", "H"} and len(row["best_k"]) == H
        assert row["best_k"][0] == row["best_head_r2"] and row["fitted"]["H"] > 0.999
        assert [s for s, _ in row["curves"]["1"]] == [0, 1, 2, 3]
        assert row["curves"]["1"][0][1] == pytest.approx(row["summed"], abs=1e-5)  # start = (a)
        assert {"cosine", "mlm_loss", "mlm_top1", "mlm_loss_intact"} <= set(row["downstream"])
    assert {"mlm_loss", "cosine"} <= set(out["whole_model"]["best_original_heads"])


def test_split_is_by_sentence_and_fixed_by_the_seed():
    fit, held = split_sentences(10, 0.3, seed=4)
    assert sorted(fit + held) == list(range(10)) and len(held) == 3
    assert (fit, held) == split_sentences(10, 0.3, seed=4) != split_sentences(10, 0.3, seed=5)


def test_command_line_refuses_a_missing_corpus_with_a_message(tmp_path, capsys):
    assert main([str(tmp_path / "none.conllu"), "--json", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and "Traceback" not in err


def test_command_line_writes_the_issues_schema(tiny_dir, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(TEXTS) + "\n")
    out = tmp_path / "o.json"
    assert main([str(corpus), "--json", str(out), "--model", str(tiny_dir), "--steps", "2",
                 "--seeds", "0", "1", "--no-cache"]) == 0
    d = json.loads(out.read_text())
    assert [r["layer"] for r in d["layers"]] == [1, 2] and d["tokens"]["fit"][0] > 0
    for r in d["layers"]:
        assert {"summed", "best_head", "best_head_r2", "best_k", "fitted"} <= set(r)
        assert 1 <= r["best_head"] <= 4 and set(r["fitted"]) == {"1", "2", "H"}
        assert r["spread"]["fitted"]["1"] >= 0
