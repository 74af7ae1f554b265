"""The frame around every page (headscope/frame/app.py, headscope/ui/) through AppTest: presentation
mode, and pages that do not need the BERT model do not wait for it."""

import pytest

from headscope.ui import style
from testkit.apptest import (
    component,
    copy_links,
    go_to,
    open_app,
    page_file,
    sandboxed,
    shown_page,
    survives,
)
from testkit.models import save_tiny_bert


def test_presentation_mode_toggle_link_and_leave(bundled):
    mine = "We sat on the bank of the river."
    at = open_app("explorer", text=mine, layer="4", head="7")
    d = component(at, "ex_view")
    assert d["scale"] == 1.0 and not d.get("present")
    assert d["impose"] | {"seq": 0} == dict(layer=3, head=6, seq=0)
    assert at.sidebar.text_area and "present" not in at.query_params

    at.toggle(key="present_toggle").set_value(True).run()
    survives(at)
    assert not at.sidebar.text_area  # the sidebar is empty, so Streamlit does not show it
    assert at.text_input(key="text").value == mine  # moved above the page, text kept
    d = component(at, "ex_view")
    # nothing imposed again: the component keeps the view the reader has (the link's)
    assert d["impose"] is None
    assert style.PRESENT_CSS in [h.proto.body for h in at.get("html")]
    assert d["scale"] == style.PROJECTOR_SCALE and d["present"] is True  # drawn larger
    # the address bar never carries present=1 (a teacher copies it for the class); the copy-link
    # box offers the students' link and, apart, the projector's
    assert "present" not in at.query_params
    students, projector = copy_links(at)
    assert "present" not in students and projector == students + "&present=1"

    at.text_input(key="text").set_value("The cat sat on the mat.").run()  # still typeable
    assert at.query_params["text"] == "The cat sat on the mat."
    assert component(at, "ex_view")["scale"] == style.PROJECTOR_SCALE

    at.button(key="present_leave").click().run()
    survives(at)
    assert at.sidebar.text_area and not at.toggle(key="present_toggle").value
    assert at.sidebar.text_area(key="text").value == "The cat sat on the mat."
    assert "present" not in at.query_params
    d = component(at, "ex_view")
    assert d["scale"] == 1.0 and not d.get("present") and d["impose"] is None


@pytest.mark.parametrize("page", ["head_lab", "training_lab"])
def test_a_present_link_opens_any_page_in_presentation_mode(bundled, page):
    at = open_app(page, present="1", text="I saw the man with a telescope.")
    assert "present" not in at.query_params  # read once, then off the address bar
    survives(at)
    assert shown_page(at) == page and not at.sidebar.text_area
    assert at.button(key="present_leave")


def test_the_copy_link_box_has_the_view_and_a_short_model_id(bundled):
    at = open_app("explorer", text="The cat sat on the mat.", layer="3", head="2")
    students, projector = copy_links(at)
    assert students.startswith("./?") and "model=bundled" in students
    assert "text=The%20cat%20sat%20on%20the%20mat." in students
    assert "layer=3" in students and "head=2" in students and "present" not in students
    assert projector.endswith("&present=1")
    old = open_app("explorer", model="all-MiniLM-L6-v2 (bundled)", text="Hi.")  # old links
    assert "does not offer" not in " ".join(w.value for w in old.warning)
    assert old.query_params["model"] == "bundled"
    at = go_to(at, "two_readings")  # another page's link: its own parameters, not the Explorer's
    students = at.code[0].value
    assert students.startswith("./two_readings?") and "layer=" not in students
    assert "a=I%20saw%20the%20man%20with%20a%20telescope." in students


def test_training_lab_does_not_wait_for_the_bert_model(tmp_path, monkeypatch, spy_loader):
    path = save_tiny_bert(tmp_path / "only-for-this-test")
    monkeypatch.setenv("HEADSCOPE_MODELS", f"frame-test={path}")
    at = open_app("training_lab", model="frame-test")
    survives(at)
    assert spy_loader == []  # the lab trains its own models
    at.switch_page(page_file("explorer")).run()
    survives(at)
    assert spy_loader == [str(path)]
    assert any("2 layers × 4 heads" in c.value for c in at.sidebar.caption)
    assert any("runs on the CPU" in c.value for c in at.sidebar.caption)  # where it runs


