"""Where a FriendlyCore run got to, in the library's terms and in plain words.

Read from ``Result.trace`` (Tsfadia et al. 2022, §5.2: the informal FC_Clustering's steps); nothing
is recomputed. :func:`run_status` says which of :data:`PIPELINE_STEPS` are present and whether the
fallback answered; :func:`plain_status` says the same to a user, without internal names.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpviz.result import Result, TraceStep

#: The FC pipeline's trace steps in run order (INTERFACES.md).
PIPELINE_STEPS: tuple[str, ...] = (
    "pieces", "tuples", "feasibility", "match_core", "reorder", "diameters", "dist_core",
    "tuple_averages", "tuple_averages_nonprivate", "lloyd_partition", "lloyd",
)


@dataclass(frozen=True)
class RunStatus:
    """Where an FC run got to (for the failure annotation and the app's status line)."""

    last_step: str | None
    missing: tuple[str, ...]
    reason: str | None
    fallback_used: bool
    fallback_method: str | None

    @property
    def complete(self) -> bool:
        return not self.missing

    def message(self) -> str:
        """One sentence for the user, e.g. "FriendlyCore stopped after 'match_core' (empty
        core); the fallback (dp_lloyd) released the centers."."""
        if self.complete and not self.fallback_used:
            return "The run completed every step."
        where = f"after '{self.last_step}'" if self.last_step else "before its first step"
        why = f" ({self.reason})" if self.reason else ""
        if self.fallback_used:
            tail = f"; the fallback ({self.fallback_method or 'fallback'}) released the centers."
        else:
            tail = "; no fallback: the run output ⊥ (no centers)."
        return f"FriendlyCore stopped {where}{why}{tail}"


def run_status(result: Result) -> RunStatus:
    """How far ``result`` got through :data:`PIPELINE_STEPS` and why it stopped."""
    present = [s for s in PIPELINE_STEPS if drawable_step(result, s) is not None]
    missing = tuple(s for s in PIPELINE_STEPS if drawable_step(result, s) is None)
    fb = drawable_step(result, "fallback")
    used = bool(fb and fb.data.get("used"))
    reason = (fb.data.get("reason") if fb else None) or result.failure
    method = fb.data.get("method") if fb else None
    return RunStatus(present[-1] if present else None, missing, reason, used, method)


#: What the backup method is, in the user's words (fc_private_stage's fallback).
BACKUP_WORDS = "the backup method (a private grid summary of the rows)"


def _n_pieces(result: Result) -> int | None:
    for s in result.trace:
        if s.name == "tuples" and s.data.get("tuples") is not None:
            return int(np.shape(s.data["tuples"])[0])
    return None


def plain_status(result: Result) -> str:
    """The run's outcome in plain words, without internal names: which method answered, and
    (when FriendlyCore did not) why, e.g. "The 200 pieces did not agree enough for FriendlyCore's
    core to form at this budget; the backup method (a private grid summary of the rows) answered
    instead."

    Which of FriendlyCore's tests stopped it is read from the internal ``fc_outcome`` step: a
    non-private diagnostic, as is everything the app's simulation shows besides the centers.
    """
    status = run_status(result)
    t = _n_pieces(result)
    pieces = f"the {t} pieces" if t else "the pieces"
    k = None if result.centers is None else len(result.centers)
    if status.complete and not status.fallback_used:
        return (f"FriendlyCore completed every step: {pieces} agreed, and its private average of "
                f"their centers, refined by one private Lloyd step, gave the {k} centers.")
    step = result.find("fc_outcome")
    outcome = None if step is None else step.data.get("reason")
    text = str(outcome or "")
    if "match" in text:
        why = f"{pieces.capitalize()} did not agree enough for FriendlyCore's core to form at this budget"
    elif "dist" in text or "n̂" in text:
        why = (f"FriendlyCore's core formed from {pieces}, but too few of its tuples passed the "
               "second (closeness) test at this budget")
    else:
        why = "FriendlyCore did not finish at this budget"
    if status.fallback_used:
        return f"{why}; {BACKUP_WORDS} answered instead: the {k} centers shown are its answer."
    return f"{why}; the backup method is off, so no centers were released."


def drawable_step(result: Result, name: str) -> TraceStep | None:
    """The step called ``name``; None if absent or if it released no centers (FC output ⊥: the
    private stage keeps every released step on every branch, with ``centers=None`` there)."""
    for s in result.trace:
        if s.name == name:
            if name in ("tuple_averages", "tuple_averages_nonprivate", "lloyd") and \
                    s.data.get("centers", 0) is None:
                return None
            if name == "reorder" and s.data.get("reference", 0) is None:  # empty match core
                return None
            return s
    return None
