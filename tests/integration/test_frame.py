"""The frame around every page (app.py, pages/common.py) through AppTest: presentation mode,
and pages that do not need the BERT model do not wait for it."""

import json

import pytest

from pages import common
from tests.conftest import save_tiny_bert
from tests.integration.frame import frame_mode, open_app, sandboxed, shown_page, survives


def chart_height(at, key):
    found = [c for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}")]
    return json.loads(found[0].proto.spec)["layout"]["height"]


def test_presentation_mode_toggle_link_and_leave(bundled):
    mine = "We sat on the bank of the river."
    with frame_mode():
        at = open_app("explorer", text=mine, layer="4", head="7")
        normal = chart_height(at, "grid")
        assert at.sidebar.text_area and "present" not in at.query_params

        at.toggle(key="present_toggle").set_value(True).run()
        survives(at)
        assert not at.sidebar.text_area  # the sidebar is empty, so Streamlit does not show it
        assert at.text_area(key="text").value == mine  # moved above the page, text kept
        assert (at.slider(key="layer").value, at.selectbox(key="head").value) == (4, 7)
        assert common.PRESENT_CSS in [h.proto.body for h in at.get("html")]
        assert chart_height(at, "grid") == int(normal * common.PROJECTOR_SCALE)
        assert at.query_params["present"] == "1"

        at.text_area(key="text").set_value("The cat sat on the mat.").run()  # still typeable
        assert at.query_params["text"] == "The cat sat on the mat."
        presented = chart_height(at, "grid")

        at.button(key="present_leave").click().run()
        survives(at)
        assert at.sidebar.text_area and not at.toggle(key="present_toggle").value
        assert at.sidebar.text_area(key="text").value == "The cat sat on the mat."
        assert (at.slider(key="layer").value, at.selectbox(key="head").value) == (4, 7)
        assert "present" not in at.query_params
        assert int(chart_height(at, "grid") * common.PROJECTOR_SCALE) == presented


@pytest.mark.parametrize("page", ["head_lab", "training_lab"])
def test_a_present_link_opens_any_page_in_presentation_mode(bundled, page):
    with frame_mode():
        at = open_app(page, present="1", text="I saw the man with a telescope.")
        survives(at)
    assert shown_page(at) == page and not at.sidebar.text_area
    assert at.button(key="present_leave")


def test_training_lab_does_not_wait_for_the_bert_model(tmp_path, monkeypatch, spy_loader):
    path = save_tiny_bert(tmp_path / "only-for-this-test")
    monkeypatch.setenv("HEADSCOPE_MODELS", f"frame-test={path}")
    with frame_mode():
        at = open_app("training_lab", model="frame-test")
        survives(at)
        assert spy_loader == []  # the lab trains its own models
        at.switch_page("pages/explorer.py").run()
        survives(at)
    assert spy_loader == [str(path)]
    assert any("2 layers × 4 heads" in c.value for c in at.sidebar.caption)


def test_the_guards_can_fail(tmp_path):
    """sandboxed() and survives() are what the hostile-input tests rely on: each catches what
    it is there to catch."""
    import subprocess

    from tests.integration.frame import TAG

    with pytest.raises(AssertionError, match="started a process"), sandboxed():
        subprocess.run(["true"])
    with pytest.raises(AssertionError, match="wrote a file"), sandboxed():
        (tmp_path / "x").write_text("x")
    with pytest.raises(AssertionError, match="outside the project"), sandboxed():
        open("/etc/hostname").close()
    with sandboxed():  # reading the project itself is what every run does
        open(__file__).close()
    assert TAG.search('{"text": "<script>alert(1)</script>"}')
    assert not TAG.search('{"hovertemplate": "%{y}<extra></extra>", "text": "&lt;b&gt;"}')