def test_a_device_that_is_not_here_is_said_by_name(tmp_path, monkeypatch):
    """HEADSCOPE_DEVICE (read once into headscope.ui.models.DEVICE) naming no device here: the page
    says which values are accepted, no traceback."""
    from headscope.ui import models
    from testkit.apptest import messages

    path = save_tiny_bert(tmp_path / "device-test")
    monkeypatch.setenv("HEADSCOPE_MODELS", f"device-test={path}")
    monkeypatch.setattr(models, "DEVICE", "tpu")
    at = open_app("explorer", model="device-test")
    survives(at)
    assert "device must be one of auto, cpu, cuda, mps" in messages(at)


def test_the_guards_can_fail(tmp_path):
    """sandboxed() and survives() are what the hostile-input tests rely on: each catches what
    it is there to catch."""
    import subprocess

    from testkit.apptest import TAG

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


def test_a_pages_settings_survive_a_visit_to_another_page(bundled):
    """Streamlit drops the state of widgets a run does not draw: Two readings' sentences and the
    Head lab's choice of heads would be reset by a visit elsewhere. (The Explorer's view is
    the browser's, kept in its address bar: tests/browser.)"""
    at = open_app("two_readings")
    at.text_input(key="tr_a").input("The bat flew with a hat.").run()
    at.switch_page(page_file("explorer")).run()
    assert shown_page(at) == "explorer"
    assert component(at, "ex_view")
    at.switch_page(page_file("head_lab")).run()
    at.multiselect(key="hl_heads").select("L2 H3").run()
    at.switch_page(page_file("two_readings")).run()
    assert at.text_input(key="tr_a").value == "The bat flew with a hat."
    at.switch_page(page_file("explorer")).run()
    assert component(at, "ex_view")["impose"] is None  # no view from elsewhere imposed
    at.switch_page(page_file("head_lab")).run()
    assert at.multiselect(key="hl_heads").value == ["L2 H3"]
    assert not at.exception and not at.warning


def test_kept_settings_that_a_smaller_model_lacks_are_dropped(bundled, tmp_path, monkeypatch):
    path = save_tiny_bert(tmp_path / "small", layers=2, heads=4)
    monkeypatch.setenv("HEADSCOPE_MODELS", f"small={path}")
    at = open_app("head_lab")
    at.multiselect(key="hl_heads").select("L1 H2").select("L6 H12").run()
    at.switch_page(page_file("inside_mha")).run()
    at.selectbox(key="im_real_layer").set_value(5).run()
    at.selectbox(key="im_real_head").set_value(11).run()
    at.sidebar.selectbox(key="model").set_value("small").run()
    survives(at)
    assert (at.selectbox(key="im_real_layer").value, at.selectbox(key="im_real_head").value) \
        == (0, 0)
    at.switch_page(page_file("head_lab")).run()
    survives(at)
    assert at.multiselect(key="hl_heads").value == ["L1 H2"]


def test_a_one_layer_one_head_model_is_named_in_the_singular(tmp_path, monkeypatch):
    path = save_tiny_bert(tmp_path / "one", layers=1, heads=1)
    monkeypatch.setenv("HEADSCOPE_MODELS", f"one={path}")
    at = open_app("all_heads", model="one")
    survives(at)
    assert any("1 layer × 1 head," in c.value for c in at.sidebar.caption)
    assert any(c.value.startswith("1 layer × 1 head,") for c in at.caption)


def test_a_links_page_values_stay_with_the_page_it_opened(bundled):
    """The Explorer stops on blank text before it applies layer, head and focus; Two readings,
    which has parameters of the same names, must not pick them up later."""
    at = open_app("explorer", text="   ", layer="2", head="3", focus="man")
    assert any("Type a sentence" in i.value for i in at.info)
    go_to(at, "two_readings")
    survives(at)
    assert not at.warning
    assert at.text_input(key="tr_focus").value == "with"
    assert at.selectbox(key="tr_pair").value == "Telescope or hat"


def test_the_copy_link_box_drops_the_parameters_of_the_page_left(bundled):
    at = open_app("explorer", layer="2")
    go_to(at, "about")
    students = at.code[0].value
    assert students.startswith("./about?") and "layer" not in students
    assert "layer" not in at.query_params


def test_a_bad_setting_is_said_in_the_sidebar(monkeypatch):
    """An operator's bad HEADSCOPE_* value keeps its default and is named on the page."""
    monkeypatch.setenv("HEADSCOPE_CACHE_TTL", "-1")
    at = open_app("explorer")
    survives(at)
    said = [w.value for w in at.sidebar.warning]
    assert any("HEADSCOPE_CACHE_TTL='-1' is not a positive whole number" in w for w in said)
