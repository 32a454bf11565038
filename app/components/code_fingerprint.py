"""What a precomputed sweep's numbers depend on, hashed: the library modules the sweep can import,
as code (issue 38).

The sweep engine (:mod:`dpviz.sweeps`), the non-private reference and every registered family
(the Compare page runs them all) are *roots*; :func:`module_closure` follows their imports
statically (``import``/``from … import`` of dpviz modules, relative imports, parent packages, and
the registry's discovery of every module of :data:`dpviz.registry.FAMILY_PACKAGES`), so a module
added to what the sweep imports is hashed without anyone listing it. Each module is hashed as
*code*: its syntax tree without docstrings, unparsed (:func:`normalized_source`), so a docstring,
a comment or a reformatting changes nothing, while any change to what runs does. Package data
files beside a hashed module (e.g. ``auto_rule.json``) are hashed byte for byte.

Pure Python (no Streamlit): ``app.components.sweep`` builds the precomputed file's key with it,
and a test checks that a traced sweep executes no library file outside the closure.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

PACKAGE = "dpviz"
#: The directory holding the dpviz package: the repository, or site-packages for an installed
#: wheel (where this module lives under dpviz_app/, not beside dpviz/: issue 37), found without
#: importing dpviz.
REPO = Path(importlib.util.find_spec(PACKAGE).origin).resolve().parents[1]


def _module_file(name: str) -> Path | None:
    """The source file of the dpviz module ``name`` (a package's ``__init__.py``), or None if
    ``name`` is no module (a function or class imported from one); found on disk, not imported."""
    base = REPO.joinpath(*name.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


@functools.cache
def _parsed(path: Path) -> tuple[frozenset[str], str]:
    """(the module names ``path`` imports, relative ones with their dots; its normalized code),
    from one parse."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return frozenset(_imported_names(tree)), ast.unparse(_strip_docstrings(tree))


def _imported_names(tree: ast.AST) -> set[str]:
    """Every ``import a.b`` and ``from a import b`` (as ``a`` and ``a.b``: b may be a submodule)
    in ``tree``, anywhere (function-level imports included); relative imports keep their dots."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            out.add(base)
            out.update(f"{base}.{alias.name}" if base.strip(".") else f"{base}{alias.name}"
                       for alias in node.names)
    return out


def _imports(name: str, path: Path) -> set[str]:
    """The dpviz modules ``name`` (source ``path``) imports, statically, relative ones resolved."""
    package = name if _is_package(path) else name.rpartition(".")[0]
    out: set[str] = set()
    for ref in _parsed(path)[0]:
        level = len(ref) - len(ref.lstrip("."))
        if level:
            parts = package.split(".")
            ref = ".".join([*parts[: len(parts) - (level - 1)], *([ref[level:]] if ref[level:] else [])])
        out.add(ref)
    return {m for m in out if m == PACKAGE or m.startswith(PACKAGE + ".")}


def family_packages() -> tuple[str, ...]:
    """:data:`dpviz.registry.FAMILY_PACKAGES`, read from the source of the module that discovers
    families (``dpviz/specs.py`` since the registry's split, issue 45; not imported)."""
    tree = ast.parse(_module_file(f"{PACKAGE}.specs").read_text())
    for node in tree.body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        if any(isinstance(t, ast.Name) and t.id == "FAMILY_PACKAGES" for t in targets):
            return tuple(ast.literal_eval(node.value))
    raise LookupError("dpviz/specs.py defines no FAMILY_PACKAGES")


def _family_modules() -> set[str]:
    """Every module of the registry's family packages (the registry imports them all on first
    use; read from the registry itself, so a new family package is followed)."""
    import pkgutil

    out: set[str] = set()
    for pkg_name in family_packages():
        path = _module_file(pkg_name)
        if path is None:
            continue
        out.add(pkg_name)
        out.update(f"{pkg_name}.{info.name}" for info in pkgutil.iter_modules([str(path.parent)]))
    return out


def module_closure(roots: Iterable[str]) -> dict[str, Path]:
    """The dpviz modules reachable from ``roots`` by import (with every parent package, and every
    family module once :mod:`dpviz.registry` is reached): module name → source file."""
    todo = list(roots)
    seen: dict[str, Path] = {}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _module_file(name)
        if path is None:  # a name imported from a module, not a module itself
            continue
        seen[name] = path = path.resolve()
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))  # parents run first
        todo.extend(_imports(name, path))
        if name == f"{PACKAGE}.specs":  # the registry's discovery (dpviz.registry re-exports it)
            todo.extend(_family_modules())
    return dict(sorted(seen.items()))


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def normalized_code(source: str) -> str:
    """``source`` without its docstrings, comments or formatting (``ast.unparse`` of its syntax
    tree with every module, class and function docstring removed)."""
    return ast.unparse(_strip_docstrings(ast.parse(source)))


