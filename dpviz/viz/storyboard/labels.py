"""The storyboard's words: legend tags, panel captions and the step-through narration.

Every legend entry says whether it is a private release or a non-private diagnostic
(``TraceStep.released``); the captions and the narration follow Tsfadia et al. 2022, §5.2, Fig. 3.
"""

from __future__ import annotations

PRIVATE_TAG = "private"
NONPRIVATE_TAG = "non-private diagnostic"


def release_label(name: str, released: bool) -> str:
    """Legend text for something drawn from a trace step: ``'<name> — private'`` or
    ``'<name> — non-private diagnostic'``."""
    return f"{name} — {PRIVATE_TAG if released else NONPRIVATE_TAG}"


#: Legend entries of trace kinds drawn once per cluster or coordinate (one entry per kind; the
#: colour of each trace tells the clusters apart).
KIND_CLOUDS = "coordinate clouds Q_j (colour: j)"
KIND_BY_CENTER = "data by nearest center (colour: center)"


#: One caption per panel of the Fig. 3 storyboard (the app's lists under the panels).
PANEL_TEXT: dict[str, str] = {
    "a": "The data (input; never released).",
    "b": "The oracle's centers of every piece: t k-tuples (non-private, internal).",
    "c": "FriendlyCore keeps tuples whose noisy friend score clears the threshold.",
    "d": "The reference tuple orders every core tuple; points split into k clouds.",
    "e": "Private averages of each cloud (released) vs the non-private means.",
    "f": "The private centers on the data.",
    "g": "After one private Lloyd step on all rows (the final release).",
}


#: Step-through mode: one sentence of narration per step (Tsfadia et al. 2022, §5.2, Fig. 3).
NARRATION: dict[str, str] = {
    "a": "Start with the rows. They are the input and are never released; FriendlyCore first "
         "splits them at random into t pieces.",
    "b": "Each piece is clustered without privacy, giving k centers per piece — one k-tuple. Where "
         "the pieces agree, their tuples pile up on the same spots.",
    "c": "FriendlyCore counts, with noise, how many other tuples agree with each one and keeps "
         "those above a threshold: the core. Smaller ρ means more noise on the counts, so at some "
         "point no tuple clears the bar.",
    "d": "One core tuple is the reference: every core tuple's centers are matched to its centers, "
         "so the k coordinates line up into k clouds.",
    "e": "Each cloud is averaged and Gaussian noise scaled to the budget is added: the red × are "
         "private, the diamonds the non-private averages they estimate.",
    "f": "These private centers sit on the full data.",
    "g": "Finally one private Lloyd step moves each center to a noisy mean of the rows nearest it: "
         "the stars are the released answer.",
}


def wrap(text: str, width: int = 48) -> str:
    """``text`` broken into lines of at most ``width`` characters with plotly's ``<br>``."""
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    if cur:
        lines.append(cur)
    return "<br>".join(lines)
