"""Issue 16's journeys in chromium: the teacher's lesson and the stakeholder's question.

Teacher: Explore at the default lesson, step through the storyboard to step (e) and move ρ: the
private averages' distance from the non-private ones (the noise) is visibly larger at the
smaller ρ. Stakeholder: type a target ε, let the app set ρ, and read the row-level guarantee in
words. Screenshots: docs/journey_teacher.png, docs/journey_stakeholder.png.
"""

from __future__ import annotations

import math
import shutil

import pytest
from playwright.sync_api import Page, expect
from st_e2e import (
    ROOT,
    assert_no_exception,
    click_button,
    fill_number,
    open_app,
    plotly_charts,
    plotly_traces,
    rerun_after,
    set_slider,
    widget,
)

pytestmark = pytest.mark.e2e

# The default lesson (docs/app.md, "The teaching default"): FriendlyCore answers from ρ = 0.794.
EXPLORE = "/?src=generate&gen=fig6_blobs&n=20000&k=8&t=200&rho=10.0&seed=0"
RHO_OPTIONS = [f"{10 ** (i / 10):.3g}" for i in range(-30, 11)]


def _noise(page: Page) -> float:
    """Mean distance from each private average to its nearest non-private one in panel (e)."""
    traces = plotly_traces(plotly_charts(widget(page, "storyboard_step")).first)
    priv = next(t for t in traces if str(t["name"]).startswith("private averages"))
    ref = next(t for t in traces if str(t["name"]).startswith("non-private averages"))
    pts = list(zip(ref["x"], ref["y"], strict=True))
    return sum(min(math.dist((x, y), p) for p in pts)
               for x, y in zip(priv["x"], priv["y"], strict=True)) / len(priv["x"])


def _docs_copy(page: Page, shot, name: str, height: int) -> None:
    """Screenshot the top ``height`` px of the page (scrolled to the top) into docs/."""
    page.evaluate("() => document.querySelector(\"[data-testid='stMain']\").scrollTo(0, 0)")
    path = shot(name, height=height)
    shutil.copyfile(path, ROOT / "docs" / f"{name}.png")


def test_teacher_steps_through_and_sees_the_noise_grow_as_rho_shrinks(page: Page, app_url: str,
                                                                      shoot) -> None:
    open_app(page, app_url + EXPLORE)
    assert_no_exception(page)
    expect(widget(page, "run_status")).to_contain_text("FriendlyCore completed every step")
    rerun_after(page, widget(page, "step_mode").locator("label").click)
    expect(widget(page, "step_narration")).to_contain_text("Step 1 of 7 — (a)")
    for _ in range(4):
        click_button(page, "step_next")
    expect(widget(page, "step_narration")).to_contain_text("Step 5 of 7 — (e)")
    noise_high = _noise(page)
    set_slider(page, "rho_slider", "1", options=RHO_OPTIONS)  # 10 steps down: ρ / 10
    assert_no_exception(page)
    expect(widget(page, "step_narration")).to_contain_text("Step 5 of 7 — (e)")
    expect(widget(page, "run_status")).to_contain_text("FriendlyCore completed every step")
    noise_low = _noise(page)
    # Gaussian noise sd ∝ 1/√ρ: ~3.2× at a tenth of the budget; ask for a visible 1.5×
    assert noise_low > 1.5 * noise_high, (noise_low, noise_high)
    expect(page.get_by_text("▲ core forms from ρ ≈ 0.631")).to_be_visible()
    _docs_copy(page, shoot, "journey_teacher", 1900)


def test_stakeholder_types_a_target_eps_and_reads_the_guarantee_in_words(page: Page, app_url: str,
                                                                         shoot) -> None:
    open_app(page, app_url + EXPLORE)
    readout = widget(page, "eps_readout")
    expect(readout).to_contain_text("Privacy strength: none")  # ρ = 10: the row-level δ is 1
    page.get_by_text("I need a given ε: what ρ?").click()  # opens the expander (no rerun)
    fill_number(page, "eps_target", 2)
    click_button(page, "eps_target_apply")
    assert_no_exception(page)
    expect(page.get_by_text("within your target (ε = 2, δ = 1e-06)")).to_be_visible()
    expect(readout).to_contain_text("ε = 2")
    expect(readout).to_contain_text("Privacy strength: moderate")
    expect(readout).to_contain_text("changes the probability of any outcome by at most a factor")
    expect(readout).to_contain_text("per tuple")
    _docs_copy(page, shoot, "journey_stakeholder", 1250)
