"""The one module that touches Streamlit's internals (the legacy pages switch, the upload
cap, a page run again by a fragment, the component's served files, a run's events sent in
batches, one script run at a time). tests/unit/test_streamlit_internals.py fails with a clear
message when a Streamlit upgrade removes what is used here."""

import asyncio
import functools
import logging
import threading

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

_LEGACY_MODE_LEFT = False
_INSTALLED = set()  # the installers whose hook is in place (once_per_process)
_INSTALLING = threading.Lock()


def once_per_process(install):
    """An installer of a process-wide hook, called by every script run (app.py): the first
    call that returns True installs it for good; the check and the install hold one lock. The
    sessions that open together on a fresh server run their first runs at once, and without the
    lock two to four of them installed the same hook, one around the other (found through four
    sessions opening a link at once: the run slot waited for itself and then leaked, the
    batching handed its own queue to itself and sent a run's end before its elements, and the
    upload cap would have waited for its own lock)."""
    @functools.wraps(install)
    def once(*args):
        if install in _INSTALLED:
            return
        with _INSTALLING:
            if install not in _INSTALLED and install(*args):
                _INSTALLED.add(install)
    return once


def uses_legacy_pages_switch() -> bool:
    """Whether this Streamlit still has the switch leave_legacy_pages_mode flips."""
    return hasattr(PagesManager, "uses_pages_directory")


def leave_legacy_pages_mode():
    """The first run after the server starts sees our pages/ folder and takes Streamlit's legacy
    multipage mode: app.py then runs as a page with other widget ids (the first sentence typed
    would be dropped), and a deep link such as /all_heads runs its page alone, without the
    frame and the sidebar. st.navigation in app.py switches the legacy mode off for good; this
    call, first in app.py and in every page (Page.start), starts such a first run again without
    it. Once per process: AppTest turns the legacy mode back on before each of its runs, and a
    rerun there would swallow the button clicks of the run."""
    global _LEGACY_MODE_LEFT
    if PagesManager.uses_pages_directory and not _LEGACY_MODE_LEFT:
        _LEGACY_MODE_LEFT = True
        PagesManager.uses_pages_directory = False
        st.rerun()


def rerunnable(page):
    """st.Page.run refuses a second call on the same page object (`_can_be_called`: once per
    run of app.py). A fragment rerun of the page (ui.page.run_as_fragment) is a run of its own
    that calls the last full run's page object again: allow it."""
    page._can_be_called = True
    return page


def page_run_guard_exists() -> bool:
    """Whether st.Page.run still reads the flag rerunnable sets."""
    import inspect

    from streamlit.navigation.page import StreamlitPage

    return "self._can_be_called" in inspect.getsource(StreamlitPage.run)


_UPLOAD_CAP = threading.Lock()  # one capped add_file at a time: the check and the add together


def upload_refusal(stored: dict, total: int, file_id: str, size: int,
                   per_session: int, per_worker: int) -> str | None:
    """Why a file of `size` bytes may not be added, or None. `stored` is the session's files
    (id -> record with .data), `total` the bytes every session holds; a file sent again under
    the same id replaces the old one."""
    old = stored.get(file_id)
    replaced = len(old.data) if old is not None else 0
    mine = sum(len(f.data) for f in stored.values()) - replaced + size
    if mine > per_session:
        return f"this session already holds {per_session // 2**20} MB of uploads"
    if total - replaced + size > per_worker:
        return f"this server's workers hold {per_worker // 2**20} MB of uploads already"
    return None


@once_per_process
def cap_uploads(per_session: int, per_worker: int) -> bool:
    """Bound what Streamlit keeps of uploads: each file is checked against server.maxUploadSize,
    but a session may PUT any number of them to /_stcore/upload_file and they stay in memory
    until the session ends. Past `per_session` bytes for one session, or `per_worker` bytes
    for the whole process, the PUT gets 413 and nothing is stored. Installed once per process,
    by the first script run, on the server's in-memory upload manager (the narrowest hook: the
    request handler calls its add_file after reading the file)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():  # a bare import has no Runtime: nothing to cap
        return False
    from starlette.exceptions import HTTPException

    mgr = Runtime.instance().uploaded_file_mgr
    add_file = mgr.add_file  # the server's MemoryUploadedFileManager, bound

    def capped_add_file(session_id, file):
        with _UPLOAD_CAP:
            with mgr._lock:
                why = upload_refusal(dict(mgr.file_storage.get(session_id, {})),
                                     mgr._total_bytes, file.file_id, len(file.data),
                                     per_session, per_worker)
            if why is not None:
                raise HTTPException(status_code=413, detail=f"Upload refused: {why}")
            add_file(session_id, file)

    mgr.add_file = capped_add_file
    return True


def serve_component_files(name: str, folder) -> bool:
    """Let Custom Components v2 serve the files in `folder` for the component `name`
    ("package.component") at /_stcore/bidi-components/<name>/<file>, as it does for a package
    whose pyproject.toml manifest declares an asset_dir: `component(name, js="file.js")` then
    sends the file's URL with every element instead of the code itself, and the browser fetches
    the module once per page. Our folder is made at import (the JS is assembled from the drawing
    core's files, bundle.py), so it is declared here, on the component manager of the running
    server; a manifest scan could not find it. Once per server (AppTest starts one per test);
    the registry's definitions are left alone. False without a running server (a bare import
    gets a throwaway manager) or if this Streamlit lacks what is used here."""
    from streamlit.components.v2.manifest_scanner import ComponentConfig, ComponentManifest
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return False
    manager = Runtime.instance().bidi_component_registry
    if manager.get_component_asset_root(name) is not None:
        return True
    handler = getattr(manager, "_manifest_handler", None)
    if handler is None or not hasattr(handler, "process_manifest"):
        return False
    package, component = name.split(".", 1)
    handler.process_manifest(ComponentManifest(name=package, version="0", components=[
        ComponentConfig(name=component, asset_dir=".")]), folder)
    return manager.get_component_asset_root(name) is not None


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
    Streamlit hands every element (a ForwardMsg; ~40-110 per Explorer run) to the event loop
    with its own call_soon_threadsafe, and the loop sends it at once: the browser gets them
    spread over the run, and its frontend renders the page again for each small group (in
    chromium ~8 React passes of ~15 ms per Enter, measured: more than the script run). Here a
    session's events queue in order (EventBatch); the run's start and end, and anything that
    is not an element, are handed over at once together with everything queued before them; an
    element waits for them at most HOLD_SECONDS, so a long run's progress still shows. Same
    events, same order, same thread; fewer wake-ups of the loop and GIL hand-overs too. Once
    per process, by the first script run (under AppTest, whose mock Runtime has no sessions,
    it changes nothing)."""
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
    """Run every script run of this process inside `slot()` (a context manager: ui.budget's
    run slot), wrapped around ScriptRunner._run_script, which runs one full or fragment run.
    Once per process, by the first script run (later runs take the slot; AppTest's runs, one
    after the other anyway, take it too)."""
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
