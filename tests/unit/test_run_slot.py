"""headscope.ui.budget's script-run slot (one run at a time per worker): a second run waits for the
first, a run that has held its slot for RUN_SLOT_HOLD seconds is not waited for, and heavy work
gives the slot back while it runs (nested heavy work once) and takes it again after. Threads
stand for the sessions' script runs."""

import threading

import pytest

from headscope.ui import budget


def in_thread(body):
    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t


@pytest.fixture(autouse=True)
def one_slot(monkeypatch):
    monkeypatch.setattr(budget, "_RUNS", budget.RunSlots(1))


def hold_a_run(entered, leave, held=None, work=None):
    def body():
        with budget.run_slot():
            if held is not None:
                held.append(budget._this_run.held)
            entered.set()
            if work is not None:
                work()
            assert leave.wait(30)
    return body


def test_a_second_run_waits_for_the_first():
    a_in, a_leave, b_in, b_leave = (threading.Event() for _ in range(4))
    held = []
    a = in_thread(hold_a_run(a_in, a_leave, held))
    assert a_in.wait(10)
    b = in_thread(hold_a_run(b_in, b_leave, held))
    assert not b_in.wait(0.5)  # the slot is a's (RUN_SLOT_HOLD is 1 s: b still waits)
    a_leave.set()
    assert b_in.wait(10)
    b_leave.set()
    a.join(10)
    b.join(10)
    assert held == [True, True]


def test_a_long_run_is_not_waited_for(monkeypatch):
    monkeypatch.setattr(budget, "RUN_SLOT_HOLD", 0.2)
    a_in, a_leave, b_in, b_leave = (threading.Event() for _ in range(4))
    held = []
    a = in_thread(hold_a_run(a_in, a_leave, held))
    assert a_in.wait(10)
    b = in_thread(hold_a_run(b_in, b_leave, held))
    assert b_in.wait(10)  # while a still holds the slot
    assert held == [True, False]
    a_leave.set()
    b_leave.set()
    a.join(10)
    b.join(10)
    assert budget._RUNS.free == 1 and not budget._RUNS.holders  # given back once, by a alone


def test_heavy_work_gives_the_slot_back_and_takes_it_again():
    a_in, a_leave, in_heavy, heavy_leave = (threading.Event() for _ in range(4))
    b_in, b_leave = threading.Event(), threading.Event()
    after = []

    def heavy_work():
        with budget.heavy(), budget.heavy():  # nested: the slot is given back once
            in_heavy.set()
            assert heavy_leave.wait(30)
        after.append(budget._this_run.held)

    a = in_thread(hold_a_run(a_in, a_leave, work=heavy_work))
    assert in_heavy.wait(10)
    held = []
    b = in_thread(hold_a_run(b_in, b_leave, held))
    assert b_in.wait(10) and held == [True]  # a's slot, while a does heavy work
    heavy_leave.set()
    b_leave.set()
    b.join(10)
    a_leave.set()
    a.join(10)
    assert after == [True]  # a took a slot again after its heavy work
    assert budget._RUNS.free == 1 and not budget._RUNS.holders


def test_slots_go_to_the_runs_in_the_order_they_came():
    first_in, first_leave = threading.Event(), threading.Event()
    order, lock = [], threading.Lock()
    a = in_thread(hold_a_run(first_in, first_leave))
    assert first_in.wait(10)
    waiters = []
    for k in range(5):  # each queued before the next starts
        def run(k=k):
            with budget.run_slot():
                with lock:
                    order.append(k)
        waiters.append(in_thread(run))
        for _ in range(1000):
            with budget._RUNS.lock:
                if len(budget._RUNS.queue) == k + 1:
                    break
            threading.Event().wait(0.01)
    first_leave.set()
    a.join(10)
    for t in waiters:
        t.join(10)
    assert order == [0, 1, 2, 3, 4]


def test_with_two_slots_one_long_run_does_not_send_the_waiters_past_the_other_slot():
    slots = budget.RunSlots(2)
    a_leave, b_in, b_leave = threading.Event(), threading.Event(), threading.Event()
    got = []

    def a():
        slots.take(1.0)
        assert a_leave.wait(30)
        slots.give()

    def b():
        slots.take(1.0)
        b_in.set()
        assert b_leave.wait(30)
        slots.give()

    ta = in_thread(a)
    threading.Event().wait(1.2)  # a's slot is now held longer than the hold
    tb = in_thread(b)
    assert b_in.wait(10)
    tc = in_thread(lambda: got.append(slots.take(1.0)))
    assert not threading.Event().wait(0.3)  # c waits: b's slot turns over soon
    assert got == []
    b_leave.set()
    tb.join(10)
    tc.join(10)
    assert got == [True]  # b's slot, handed to c
    a_leave.set()
    ta.join(10)


def test_a_run_inside_a_run_keeps_its_one_slot():
    """The slot installed twice (a run inside a run, one thread): the inner one neither waits
    for the outer nor gives the slot away, and the slot is free after the outer run."""
    with budget.run_slot():
        with budget.run_slot():
            assert budget._this_run.held
        assert budget._this_run.held and budget._RUNS.free == 0
    assert budget._RUNS.free == 1 and not budget._RUNS.holders
