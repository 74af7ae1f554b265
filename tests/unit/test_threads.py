"""headscope.ui.threads: torch's intra-op threads in the app come from HEADSCOPE_TORCH_THREADS
(default 1), and the setting is seen by every thread (a script run is a thread of the server)."""

import threading

import pytest
import torch

from headscope.ui import threads


@pytest.fixture(autouse=True)
def keep_torch_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("env, expected", [(None, 1), ("2", 2), ("0", 1), ("many", 1)])
def test_threads_from_env(monkeypatch, env, expected):
    if env is None:
        monkeypatch.delenv("HEADSCOPE_TORCH_THREADS", raising=False)
    else:
        monkeypatch.setenv("HEADSCOPE_TORCH_THREADS", env)
    assert threads.limit() == expected
    assert torch.get_num_threads() == expected
    seen = []
    t = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
    t.start()
    t.join()
    assert seen == [expected]
