"""The README's algorithm table is the registry's (regenerate it with dpviz.registry.markdown_table)."""

from __future__ import annotations

from pathlib import Path

from dpviz.registry import markdown_table

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_lists_every_registered_algorithm_as_the_registry_states_it():
    text = README.read_text()
    assert markdown_table() in text, (
        "README's algorithm table is out of date: paste the output of "
        "`python -c 'import dpviz; print(dpviz.registry.markdown_table())'`")
