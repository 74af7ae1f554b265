"""The three analyses on a random checkpoint of bert-base's shape (12 layers x 12 heads, hidden
768, built here with transformers; no download): syntax scores, norms against transformers,
and a head's query/key space."""

import pytest
import torch

import mha_core
from mha_core import norms, qk_space, syntax
from mha_core.treebank import DEFAULT_TREEBANK, read_treebank
from testkit.models import hf_reference

pytestmark = pytest.mark.slow  # seconds of model runs: make test runs it, test-fast not


@pytest.fixture(scope="module")
def base(base_dir):
    return mha_core.load_model(str(base_dir))


def test_syntax_scores_every_head(base):
    sentences = read_treebank(DEFAULT_TREEBANK)[:40]  # enough for bert-base's shape, quickly
    scores = syntax.score_treebank(base, sentences)
    assert scores.correct.shape[1:] == (12, 12, 2)
    # the tiny vocabulary spells unknown words letter by letter; the model has 64 positions
    assert scores.used + scores.skipped_long == len(sentences) and scores.used > 20
    for row in scores.rows(min_arcs=5):
        assert 1 <= row["layer"] <= 12 and 1 <= row["head"] <= 12 and 0 <= row["acc"] <= 1


def test_norms_match_transformers(base):
    text = "the man saw a cat with a telescope ."
    res = base.attend(text)
    ours = norms.result_norm_maps(base, res)  # (12, 12, T, T)
    hf = hf_reference(base.path)
    enc = base.encode(text)
    with torch.no_grad():
        out = hf(input_ids=enc.input_ids[None], output_attentions=True,
                 output_hidden_states=True)
    layer, K = hf.encoder.layer[7], 64
    v = layer.attention.self.value(out.hidden_states[7][0])  # (T, 768)
    w_o = layer.attention.output.dense.weight
    for h in (0, 5, 11):
        f = v[:, h * K:(h + 1) * K] @ w_o[:, h * K:(h + 1) * K].T  # (T, 768)
        want = (out.attentions[7][0, h][:, :, None] * f[None]).norm(dim=-1)  # (T, T)
        # random weights of std 0.3 make activations large: float32 rounding differences
        # between the two encoders grow over 7 layers to ~2e-4 of a norm
        torch.testing.assert_close(ours[7, h], want, rtol=1e-3, atol=1e-4)


def test_query_key_space(base):
    space = qk_space.qk_vectors(base, ["the cat sat on the mat .", "hello world"], 11, 11)
    assert space.queries.shape == (len(space.tokens), 64)
    xy = qk_space.project(*qk_space.normalise(space.queries, space.keys), "t-SNE")
    assert xy.shape == (2 * len(space.tokens), 2)
