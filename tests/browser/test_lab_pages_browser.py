"""Inside MHA and Training lab in a real browser: each page loads, shows its main figure and no
exception; the lab's small-steps run finishes and draws its curves."""

import re

from testkit.browser import no_exception

PLOT = ".js-plotly-plot"


def test_inside_mha_shows_the_walkthrough(app_url, page):
    page.goto(f"{app_url}/inside_mha")
    page.get_by_text("Inside multi-head attention").first.wait_for(timeout=90_000)
    page.locator(PLOT).first.wait_for(timeout=90_000)
    before = page.locator(PLOT).count()
    page.get_by_role("button", name="Next step ▶").click()
    page.get_by_text("2. Each head's weights").first.wait_for(timeout=60_000)
    page.wait_for_function(f"document.querySelectorAll('{PLOT}').length > {before}",
                           timeout=60_000)
    assert no_exception(page)


def test_training_lab_trains_small_steps(app_url, page):
    page.goto(f"{app_url}/training_lab")
    page.get_by_text("The task").first.wait_for(timeout=90_000)
    page.get_by_text("Small steps").first.click()
    page.locator("text=Seed").first.wait_for(timeout=30_000)
    seed = page.get_by_label("Seed")
    seed.fill("731")  # a seed nothing else has trained, so the run really happens
    seed.press("Enter")
    page.get_by_role("button", name=re.compile(r"^Train \(2 runs, [\d,]+ steps\)$")).first.click()
    page.locator(f"{PLOT} >> text=held-out accuracy (both answers)").first.wait_for(
        timeout=120_000)
    # loss, accuracy and the trained maps; the maps may arrive after the accuracy chart
    page.wait_for_function(f"document.querySelectorAll('{PLOT}').length >= 3", timeout=60_000)
    assert no_exception(page)
