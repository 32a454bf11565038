"""Family folders (issue 33): the page code of one algorithm family lives in
``app/components/<family>/``, where ``<family>`` is its registered name (FriendlyCore's:
``app/components/friendlycore/``). Generic code asks for a family's part by name here, so that
outside its folder the app names no algorithm (one default and one old-link mapping aside, in
``app/components/state.py``).

Parts a family folder may have: ``page`` (its live Explore page, ``app/components/live_pages.py``),
``form`` (its own fields in Explore's sidebar form, ``app/components/explore_form.py``),
``handoff`` (the parameters that open it in Explore from Compare), ``triage`` (the Data page's
verdict) and ``lesson`` (the Learn page's live example).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

#: The folder whose sub-folders are family folders.
ROOT = Path(__file__).resolve().parent


def module(name: str | None, part: str) -> ModuleType | None:
    """``app.components.<name>.<part>`` if the family folder ``name`` has that part, else None."""
    if not name or not name.isidentifier() or not (ROOT / name / f"{part}.py").is_file():
        return None
    return load(f"{__package__}.{name}.{part}")


def load(dotted: str) -> ModuleType:
    """Import a family module (or a page registered by name, ``live_pages.register``): the app's one
    import by discovery."""
    return importlib.import_module(dotted)
