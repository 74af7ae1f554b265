import math

import torch

from mha_core.metrics import entropy, keep_tokens


def test_entropy_known_values():
    T = 5
    uniform = torch.full((T, T), 1 / T)
    one_hot = torch.eye(T)
    assert math.isclose(entropy(uniform).item(), math.log(T), rel_tol=1e-6)
    assert entropy(one_hot).item() == 0
    half = torch.tensor([[0.5, 0.5, 0.0]])
    assert math.isclose(entropy(half).item(), math.log(2), rel_tol=1e-6)
    assert entropy(torch.stack([uniform, one_hot])).shape == (2,)


def test_keep_tokens_renormalises_rows():
    att = torch.tensor([[0.5, 0.25, 0.25],
                        [0.8, 0.1, 0.1],
                        [1.0, 0.0, 0.0]])
    sub = keep_tokens(att, [False, True, True])
    torch.testing.assert_close(sub, torch.tensor([[0.5, 0.5], [0.0, 0.0]]))  # all-[CLS] row stays 0
    assert torch.all(keep_tokens(torch.tensor([[0.0, 1.0], [0.0, 1.0]]), [True, False]) == 0)
