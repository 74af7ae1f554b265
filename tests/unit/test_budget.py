"""The corpus indexes' byte budget: counted, the least recently used evicted, too large refused
before any work, and one build at a time."""

import threading

import numpy as np
import pytest

from headscope.ui.budget import ByteBudget, OverBudget


def arr(n):
    return np.zeros(n, np.uint8)


def test_counted_and_least_recently_used_evicted():
    cache = ByteBudget(100)
    cache.get_or_build("a", 40, lambda: arr(40))
    cache.get_or_build("b", 40, lambda: arr(40))
    assert cache.get("a") is not None  # a is now the most recent
    cache.get_or_build("c", 40, lambda: arr(40))  # no room for three: b goes
    assert cache.get("b") is None and cache.get("a") is not None and cache.used() == 80
    built = []
    cache.get_or_build("a", 40, lambda: built.append(1) or arr(40))
    assert built == []  # a hit builds nothing


def test_too_large_is_refused_before_building():
    cache = ByteBudget(100)
    with pytest.raises(OverBudget, match="MB allowed"):
        cache.get_or_build("x", 101, lambda: pytest.fail("built"))


def test_expired_entries_go():
    cache = ByteBudget(100, ttl=0)
    cache.get_or_build("a", 10, lambda: arr(10))
    assert cache.get("a") is None and cache.used() == 0


def test_one_build_at_a_time():
    cache, inside, peak, waited = ByteBudget(1000), [0], [0], []
    gate = threading.Event()

    def build():
        inside[0] += 1
        peak[0] = max(peak[0], inside[0])
        gate.wait(5)
        inside[0] -= 1
        return arr(10)

    threads = [threading.Thread(target=cache.get_or_build,
                                args=(k, 10, build, lambda: waited.append(1) or
                                      (len(waited) == 2 and gate.set())))
               for k in "abc"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert peak[0] == 1 and len(waited) == 2 and cache.used() == 30


def test_is_long_skips_encoding_only_where_no_tokenizer_could_reach_the_limit(bundled):
    """is_long answers a short ASCII text without encoding it: the answer must be the
    encoder's own count, for the densest texts just under and over that shortcut's bound."""
    import random

    from headscope.ui.budget import LONG_TOKENS, is_long

    rng = random.Random(3)
    dense = ["!" * n for n in (59, 60, 61, 120, 121)] + [" ".join("a" * n) for n in (60, 64, 65)]
    dense += ["".join(rng.choice("!?.,;:'x1 ") for _ in range(n)) for n in range(40, 200, 7)]
    dense += ["é" * 30, "ﷺ" * 20, "日本語" * 20]  # not ASCII: always encoded
    for text in dense:
        n = len(bundled.encode(text, None).tokens)
        assert is_long(bundled, text) == (n > LONG_TOKENS), (text[:20], n)
        if text.isascii():
            assert n <= 2 * len(text) + 8  # the bound the shortcut relies on
