"""The multi-head advantage on the lab's task, at one fixed seed.

A seed sweep checked this setting (600 steps, d_model 16) over 8 seeds before this test was
written (docs/performance.md, "The labs"): 2 heads reached >= 0.999 on every seed, one head
0.26..0.80, the margin was at least +0.20 on every seed (mean +0.43). The test asks for less
than the worst seed gave.
"""

import pytest

from mha_core.toy import LabConfig, train

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.slow  # trains two toy models: seconds
def test_two_heads_beat_one_head_at_the_same_width():
    cfg = LabConfig(seed=0, steps=600)
    one = train(LabConfig(seed=0, steps=600, n_heads=1))
    two = train(cfg)
    assert one.config.d_model == two.config.d_model
    assert one.params == two.params  # same width, same parameter count
    assert two.final_accuracy >= 0.95
    assert two.final_accuracy - one.final_accuracy >= 0.15
