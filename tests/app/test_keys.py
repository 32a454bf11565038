"""Session keys in one typed module (issue 38, item 4): ``app/components/keys.py`` declares every
key with the type of its value; the modules it covers use the names, not literals; and the key
list in ``app/main.py``'s docstring names keys that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from app.components import keys

APP = Path(__file__).resolve().parents[2] / "app"
#: Modules that use the declared names (the pages listed and the components).
COVERED = [APP / "main.py", APP / "views" / "explore.py", APP / "views" / "present.py",
           APP / "views" / "learn.py", APP / "views" / "data.py",
           APP / "views" / "budget.py", APP / "views" / "compare.py",
           APP / "views" / "release.py", APP / "views" / "generate.py", APP / "views" / "mixtures.py",
           *(p for p in sorted((APP / "components").rglob("*.py"))
             if p.name != "keys.py")]


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """String constants of a module that are not docstrings."""
    tree = ast.parse(path.read_text())
    docs = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            docs.add(id(body[0].value))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_every_key_has_a_type_and_a_description_and_is_a_plain_string():
    assert len(keys.ALL) >= 40
    for name, key in keys.ALL.items():
        assert key == name and isinstance(key, str) and hash(key) == hash(name)
        assert isinstance(key.value_type, type) and key.doc


def test_the_covered_modules_spell_no_declared_key_as_a_literal():
    found = [f"{p.relative_to(APP.parent)}:{line}: {text!r}" for p in COVERED
             for line, text in _code_strings(p) if text in keys.ALL]
    assert not found, found


def test_every_declared_key_is_used_by_the_app():
    names = {n for n, v in vars(keys).items() if isinstance(v, keys.Key)}
    code = "\n".join(p.read_text() for p in APP.rglob("*.py") if p.name != "keys.py")
    unused = [n for n in names if f"keys.{n}" not in code and f'"{keys.ALL[getattr(keys, n)]}"' not in code]
    assert not unused, unused


def test_the_key_list_in_main_names_keys_that_exist():
    doc = ast.get_docstring(ast.parse((APP / "main.py").read_text()))
    listed = set(re.findall(r"``([a-z_]+)``", doc[doc.index("Stable widget keys"):]))
    code = "\n".join(p.read_text() for p in APP.rglob("*.py"))
    missing = sorted(k for k in listed if f'"{k}"' not in code and k not in keys.ALL)
    assert not missing, missing
