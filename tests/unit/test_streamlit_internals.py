"""The Streamlit internal headscope relies on (ui/st_internals.py). If an upgrade removes it,
this fails with a message that says what broke and where, instead of a page misbehaving."""

import streamlit

from ui.st_internals import uses_legacy_pages_switch


def test_the_legacy_pages_switch_still_exists():
    assert uses_legacy_pages_switch(), (
        f"Streamlit {streamlit.__version__} has no PagesManager.uses_pages_directory: "
        "ui/st_internals.leave_legacy_pages_mode (and testkit/apptest.py's frame mode) must be "
        "rewritten for this version, or requirements.txt's upper bound on streamlit kept")
