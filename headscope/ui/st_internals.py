"""The one module that touches Streamlit's internals: two hooks, each installed once per process
by the frame's first script run (docs/limits.md says why each is kept). A run's events reach the
browser in batches (batch_script_events); one script run at a time per worker
(slot_script_runs). tests/unit/test_streamlit_internals.py fails with a clear message when a
Streamlit upgrade removes what they use."""

import asyncio
import functools
import logging
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


class EventBatch:
    """One session's script-runner events on their way to the event loop (batch_script_events):
    queued in order; `add` hands the loop a call that runs the whole queue, at once for an
    urgent event, `hold` seconds later for a held one (unless a call is already due)."""

    def __init__(self, hold: float):
        self.hold = hold
        self.lock = threading.Lock()
        self.callbacks = []
        self.scheduled = False  # a call that runs the queue is due

    def add(self, callback, held: bool, call_soon_threadsafe):
        """Any thread. call_soon_threadsafe(fn) must run fn on the event loop."""
        with self.lock:
            self.callbacks.append(callback)
            if held and self.scheduled:
                return
            self.scheduled = True
        call_soon_threadsafe(self._later if held else self.run)

    def _later(self):
        asyncio.get_running_loop().call_later(self.hold, self.run)

    def run(self):
        """On the event loop: every event queued so far, in order."""
        with self.lock:
            callbacks, self.callbacks = self.callbacks, []
            self.scheduled = False
        for callback in callbacks:
            try:
                callback()
            except Exception:  # the loop would log it and go on to the next callback
                logging.getLogger(__name__).exception("a script-runner event failed")


HOLD_SECONDS = 0.1  # a script's elements wait at most this long for the rest of its run
_held = threading.local()  # .on: the event being handed over is an element of a running script


@once_per_process
def batch_script_events() -> bool:
    """Send a script run's elements to the browser together, when the run ends (or every
    HOLD_SECONDS while it runs), instead of one at a time as the script makes them.
    Streamlit hands every element (a ForwardMsg; dozens per Explorer run) to the event loop with
    its own call_soon_threadsafe, so the browser gets them spread over the run and renders the
    page again for each small group (docs/capacity.md). Here a session's events queue in order
    (EventBatch); the run's start and end, and anything that is not an element, are handed over
    at once with everything queued before them; an element waits at most HOLD_SECONDS, so a long
    run's progress still shows. Same events, same order, same thread. Under AppTest, whose mock
    Runtime has no sessions, it changes nothing."""
    from streamlit.runtime import Runtime

    if not Runtime.exists() or not script_events_hook_exists():
        return False
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.scriptrunner import ScriptRunnerEvent

    schedule = AppSession._call_soon_on_event_loop  # drops events once the loop is closed
    on_event = AppSession._on_scriptrunner_event
    element = ScriptRunnerEvent.ENQUEUE_FORWARD_MSG

    @functools.wraps(schedule)
    def call_soon(self, callback):
        batch = self.__dict__.get("_headscope_events")
        if batch is None:  # the session's first event (setdefault: one batch if two race)
            batch = self.__dict__.setdefault("_headscope_events", EventBatch(HOLD_SECONDS))
        batch.add(callback, getattr(_held, "on", False), lambda fn: schedule(self, fn))

    @functools.wraps(on_event)
    def on_scriptrunner_event(self, sender, event, *args, **kwargs):
        _held.on = event == element
        try:
            return on_event(self, sender, event, *args, **kwargs)
        finally:
            _held.on = False

    AppSession._call_soon_on_event_loop = call_soon
    AppSession._on_scriptrunner_event = on_scriptrunner_event
    return True


def script_events_hook_exists() -> bool:
    """Whether AppSession still hands script-runner events over where batch_script_events
    hooks in: _on_scriptrunner_event(sender, event, ...) calling _call_soon_on_event_loop."""
    import inspect

    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.scriptrunner import ScriptRunnerEvent

    on_event = getattr(AppSession, "_on_scriptrunner_event", None)
    on_event = inspect.unwrap(on_event) if on_event is not None else None  # ours, installed
    return (hasattr(AppSession, "_call_soon_on_event_loop") and on_event is not None
            and hasattr(ScriptRunnerEvent, "ENQUEUE_FORWARD_MSG")
            and list(inspect.signature(on_event).parameters)[:3] == ["self", "sender", "event"]
            and "self._call_soon_on_event_loop(" in inspect.getsource(on_event))


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
