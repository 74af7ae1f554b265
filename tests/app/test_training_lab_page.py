"""The Training lab page under AppTest: renders, and a small-steps run finishes and shows its
curves; a second visit gets the cached result."""

from testkit.apptest import array, charts, open_app


def titles(at):
    return [c["layout"].get("title", {}).get("text", "") for c in charts(at).values()]


def lab_page():
    at = open_app("training_lab", timeout=180)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_lab_renders_trains_small_steps_and_caches():
    at = lab_page()
    assert any("Train" in b.label for b in at.button)
    at.toggle(key="tl_small_steps").set_value(True).run()
    at.number_input(key="tl_seed").set_value(917).run()  # a seed no other test trains
    at.button(key="tl_train_heads").click().run()
    assert not at.exception, [e.value for e in at.exception]
    shown = titles(at)
    for t in ("training loss", "held-out accuracy (both answers)",
              "head diversity over training"):
        assert t in shown
    loss = next(c for c in charts(at).values()
                if c["layout"].get("title", {}).get("text") == "training loss")
    lines = loss["data"]
    assert {ln["name"] for ln in lines} == {"1 head", "2 heads"}
    assert all(array(ln["x"])[-1] == 30 for ln in lines)  # the small-steps run went to the end

    at.button(key="tl_train_symmetry").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "largest weight difference between two heads" in titles(at)
    assert any("Identical heads stay identical" in m.value for m in at.markdown)

    again = lab_page()  # a new session: the runs come from the cache, no button needed
    again.toggle(key="tl_small_steps").set_value(True).run()
    again.number_input(key="tl_seed").set_value(917).run()
    assert "training loss" in titles(again)
    assert not again.exception
