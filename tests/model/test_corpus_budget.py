"""The largest corpus the Corpus search page takes (2,000 lines of ~140 words, each read up to
128 tokens) makes an index that fits a worker's corpus budget, and the budget holds an index at
the bytes index_bytes() says, the bytes it was admitted with.

What building it costs in RSS depends on the machine (its allocator, libraries and load):
`bench/worker_memory.py corpus-index` measures that against the plan in docs/limits.md."""

import numpy as np

from headscope.ui import budget
from mha_core.corpus_search import build_index, encode_lines, index_bytes, indexed_tokens

WORDS = ("the old man saw a small bird near the river bank with great care because it was late "
         "in the morning after the storm").split()


def largest_corpus() -> list:
    rng = np.random.default_rng(0)
    return [" ".join(rng.choice(WORDS, 140)) for _ in range(2000)]


def test_the_largest_corpus_index_fits_the_corpus_budget(bundled):
    D, H = bundled.config.hidden_size, bundled.config.num_attention_heads
    encs = encode_lines(bundled, largest_corpus(), 128)  # tokenising only: no forward pass
    tokens = indexed_tokens(encs)
    assert tokens == 2000 * 126  # 128 tokens a line, [CLS] and [SEP] not indexed
    assert index_bytes(tokens, D, H) <= budget.CORPUS_BUDGET


def test_the_budget_holds_an_index_at_the_bytes_it_was_admitted_with(bundled):
    lines = largest_corpus()[:40]
    encs = encode_lines(bundled, lines, 128)
    need = index_bytes(indexed_tokens(encs), bundled.config.hidden_size,
                       bundled.config.num_attention_heads)
    indexes = budget.ByteBudget(budget.CORPUS_BUDGET)  # the worker's, fresh
    index = indexes.get_or_build("k", need, lambda: build_index(
        bundled, lines, 0, max_length=128, encs=encs))
    assert len(index) == 40 * 126
    assert index.nbytes == need == indexes.used() <= budget.CORPUS_BUDGET
