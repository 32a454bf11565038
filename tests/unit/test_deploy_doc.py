"""Issue 43: docs/deploy.md described the classroom's landing lesson as n = 20,000, t = 200 while
the app's default lesson was n = 150,000, t = 1,500. The lesson is the parameters' defaults
(app/components/state.py): the sentence must state them, so a change of the lesson fails here
until the page says it too."""

from __future__ import annotations

import re
from pathlib import Path

from app.components import state

DOC = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"


def test_deploy_states_the_default_lesson():
    text = " ".join(DOC.read_text().split())
    landing = re.search(r"the landing page is Explore on its teaching lesson.*?simulation on public data",
                        text)
    assert landing is not None, "docs/deploy.md lost its sentence about the landing lesson"
    p = state.defaults()
    assert p["gen"] == "fig6_blobs" and "Fig. 6 blobs" in landing[0]
    for name in ("n", "k", "t"):
        assert f"{name} = {p[name]:,}" in landing[0], (name, p[name], landing[0])
