"""The training lab's task, model and the symmetry experiment."""

from dataclasses import replace

import numpy as np
import pytest
import torch

from mha_core import toy
from mha_core.toy import IGNORE, LabConfig

N_STEPS = 40  # short: the symmetry claims hold (or fail) from the first steps
SYM = LabConfig(n_heads=4, steps=N_STEPS, eval_every=10, eval_size=128)


pytestmark = pytest.mark.usefixtures("one_thread")


def test_task_targets_follow_the_rules():
    cfg = LabConfig(seq_len=6, n_digits=5)
    digits, marked, targets = toy.make_batch(cfg, 50, torch.Generator().manual_seed(1))
    assert digits.shape == marked.shape == (50, 6) and targets.shape == (50, 6, 2)
    assert (marked.sum(1) == 1).all()
    for b in range(50):
        m = int(marked[b].nonzero()[0, 0])
        assert targets[b, 0].tolist() == [IGNORE, IGNORE]
        for i in range(1, 6):
            assert targets[b, i].tolist() == [int(digits[b, i - 1]), int(digits[b, m])]


def test_config_is_checked():
    with pytest.raises(ValueError):
        LabConfig(d_model=10, n_heads=4)
    with pytest.raises(ValueError):
        LabConfig(init="identical", mode="narrow")
    with pytest.raises(ValueError):
        LabConfig(mode="sideways")
    with pytest.raises(ValueError):
        LabConfig(attn_dropout=1.0)


def test_model_shapes_and_attention_rows():
    cfg = LabConfig(n_heads=4)
    model = toy.build_model(cfg)
    digits, marked, _ = toy.make_batch(cfg, 3, torch.Generator().manual_seed(0))
    logits, probs = model(digits, marked)
    assert logits.shape == (3, cfg.seq_len, 2, cfg.n_digits)
    assert probs.shape == (3, 4, cfg.seq_len, cfg.seq_len)
    torch.testing.assert_close(probs.sum(-1), torch.ones(3, 4, cfg.seq_len))


def test_identical_init_makes_every_head_a_copy():
    model = toy.build_model(replace(SYM, init="identical"))
    w = toy.head_weights(model.attn)  # (H, P)
    assert (w == w[:1]).all()
    # ... and it really is a copy of head 0 of the random init (nothing else changed)
    rnd = toy.build_model(SYM)
    torch.testing.assert_close(w[0], toy.head_weights(rnd.attn)[0])
    torch.testing.assert_close(model.digit.weight, rnd.digit.weight)


def test_identical_heads_get_identical_gradients():
    cfg = replace(SYM, init="identical")
    model = toy.build_model(cfg)
    digits, marked, targets = toy.make_batch(cfg, 32, torch.Generator().manual_seed(0))
    logits, _ = model(digits, marked)
    toy.loss_fn(logits, targets).backward()
    H, K, D = 4, cfg.d_model // 4, cfg.d_model
    for lin in (model.attn.query, model.attn.key, model.attn.value):
        g = lin.weight.grad.view(H, K, D)  # (H, K, D)
        assert g.abs().max() > 0
        torch.testing.assert_close(g, g[:1].expand_as(g), rtol=0, atol=1e-6)
    g = model.attn.out.weight.grad.view(D, H, K)  # (D, H, K)
    torch.testing.assert_close(g, g[:, :1].expand_as(g), rtol=0, atol=1e-6)


def test_identical_heads_stay_identical_for_n_steps():
    r = toy.train(replace(SYM, init="identical"))
    assert r.steps[-1] == N_STEPS
    assert r.loss[-1] < r.loss[0]  # it did train
    assert np.all(r.max_head_gap <= 1e-6)
    assert np.all(r.map_distance <= 1e-6)
    np.testing.assert_allclose(r.weight_similarity[-1], 1.0, atol=1e-6)


def test_random_init_heads_differ():
    r = toy.train(SYM)
    assert r.max_head_gap[-1] > 1e-2
    assert r.diversity[-1] > 1e-2


def test_attention_dropout_breaks_the_symmetry():
    r = toy.train(replace(SYM, init="identical", attn_dropout=0.1))
    assert r.max_head_gap[0] == 0.0  # it started as copies
    assert r.max_head_gap[-1] > 1e-4  # and the copies drifted apart
    assert r.diversity[-1] > 1e-4


def test_runs_are_reproducible_and_use_no_global_rng():
    cfg = LabConfig(steps=10, eval_every=5, eval_size=64, attn_dropout=0.1)
    torch.manual_seed(0)
    a = toy.train(cfg)
    torch.manual_seed(123)  # the global RNG must not matter
    b = toy.train(cfg)
    np.testing.assert_array_equal(a.loss, b.loss)
    np.testing.assert_array_equal(a.example_maps, b.example_maps)


def test_pairwise_distance_and_diversity():
    p = torch.zeros(1, 2, 3, 3)
    p[0, 0, :, 0] = 1  # head 1 looks at token 0
    p[0, 1, :, 1] = 1  # head 2 looks at token 1
    d = toy.pairwise_map_distance(p)
    torch.testing.assert_close(d, torch.tensor([[0.0, 1.0], [1.0, 0.0]]))
    assert toy.diversity(d) == pytest.approx(1.0)
    assert toy.diversity(torch.zeros(1, 1)) == 0.0


@pytest.mark.parametrize("mode", ["wide", "narrow", "random"])
def test_each_mode_trains_and_counts_its_parameters(mode):
    r = toy.train(LabConfig(mode=mode, steps=5, eval_every=5, eval_size=64))
    model = toy.build_model(LabConfig(mode=mode))
    assert r.params == sum(p.numel() for p in model.parameters())
    assert r.attn_params == sum(p.numel() for p in model.attn.parameters())
    assert np.isfinite(r.loss).all()
