"""The one module that touches Streamlit's internals: one hook, installed once per process by the
frame's first script run: one script run at a time per worker (slot_script_runs; docs/limits.md
and docs/capacity.md say why it is kept: measured at the class knee with and without).
tests/unit/test_streamlit_internals.py fails with a clear message when a Streamlit upgrade
removes what it uses."""

import functools
import threading

_INSTALLED = set()  # the installers whose hook is in place (once_per_process)
_INSTALLING = threading.Lock()


def once_per_process(install):
    """An installer of a process-wide hook, called by every script run (the frame): the first
    call that returns True installs it for good; the check and the install hold one lock, since
    sessions that open together on a fresh server run their first runs at once."""
    @functools.wraps(install)
    def once(*args):
        if install in _INSTALLED:
            return
        with _INSTALLING:
            if install not in _INSTALLED and install(*args):
                _INSTALLED.add(install)
    return once


@once_per_process
def slot_script_runs(slot) -> bool:
    """Run every script run of this process inside `slot()` (a context manager:
    headscope.ui.budget's run slot), wrapped around ScriptRunner._run_script, which runs one full or
    fragment run. Once per process, by the first script run (later runs take the slot; AppTest's
    runs, one after the other anyway, take it too)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists() or not script_run_hook_exists():
        return False
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    run = ScriptRunner._run_script

    @functools.wraps(run)
    def slotted_run(self, rerun_data):
        with slot():
            return run(self, rerun_data)

    ScriptRunner._run_script = slotted_run
    return True


def script_run_hook_exists() -> bool:
    """Whether ScriptRunner still runs each script run through _run_script(self, rerun_data),
    called by its thread's loop (where slot_script_runs hooks in)."""
    import inspect

    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    run = getattr(ScriptRunner, "_run_script", None)
    run = inspect.unwrap(run) if run is not None else None  # ours, once installed
    return (run is not None and list(inspect.signature(run).parameters) == ["self", "rerun_data"]
            and "self._run_script(" in inspect.getsource(ScriptRunner._run_script_thread))
