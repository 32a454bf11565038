"""The dpviz pieces the app calls, imported defensively.

The library is built in parallel with the app; a page whose piece is missing says so instead
of crashing. ``missing(name)`` returns the import error text (or None when the piece is there).
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType, SimpleNamespace

import streamlit as st

#: piece name -> (module, attributes the app needs)
PIECES: dict[str, tuple[str, tuple[str, ...]]] = {
    "data": ("dpviz.data", ("Dataset", "GENERATORS", "BUILTIN", "load_csv", "data_radius")),
    "tuples": ("dpviz.clustering.tuples", ("compute_tuples",)),
    "fc": ("dpviz.clustering.friendlycore", ("fc_private_stage", "fc_tuple_stage")),
    "metrics": ("dpviz.metrics", ("normalized_loss", "center_error", "kmeans_cost")),
    "baselines": ("dpviz.clustering.baselines", ("nonprivate_kmeans",)),
    "experiments": ("dpviz.experiments", ("run_sweep",)),
    "viz": ("dpviz.viz", ()),
    "privacy": ("dpviz.privacy", ("zcdp_to_dp", "row_level_statement")),
    "registry": ("dpviz.registry", ("run", "algorithms")),
    "release": ("dpviz.privacy.release", ("SecureRNG", "SessionLedger", "export_release")),
}

_TITLES = {
    "data": "the data module (dpviz.data)",
    "tuples": "the tuple stage (dpviz.clustering.tuples.compute_tuples)",
    "fc": "FriendlyCore clustering (dpviz.clustering.friendlycore.fc_private_stage)",
    "metrics": "the diagnostics (dpviz.metrics)",
    "baselines": "the baselines (dpviz.clustering.baselines)",
    "experiments": "the sweep runner (dpviz.experiments.run_sweep)",
    "viz": "the figure builders (dpviz.viz)",
    "privacy": "the privacy accounting (dpviz.privacy)",
    "registry": "the algorithm registry (dpviz.registry)",
    "release": "the release sampler (dpviz.privacy.release)",
}


_LOADED: dict[str, ModuleType] = {}


def _load(piece: str) -> tuple[ModuleType | None, str | None]:
    """Import a piece; successes are remembered, failures retried (the library may land later)."""
    if piece in _LOADED:
        return _LOADED[piece], None
    module, attrs = PIECES[piece]
    try:
        mod = importlib.import_module(module)
    except Exception as exc:  # ImportError, or an error inside a half-written module
        return None, f"{type(exc).__name__}: {exc}"
    absent = [a for a in attrs if not hasattr(mod, a)]
    if absent:
        return None, f"{module} does not define {', '.join(absent)} yet"
    _LOADED[piece] = mod
    return mod, None


def get(piece: str) -> ModuleType:
    """The module of a piece (raises ImportError if missing; check :func:`missing` first)."""
    mod, err = _load(piece)
    if mod is None:
        raise ImportError(err)
    return mod


def missing(*pieces: str) -> list[str]:
    """The pieces that are not available, each with the reason."""
    out = []
    for p in pieces:
        _, err = _load(p)
        if err:
            out.append(f"{_TITLES[p]} — {err}")
    return out


def require(*pieces: str) -> bool:
    """Show a clear notice and return False when a needed library piece is missing."""
    gone = missing(*pieces)
    if gone:
        st.warning(
            "This part of the app needs library pieces that are not available in this build:\n\n"
            + "\n".join(f"- {g}" for g in gone),
            icon=":material/construction:",
        )
        return False
    return True


def viz(name: str):
    """A figure builder from dpviz.viz (or one of its submodules) by name; None if absent."""
    try:
        mod = get("viz")
    except ImportError:
        return None
    if hasattr(mod, name):
        return getattr(mod, name)
    for info in pkgutil.iter_modules(mod.__path__):
        try:
            sub = importlib.import_module(f"{mod.__name__}.{info.name}")
        except Exception:  # a half-written module must not take the app down
            continue
        if hasattr(sub, name):
            return getattr(sub, name)
    return None


_VIZ: SimpleNamespace | None = None


def viz_modules() -> SimpleNamespace:
    """dpviz.viz's submodules by short name (data, storyboard, privacy, filters, noise, ...)."""
    global _VIZ
    if _VIZ is not None:
        return _VIZ
    mod = get("viz")
    out = {}
    for info in pkgutil.iter_modules(mod.__path__):
        try:
            out[info.name] = importlib.import_module(f"{mod.__name__}.{info.name}")
        except Exception:  # a half-written module must not take the app down
            continue
    _VIZ = SimpleNamespace(**out)
    return _VIZ


def presets() -> ModuleType:
    return importlib.import_module("dpviz.clustering.presets")
