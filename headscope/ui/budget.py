"""The corpus indexes' share of a worker's memory budget (docs/limits.md), and one slot per
worker for the heavy work a visitor can start.

The heavy-work slot: a model run of a long text, a Head lab ranking, a treebank's scores, a
query/key projection or a corpus index holds it while it runs, and another session asking for
heavy work waits (with a message). On a worker's one core two such runs take as long one after
the other as together, but together they hold two runs' transient memory (docs/limits.md, "The
1.5 GB transient"). Short texts never wait. The slot is re-entrant: heavy work inside heavy
work takes it once.

Corpus indexes are numpy arrays shared by every session, so they live here, counted by their bytes
(st.cache_resource counts nothing): least recently used first out, dropped HEADSCOPE_CACHE_TTL
seconds after their last use, refused before any work when one could not fit at all, built one at a
time per worker. An index evicted while a session still reads it is freed when that session's run
ends.
"""

import threading
import time
from collections import OrderedDict, deque
from contextlib import contextmanager

from headscope.settings import settings

MB = 2**20
CORPUS_BUDGET = settings().corpus_mb * MB
def slot_script_runs():
    from .st_internals import slot_script_runs as install

    install(run_slot)


_HEAVY = threading.RLock()  # one heavy computation at a time per worker (re-entrant)
LONG_TOKENS = 128  # a model run of more tokens than this takes the slot (its maps grow as T²)


@contextmanager
def heavy(waiting=None, done=None):
    """Hold the worker's heavy-work slot. waiting() is called once if another session holds
    it, done() once it is ours (to remove what waiting() showed). The script-run slot is given
    back meanwhile (off_run_slot): heavy work never holds up the other sessions' reruns."""
    with off_run_slot():
        if not _HEAVY.acquire(blocking=False):
            if waiting is not None:
                waiting()
            _HEAVY.acquire()
            if done is not None:
                done()
        try:
            yield
        finally:
            _HEAVY.release()


# Script runs, one at a time per worker (headscope.ui.st_internals.slot_script_runs). Each
# session's run is a thread of the worker's one Python process, which runs Python on one core
# at a time (the GIL): with many runs at once every run takes as long as all of them, and the
# event loop that sends the pages out waits behind them (docs/capacity.md measures both). A
# queue of short runs is waited out; a run that has held its slot for RUN_SLOT_HOLD seconds is
# not (the runs behind it go on without a slot); heavy work gives its slot back while it runs.
RUN_SLOTS = settings().run_slots
RUN_SLOT_HOLD = 1.0  # seconds


class RunSlots:
    """n slots, handed out first come, first served: a freed slot goes straight to the run
    that has waited longest (a waiter polling a plain semaphore can lose its turn to newer runs
    for as long as they keep coming)."""

    def __init__(self, n: int):
        self.lock = threading.Lock()
        self.free = n
        self.queue = deque()  # (thread id, Event) of the runs waiting, oldest first
        self.holders = {}  # thread id -> when its run got its slot (time.monotonic)

    def take(self, hold: float) -> bool:
        """Wait for a slot, True once this thread has it; False (go on without one) once
        every slot has been held for `hold` seconds by the same runs."""
        me = threading.get_ident()
        with self.lock:
            if self.free and not self.queue:
                self.free -= 1
                self.holders[me] = time.monotonic()
                return True
            turn = threading.Event()
            self.queue.append((me, turn))
        while not turn.wait(0.1):
            with self.lock:
                if turn.is_set():
                    break  # handed over meanwhile
                newest = max(self.holders.values(), default=None)  # every slot's holder
                if newest is not None and time.monotonic() - newest > hold:
                    self.queue.remove((me, turn))
                    return False
        return True

    def give(self):
        """This thread's slot, to the longest waiter or back to the free ones."""
        with self.lock:
            self.holders.pop(threading.get_ident(), None)
            if self.queue:
                nxt, turn = self.queue.popleft()
                self.holders[nxt] = time.monotonic()
                turn.set()
            else:
                self.free += 1


_RUNS = RunSlots(RUN_SLOTS)
_this_run = threading.local()  # .held: this thread's run holds a slot


@contextmanager
def run_slot():
    """A script run's slot, held while the run goes on (see RunSlots.take). Inside a run that
    holds one already (the hook installed twice) it is that slot: waiting for it would have
    lasted RUN_SLOT_HOLD and then lost it for good."""
    if getattr(_this_run, "held", False):
        yield
        return
    _this_run.held = _RUNS.take(RUN_SLOT_HOLD)
    try:
        yield
    finally:
        if _this_run.held:
            _RUNS.give()
        _this_run.held = False


@contextmanager
def off_run_slot():
    """Give this thread's run slot back for a while (long work that must not hold up the other
    sessions), and take one again after (waiting as a run does)."""
    held = getattr(_this_run, "held", False)
    if held:
        _this_run.held = False
        _RUNS.give()
    try:
        yield
    finally:
        if held:
            _this_run.held = _RUNS.take(RUN_SLOT_HOLD)


@contextmanager
def heavy_here(what: str):
    """heavy() with a note on the page while it waits (in a slot of its own, emptied after:
    inside a cached function, only elements created there are replayed)."""
    import streamlit as st

    from . import style

    slot = st.empty()
    with heavy(lambda: slot.info(f"{what}: another visitor's long computation runs on this "
                                 "server; yours starts when it is done.", icon=style.ICON_WAIT),
               slot.empty):
        yield


def is_long(bert, text: str, text_pair: str | None = None) -> bool:
    """More than LONG_TOKENS tokens. A short ASCII text is not encoded: no tokenizer makes more
    than two tokens of an ASCII character (byte-level BPE and WordPiece at most one,
    SentencePiece a piece and its word-start mark), plus the special tokens, and normalising
    never lengthens ASCII (NFKC can: one ligature becomes 18 letters)."""
    both = text + (text_pair or "")
    if both.isascii() and 2 * len(both) + 8 <= LONG_TOKENS:
        return False
    return len(bert.encode(text, text_pair).tokens) > LONG_TOKENS


def return_freed_memory():
    """Fix glibc's mmap threshold at its default 128 KB, so that large blocks are mapped and
    given back when freed. glibc otherwise raises it each time a large block is freed, and
    what later tensors free stays in the process's RSS (docs/limits.md, "Freed memory goes
    back"). The same as MALLOC_MMAP_THRESHOLD_=131072; a no-op off glibc."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        pass


class OverBudget(Exception):
    """The work asked for would not fit the budget even alone."""


class ByteBudget:
    """An LRU of values with an `nbytes`, holding at most `budget` bytes for `ttl` seconds."""

    def __init__(self, budget: int, ttl: float | None = None):
        self.budget, self.ttl = budget, settings().cache_ttl if ttl is None else ttl
        self._items = OrderedDict()  # key -> (value, nbytes, last use)
        self._lock = threading.Lock()  # guards _items

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
        with heavy(waiting):
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


corpus_indexes = ByteBudget(CORPUS_BUDGET)
