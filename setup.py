"""The package layout for setuptools (the metadata and dependencies are in pyproject.toml).

The wheel holds two top-level directories, mirroring the repository (whose layout stays
``dpviz/`` and ``app/`` side by side):

- ``dpviz/``: the library, every package under ``dpviz/`` (discovered, so a new subpackage needs
  no edit here) and its data files (``clustering/auto_rule.json``).
- ``dpviz_app/``: the web app as the repository lays it out — ``dpviz_app/app/`` (the ``app``
  package, its page scripts ``views/*.py``, ``precomputed/*.json`` and ``favicon.svg``) and
  ``dpviz_app/.streamlit/config.toml``. ``dpviz app`` (:mod:`dpviz.serve`) runs
  ``python -m app.launch`` (``streamlit run app/main.py`` after its imports) from ``dpviz_app/``, as ``make run`` does from the
  repository root, so Streamlit reads the same settings and ``app/main.py`` puts ``dpviz_app/``
  on ``sys.path`` for ``import app``. The app is not installed as a top-level ``app`` package:
  that name belongs to no one and would shadow (or be shadowed by) any other ``app``.

``bench/``, ``tests/``, ``assets/`` and ``docs/`` are not installed.
"""

from setuptools import find_packages, setup

APP_PACKAGES = [f"dpviz_app.{name}" for name in find_packages(include=["app", "app.*"])]

setup(
    packages=[*find_packages(include=["dpviz", "dpviz.*"]), "dpviz_app", *APP_PACKAGES],
    package_dir={"dpviz_app": "."},
    package_data={
        "dpviz": ["**/*.json"],
        "dpviz_app": [".streamlit/config.toml"],
        "dpviz_app.app": ["views/*.py", "precomputed/*.json", "favicon.svg"],
    },
    include_package_data=False,  # exactly the files above: nothing else of the checkout
)
