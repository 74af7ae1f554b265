"""The attention component's JavaScript and CSS travel as two files the server serves (the
browser fetches them once per page), not inside every element message of every rerun
(ui/attention/component.py, ui.st_internals.serve_component_files)."""

from testkit.apptest import open_app
from ui.attention import bundle, component


def test_every_element_names_the_served_files_instead_of_carrying_the_code(bundled):
    at = open_app("explorer", text="I saw the man with a telescope.")
    ours = [e.proto for e in at.get("bidi_component")
            if e.proto.component_name == component.NAME]
    assert len(ours) == 4  # the grid, the focus grid, the enlarged head, the focus bars
    for p in ours:
        assert p.js_content == "" and p.css_content == ""
        assert (p.js_source_path, p.css_source_path) == (component.JS_FILE, component.CSS_FILE)
    # the files hold the code the notebook and the tests know, and are named by its hash
    assert (component.SERVED / component.JS_FILE).read_text() == bundle.streamlit_js()
    assert (component.SERVED / component.CSS_FILE).read_text() == bundle.css()
    assert component.JS_FILE != component.CSS_FILE and component.JS_FILE.endswith(".js")
