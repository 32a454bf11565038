"""Explore's live pages, one hook for every algorithm (issue 26).

An algorithm whose Explore view is richer than the generic one (a live main panel and chart, a
mark on the slider) registers its page here: ``register(name, module)``, where the module has
``render(ds, spec, radius)``. Explore (``app/views/explore.py``) calls :func:`render` for every
algorithm; an algorithm without a registered page gets ``algorithm_view.render`` (its form, the
row-level ε slider, its storyboard and registered explorations).

A family's folder registers itself by being there: ``app/components/<family>/page.py``, where
``<family>`` is the registered algorithm name, is discovered on first use (issue 33; FriendlyCore's
is ``app/components/friendlycore/``). Its row-level ε control, own-budget readout, plan,
explorations, step-through and prefetch are the shared ones (docs/registry.md); nothing here names
a family.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from app.components import algorithm_view, data_source, families

#: The folder whose sub-folders are family folders (``<family>/page.py``).
FAMILIES = families.ROOT


def discover(root: Path = FAMILIES, package: str = "app.components") -> dict[str, str]:
    """``{family: module}`` for every ``<root>/<family>/page.py`` (the family's registered name)."""
    return {page.parent.name: f"{package}.{page.parent.name}.page"
            for page in sorted(root.glob("*/page.py"))}


_PAGES: dict[str, str] = discover()


def register(name: str, module: str) -> None:
    """Explore draws algorithm ``name`` with ``module``'s ``render(ds, spec, radius)``."""
    _PAGES[name] = module


def registered() -> dict[str, str]:
    return dict(_PAGES)


def render(ds, spec, radius: float) -> None:
    """Explore for ``spec`` on ``ds``: its registered live page, or the generic one."""
    module = _PAGES.get(spec.name)
    if module is not None:
        families.load(module).render(ds, spec, radius)
        return
    st.markdown(data_source.describe(ds) + f" · Λ used = {radius:g}")
    algorithm_view.render(ds, spec, radius)
