"""Fixtures of the pure-math tests."""

import pytest
import torch


@pytest.fixture(scope="module")
def one_thread():
    """Tiny models train several times faster on one thread when the CPU is shared (the
    results are the same); restore the setting afterwards."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
