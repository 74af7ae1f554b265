"""headscope.ui.st_internals.once_per_process: the sessions that open together on a fresh server run
the frame's installers at the same moment; each hook must go in once (installed twice, one
around the other, the run slot would wait for itself and leak, and the batching could send a
run's end before its elements). Threads stand for those first runs."""

import threading
import time

from headscope.ui.st_internals import once_per_process


def race(installer, runs=4):
    start = threading.Barrier(runs)

    def first_run():
        start.wait(10)  # a broken barrier raises here: the installer never runs, calls stay []
        installer()

    threads = [threading.Thread(target=first_run) for _ in range(runs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)


def test_first_runs_at_once_install_a_hook_once():
    calls = []

    @once_per_process
    def install():
        calls.append(threading.get_ident())
        time.sleep(0.05)  # as inspect.getsource reading a file: the other runs get the GIL
        return True

    race(install)
    assert len(calls) == 1  # by one of the racing runs
    install()  # a later run
    assert len(calls) == 1


def test_an_installer_that_could_not_install_is_tried_again():
    calls = []

    @once_per_process
    def install():
        calls.append(1)
        return len(calls) == 2  # no server yet the first time

    install()
    install()
    install()
    assert calls == [1, 1]
