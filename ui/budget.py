"""The corpus indexes' share of a worker's memory budget (docs/limits.md), and one slot per
worker for building them.

st.cache_data counts its own entries (server.maxCacheDataSize); a corpus index is numpy arrays
shared by every session, so it lives here instead of in st.cache_resource, which counts
nothing: every index is counted by its bytes, the least recently used go first when a new one
needs room, each is dropped CACHE_TTL seconds after its last use, and one that could not fit
at all is refused before any work is done. Only one index is built at a time in a worker
(a queue with one slot): its transient memory is counted once, and the other cores stay free
for the other sessions' reruns. An index evicted while a session still reads it is freed when
that session's run ends.
"""

import os
import threading
import time
from collections import OrderedDict

from .models import CACHE_TTL

MB = 2**20
CORPUS_BUDGET = max(1, int(os.environ.get("HEADSCOPE_CORPUS_MB", "160"))) * MB


class OverBudget(Exception):
    """The work asked for would not fit the budget even alone."""


class ByteBudget:
    """An LRU of values with an `nbytes`, holding at most `budget` bytes for `ttl` seconds."""

    def __init__(self, budget: int, ttl: float = CACHE_TTL):
        self.budget, self.ttl = budget, ttl
        self._items = OrderedDict()  # key -> (value, nbytes, last use)
        self._lock = threading.Lock()  # guards _items
        self._slot = threading.Lock()  # one build at a time

    def used(self) -> int:
        with self._lock:
            return sum(n for _, n, _ in self._items.values())

    def clear(self):
        with self._lock:
            self._items.clear()

    def _expire(self, now: float):
        for key in [k for k, (_, _, t) in self._items.items() if now - t > self.ttl]:
            del self._items[key]

    def _make_room(self, need: int):
        while self._items and sum(n for _, n, _ in self._items.values()) + need > self.budget:
            self._items.popitem(last=False)  # the least recently used

    def get(self, key):
        """The value stored for key (now the most recently used), or None."""
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            if key not in self._items:
                return None
            value, n, _ = self._items.pop(key)
            self._items[key] = (value, n, now)
            return value

    def get_or_build(self, key, need: int, build, waiting=None):
        """The value for key, or build() it in the worker's one slot after making `need` bytes
        of room (OverBudget when need > budget). waiting() is called once if another build
        holds the slot."""
        value = self.get(key)
        if value is not None:
            return value
        if need > self.budget:
            raise OverBudget(f"{need / MB:,.0f} MB needed, {self.budget / MB:,.0f} MB allowed")
        if not self._slot.acquire(blocking=False):
            if waiting is not None:
                waiting()
            self._slot.acquire()
        try:
            value = self.get(key)  # built by the session we waited for
            if value is not None:
                return value
            with self._lock:
                self._make_room(need)
            value = build()
            with self._lock:
                self._make_room(value.nbytes)
                self._items[key] = (value, value.nbytes, time.monotonic())
            return value
        finally:
            self._slot.release()


corpus_indexes = ByteBudget(CORPUS_BUDGET)
