"""The declared dataset size: a public input, or a DP count spent from the budget.

The unit of privacy is one row under add/remove, so the number of rows n is itself private.
Anything that shapes a release (a budget split, a grid depth, an implementation switch, a
default t) must read a *declared* size: one the caller states as public (free), or, when the
caller states none, a Gaussian count of the rows (sensitivity 1) paid from the budget and
recorded in the ledger as a row-level spend. Either way the true n never shapes the release.

References: Dwork & Roth 2014, §3 (counting queries have sensitivity 1); Bun & Steinke 2016,
Prop. 1.6 (the Gaussian mechanism is ρ-zCDP with σ = Δ/√(2ρ)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpviz._validation import check_scalar
from dpviz.privacy.budget import ZCDP
from dpviz.privacy.ledger import Ledger
from dpviz.privacy.mechanisms import gaussian, gaussian_sigma_zcdp

#: Share of the caller's ρ spent on the DP count when no size is declared.
SIZE_FRACTION = 0.02


@dataclass(frozen=True)
class DeclaredSize:
    """The public size ``n`` a run uses and where it came from.

    ``source`` is "declared" (the caller's public statement, ``rho`` = 0) or "dp_count" (a noisy
    count of the rows with ``rho``-zCDP and noise ``sigma``, rounded and floored at 1).
    """

    n: int
    source: str
    rho: float = 0.0
    sigma: float | None = None


def dp_count(n_rows: int, *, rho: float, rng: np.random.Generator) -> DeclaredSize:
    """n + N(0, 1/(2ρ)) rounded (≥ 1): a ρ-zCDP count of the rows (add/remove one row).

    The draw is booked by :func:`record_size` into the ledger of the run that uses it.
    """
    rho = check_scalar(rho, "rho", "dp_count", low=0.0, low_open=True, high_open=True)
    scratch = Ledger("scratch")
    noisy = gaussian(float(n_rows), sensitivity=1.0, rho=rho, rng=rng, ledger=scratch,
                     name="n (DP count)")
    n = max(1, round(noisy)) if math.isfinite(noisy) else 1
    return DeclaredSize(n, "dp_count", rho, gaussian_sigma_zcdp(1.0, rho))


def resolve_size(n_declared: int | DeclaredSize | None, func: str, *, n_rows: int, rho: float,
                 rng: np.random.Generator) -> DeclaredSize:
    """The size a run uses: the caller's declared n, a DeclaredSize already drawn, or a DP count."""
    if isinstance(n_declared, DeclaredSize):
        return n_declared
    if n_declared is None:
        return dp_count(n_rows, rho=rho, rng=rng)
    n = check_scalar(n_declared, "n_declared", func, low=1, high_open=True, integer=True)
    return DeclaredSize(int(n), "declared")


def require_declared_size(n_declared: object, rng: object, func: str, registered: str) -> None:
    """Refuse a RELEASE (``rng`` is the release sampler) that has no public size, before any row
    is read (issue 34, finding A).

    A direct call such as ``grid_coreset(X, …, rng=SecureRNG())`` without ``n_declared`` used to
    fall back on ``len(X)``: the true row count then shaped the release (the grid's levels changed
    between 1,159 and 1,160 rows) and the result was marked a release. A simulation keeps that
    convenience (it is never published); a release must state its size, or go through
    :func:`dpviz.run`, which pays for a DP count of the rows when none is declared.
    """
    if n_declared is None and getattr(rng, "is_secure_sampler", False):
        raise ValueError(
            f"{func}: a release (rng=SecureRNG()) needs a public size: pass n_declared (the declared "
            f"number of rows), or call dpviz.run('{registered}', …), which pays for a DP count of the rows "
            "when no size is declared. Nothing was read.")


def record_size(ledger: Ledger, size: DeclaredSize) -> None:
    """Book the size's cost in ``ledger`` (nothing for a declared size: it is public)."""
    if size.source == "dp_count":
        node = ledger.child("declared size (DP count)", ZCDP(size.rho), unit="row")
        node.record("n (DP count of the rows)", "gaussian", ZCDP(size.rho), sensitivity=1.0,
                    noise_scale=size.sigma, note="no size was declared: a DP count stands in for it")


# ----------------------------------------------------------------------------- provenance

#: Where a public input came from: stated by the user, estimated with a booked DP spend, or read
#: from the rows themselves (which voids the guarantee for that input).
SOURCES = ("declared", "dp_estimate", "data")


@dataclass(frozen=True)
class Provenance:
    """Where each public input of a release came from (issue 25, finding 4).

    ``sources`` maps an input's name ("radius", "n", "k", "t", "bounds", …) to one of
    :data:`SOURCES`; ``notes`` optionally says how (e.g. "max norm of the upload"). A value read
    from the data (``"data"``) is not a public input: the guarantee does not cover it, so
    :func:`dpviz.privacy.release.export_release` refuses such a release unless the caller records
    an explicit acknowledgement, which the export then carries.
    """

    sources: tuple[tuple[str, str], ...]
    notes: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        for name, src in self.sources:
            if src not in SOURCES:
                raise ValueError(f"The provenance of {name!r} must be one of {SOURCES}. Got {src!r}.")

    @classmethod
    def of(cls, notes: dict[str, str] | None = None, **sources: str) -> Provenance:
        """``Provenance.of(radius="declared", n="dp_estimate")``."""
        return cls(tuple(sorted(sources.items())), tuple(sorted((notes or {}).items())))

    def source(self, name: str) -> str | None:
        return dict(self.sources).get(name)

    def with_source(self, name: str, source: str, note: str = "") -> Provenance:
        """A copy with ``name``'s source set (and its note, if given)."""
        notes = dict(self.notes) | ({name: note} if note else {})
        return Provenance.of(notes, **(dict(self.sources) | {name: source}))

    def data_derived(self) -> tuple[str, ...]:
        """The inputs read from the data (a release needs an acknowledgement for these)."""
        return tuple(n for n, s in self.sources if s == "data")

    def as_dict(self) -> dict[str, dict[str, str]]:
        notes = dict(self.notes)
        return {n: {"source": s, **({"note": notes[n]} if n in notes else {})} for n, s in self.sources}
