"""How often the app names FriendlyCore in code outside its family folder (issue 33, item 3).

Counts, per file of ``app/`` (``app/components/friendlycore/`` left out), the source lines whose
*code* names FriendlyCore: an identifier (a name, attribute, import, argument or function name)
containing ``friendly`` or ``fc`` as a word part, or a string constant that is an algorithm name
or key (``"friendlycore"``, ``"friendlycore.<field>"``, ``"fc:<preset>"``, ``"_fc_..."``).
Docstrings, comments and prose strings (a constant with a space in it: a label, a sentence the
page shows) do not count. Prints one line per hit and the total.

    .venv/bin/python bench/app_names.py
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAMILY = ROOT / "app" / "components" / "friendlycore"
IDENT = re.compile(r"(^|_)(fc|friendly\w*)(_|$)|friendlycore", re.IGNORECASE)
NAME = re.compile(r"^(_?fc[:_]|friendlycore)", re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def hits(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    docs = _docstrings(tree)
    lines: dict[int, str] = {}
    for node in ast.walk(tree):
        word = None
        if isinstance(node, ast.Name):
            word = node.id
        elif isinstance(node, ast.Attribute):
            word = node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            word = node.name
        elif isinstance(node, (ast.arg, ast.keyword)):
            word = node.arg
        elif isinstance(node, ast.alias):
            word = node.asname or node.name
        elif isinstance(node, ast.ImportFrom):
            word = node.module
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            text = node.value
            if " " not in text and any(NAME.match(part) for part in re.split(r"[,\s]", text)):
                word = text
        if word and (IDENT.search(word) if not isinstance(node, ast.Constant) else True):
            lines.setdefault(node.lineno, word)
    return sorted(lines.items())


def main() -> int:
    total = 0
    for path in sorted((ROOT / "app").rglob("*.py")):
        if FAMILY in path.parents:
            continue
        for line, word in hits(path):
            total += 1
            print(f"{path.relative_to(ROOT)}:{line}: {word}")
    print(f"total: {total} line(s) of app code outside app/components/friendlycore/ name FriendlyCore")
    return 0


if __name__ == "__main__":
    sys.exit(main())
