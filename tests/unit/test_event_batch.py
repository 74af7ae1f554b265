"""headscope.ui.st_internals.EventBatch: a session's script-runner events handed to the event loop
in batches (batch_script_events). Run on a real asyncio loop in its own thread, fed from another
thread as a script runner does: nothing is lost or reordered, everything runs on the loop's
thread, a held event waits for an urgent one (or its hold), and a failing event does not stop
the ones after it."""

import asyncio
import threading

import pytest

from headscope.ui.st_internals import EventBatch


@pytest.fixture
def loop():
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


def settle(loop):
    """Return once the loop has run every call handed to it before this one."""
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop).result(10)


def feed(batch, loop, n, held, ran, start=0):
    """Add n events from a thread of their own (a script runner's), each recording its number
    and the thread it ran on."""
    def record(i):
        return lambda: ran.append((i, threading.get_ident()))

    def run():
        for i in range(n):
            batch.add(record(start + i), held, loop.call_soon_threadsafe)

    t = threading.Thread(target=run)
    t.start()
    t.join(10)


def test_held_events_wait_for_an_urgent_one_then_all_run_in_order_on_the_loop(loop):
    batch, ran = EventBatch(hold=600), []
    feed(batch, loop, 40, held=True, ran=ran)
    settle(loop)
    assert ran == []  # held: no urgent event yet, and the hold is ten minutes
    done = threading.Event()
    batch.add(done.set, False, loop.call_soon_threadsafe)
    assert done.wait(10)
    assert [i for i, _ in ran] == list(range(40))
    assert len({tid for _, tid in ran}) == 1 and ran[0][1] != threading.get_ident()


def test_held_events_run_after_their_hold_without_an_urgent_one(loop):
    batch, ran = EventBatch(hold=0.01), []
    feed(batch, loop, 25, held=True, ran=ran)
    done = threading.Event()
    batch.add(done.set, True, loop.call_soon_threadsafe)  # held too: no urgent event comes
    assert done.wait(10)
    assert [i for i, _ in ran] == list(range(25))


def test_events_from_both_kinds_keep_their_order(loop):
    batch, ran = EventBatch(hold=600), []
    for k in range(6):  # held, urgent, held, ... as a run's elements, status and finish come
        feed(batch, loop, 10, held=k % 2 == 0, ran=ran, start=10 * k)
    done = threading.Event()
    batch.add(done.set, False, loop.call_soon_threadsafe)
    assert done.wait(10)
    assert [i for i, _ in ran] == list(range(60))


def test_a_failing_event_does_not_stop_the_ones_after_it(loop, caplog):
    batch, ran = EventBatch(hold=600), []

    def fail():
        raise ValueError("boom")

    batch.add(lambda: ran.append(1), True, loop.call_soon_threadsafe)
    batch.add(fail, True, loop.call_soon_threadsafe)
    done = threading.Event()
    batch.add(lambda: (ran.append(2), done.set()), False, loop.call_soon_threadsafe)
    assert done.wait(10)
    assert ran == [1, 2]
    assert "a script-runner event failed" in caplog.text
