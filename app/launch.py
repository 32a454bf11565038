"""Serve the app with its imports done before the server listens (issue 43 item 4).

    python -m app.launch [streamlit run options]     (from the directory holding app/)

This is ``python -m streamlit run app/main.py [options]`` (Streamlit's own command-line entry,
in this process) after importing the library, the scientific stack and the app's components.
Streamlit runs ``app/main.py`` only when a browser opens a session, so under plain ``streamlit
run`` the first visitor of a fresh server waited for ~1,500 modules (dpviz, scikit-learn, SciPy,
pandas, Plotly: ~1.6 s on an idle core, several seconds on a busy one) before the first page
could draw; here the server pays for them before it answers at all, as a pre-loading web server
does. ``make run``, ``dpviz app``, the benches and the browser tests all start the app this way.

Nothing here reads a user's data or draws anything: the app's page scripts (``app/views/``) are
not imported (they draw when run), only modules that define things. The one file read is the
shipped precomputed simulation of public synthetic data (:func:`warm`).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path

#: The app's entry point (what ``streamlit run`` is given).
MAIN = Path(__file__).resolve().with_name("main.py")
#: The heavy libraries every page reaches (through :mod:`dpviz` or the app's components), and
#: Streamlit's emoji catalog (compiled when a page first shows a message with a non-ASCII
#: character: 0.8 s of Compare's first open on a busy machine, py-spy).
LIBRARIES = ("dpviz", "dpviz.registry", "sklearn.cluster", "scipy.stats", "pandas",
             "plotly.graph_objects", "plotly.io", "streamlit.emojis")


def preload() -> list[str]:
    """Import :data:`LIBRARIES` and every module under ``app.components``; their names."""
    import app.components as components

    names = [*LIBRARIES, *(m.name for m in pkgutil.walk_packages(components.__path__,
                                                                  "app.components."))]
    for name in names:
        importlib.import_module(name)
    return names


def warm() -> int:
    """Parse the precomputed sweeps (public synthetic data: :func:`app.components.sweep.load_precomputed`,
    cached for the process) that Compare's and Budget's first screens read: 60 % of Compare's first
    open on a fresh server (py-spy, issue 43 item 4). Returns how many sweeps it holds (0 when the
    file is missing, turned off or made under other code)."""
    from app.components import sweep

    return len(sweep.load_precomputed())


def main(argv: Sequence[str] | None = None) -> None:
    """Preload and warm, then hand over to Streamlit's ``run`` command on :data:`MAIN` (exits
    with it)."""
    preload()
    warm()
    from streamlit.web import cli

    options = list(sys.argv[1:] if argv is None else argv)
    cli.main(args=["run", str(MAIN), *options], prog_name="streamlit")


if __name__ == "__main__":
    main()