def normalized_source(path: Path) -> str:
    """The code of ``path`` without its docstrings, comments or formatting (``ast.unparse`` of
    its syntax tree with every module, class and function docstring removed)."""
    return _parsed(path.resolve())[1]


def data_files(modules: dict[str, Path]) -> list[Path]:
    """Non-Python files in the directories of the hashed modules (a rule table, a JSON)."""
    dirs = sorted({p.parent for p in modules.values()})
    return [f for d in dirs for f in sorted(d.iterdir())
            if f.is_file() and f.suffix not in (".py", ".pyc")]


def digests(modules: dict[str, Path], extra: Iterable[Path] = ()) -> dict[str, str]:
    """Per file (path relative to the repository), the sha256 of its normalized code (a data file:
    of its bytes), 16 hex digits: the precomputed file records them, so a stale file can say which
    module changed."""
    root = REPO
    out: dict[str, str] = {}
    for path in [*modules.values(), *extra]:
        path = path.resolve()
        code = normalized_source(path).encode() if path.suffix == ".py" else path.read_bytes()
        out[str(path.relative_to(root))] = hashlib.sha256(code).hexdigest()[:16]
    for path in data_files(modules):
        out[str(path.resolve().relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return dict(sorted(out.items()))


def package_versions(names: Iterable[str]) -> tuple[str, ...]:
    """``name==version`` of each installed package (``name missing`` if not installed): numeric
    packages can change a seeded result, so a precomputed file is keyed on them too."""
    out = []
    for name in names:
        try:
            out.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            out.append(f"{name} missing")
    return tuple(out)


def tree_digest(extra: Iterable[Path] = (), versions: Iterable[str] = (), root: Path | None = None) -> str:
    """One 16-hex-digit sha256 of the raw bytes of every file of the package under ``root``
    (default: dpviz's), of the ``extra`` files and of ``versions``.

    A superset of what :func:`digests` reads, read as bytes: equal digests mean equal files, so a
    file stamped with this digest and a code hash still has that code hash, and nothing needs to
    be parsed to know it (parsing and unparsing ~100 modules cost a server's first page 2-7 s).
    """
    base = (REPO / PACKAGE) if root is None else root
    files = sorted(p for p in base.rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
    h = hashlib.sha256()
    for path in [*files, *sorted(Path(e).resolve() for e in extra)]:
        try:
            name = str(path.relative_to(base.parent))
        except ValueError:
            name = path.name
        h.update(f"{name}\0".encode())
        h.update(path.read_bytes())
        h.update(b"\0")
    for v in versions:
        h.update(f"{v}\0".encode())
    return h.hexdigest()[:16]


def combine(parts: dict[str, str], versions: Iterable[str] = ()) -> str:
    """One 16-hex-digit hash of the per-file digests and the package versions."""
    h = hashlib.sha256()
    for key, value in parts.items():
        h.update(f"{key}\0{value}\0".encode())
    for v in versions:
        h.update(f"{v}\0".encode())
    return h.hexdigest()[:16]
