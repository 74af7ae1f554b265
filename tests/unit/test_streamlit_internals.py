"""The Streamlit internal headscope relies on (ui/st_internals.py). If an upgrade removes it,
this fails with a message that says what broke and where, instead of a page misbehaving."""

import streamlit

from ui.st_internals import uses_legacy_pages_switch


def test_the_legacy_pages_switch_still_exists():
    assert uses_legacy_pages_switch(), (
        f"Streamlit {streamlit.__version__} has no PagesManager.uses_pages_directory: "
        "ui/st_internals.leave_legacy_pages_mode (and testkit/apptest.py's frame mode) must be "
        "rewritten for this version, or requirements.txt's upper bound on streamlit kept")


def test_apptest_still_builds_its_pages_manager_where_the_harness_patches_it():
    import streamlit.testing.v1.app_test as app_test

    assert hasattr(app_test, "PagesManager"), (
        f"Streamlit {streamlit.__version__}'s AppTest no longer imports PagesManager: "
        "testkit/apptest.py's frame mode patches nothing, and AppTest would run pages in the "
        "legacy pages/ mode")


def test_the_upload_manager_still_has_what_the_upload_cap_reads():
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager

    mgr = MemoryUploadedFileManager("/_stcore/upload_file")
    assert callable(MemoryUploadedFileManager.add_file)
    assert all(hasattr(mgr, a) for a in ("file_storage", "_total_bytes", "_lock")), (
        f"Streamlit {streamlit.__version__}'s MemoryUploadedFileManager changed: "
        "ui/st_internals.cap_uploads must be rewritten for this version")


def test_page_run_still_guards_with_the_flag_a_fragment_rerun_resets():
    from ui.st_internals import page_run_guard_exists

    assert page_run_guard_exists(), (
        f"Streamlit {streamlit.__version__}'s st.Page.run no longer reads _can_be_called: "
        "ui/st_internals.rerunnable (the Explorer run as a fragment, ui/page.py) must be "
        "rewritten for this version")


def test_app_sessions_still_hand_script_events_over_where_the_batching_hooks_in():
    from ui.st_internals import script_events_hook_exists

    assert script_events_hook_exists(), (
        f"Streamlit {streamlit.__version__}'s AppSession no longer hands script-runner events "
        "to the event loop through _on_scriptrunner_event(sender, event, ...) and "
        "_call_soon_on_event_loop: ui/st_internals.batch_script_events must be rewritten for "
        "this version")


def test_script_runs_still_go_through_the_method_the_run_slot_wraps():
    from ui.st_internals import script_run_hook_exists

    assert script_run_hook_exists(), (
        f"Streamlit {streamlit.__version__}'s ScriptRunner no longer runs each script run "
        "through _run_script(self, rerun_data): ui/st_internals.slot_script_runs (one run at a "
        "time per worker, ui/budget.py) must be rewritten for this version")
