"""Session keys declared with their owners (issue 38 item 4; issue 45 item 4).

``app/components/keys.py`` declares the keys more than one module reads or writes (the cross-page
state and the widgets two components share); a key one module uses is declared by that module, at
its top, as ``NAME: Key[T] = Key("name", T, "doc")``. These tests read every module's
declarations from its source (the pages are scripts, not importable) and check that every key is
declared once, with a type and a description; that no module spells a key as a literal (so an
undeclared key fails); that keys.py holds only keys two modules use; and that no module uses a key
another module owns.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import re
import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from app.components import keys

APP = Path(__file__).resolve().parents[2] / "app"
KEYS_PY = APP / "components" / "keys.py"
#: Every module of the app (pages, components, family folders, precompute scripts).
MODULES = sorted(APP.rglob("*.py"))
#: Every module of the app but keys.py.
COVERED = [p for p in MODULES if p != KEYS_PY]

#: Strings that equal a declared key where they are not a session key: (module, string) → what
#: they are there. Kept short: a new entry needs a reason a reviewer can check.
NOT_KEYS = {
    ("app/components/downloads.py", "answered_by"): "a column of the centers CSV",
    ("app/components/friendlycore/page.py", "answered_by"): "a field of the downloaded configuration",
    ("app/components/friendlycore/page.py", "feasibility"): "a ledger step's name (Result.find)",
    ("app/components/friendlycore/triage.py", "clustering_verdict"): "a per-session cache's name",
}

_NAME = r"([A-Za-z_][A-Za-z0-9_]*)"
#: Where a session key is spelled: a widget's ``key=`` (or a ``key: str = `` default, a
#: ``key = `` assignment), a form's first argument, session_state's item and get/pop/setdefault,
#: and the app's helpers that take a key (state.seed_widget/on_change, modes.simulation_badge).
_SPOT = (r"(?:\bkey\s*=\s*|\bkey:\s*str\s*=\s*|\.form\(\s*|session_state\[|"
         r"session_state\.(?:get|pop|setdefault)\(|seed_widget\([^,]+,\s*|on_change\([^,]+,\s*|"
         r"simulation_badge\()\s*")
#: A literal key, the literal prefix of an f-string key (``f"csv_fill_{digest}"``), a literal
#: tested with ``in st.session_state``, and a key in a CSS selector (``.st-key-<key>``).
_LITERAL_KEYS = [re.compile(_SPOT + '"' + _NAME + '"'), re.compile(_SPOT + 'f"' + _NAME + r"\{"),
                 re.compile('"' + _NAME + r'"\s+(?:not\s+)?in\s+st\.session_state'),
                 re.compile(r"\.st-key-" + _NAME + r"(?![A-Za-z0-9_{])")]
#: The calls that declare a key: ``Key(...)`` / ``keys.Key(...)`` (an owner), ``_declare(...)``
#: (keys.py).
_DECLARERS = {"Key", "_declare"}


@dataclass(frozen=True)
class Declared:
    """One key declaration: ``name: Key[T] = Key(key, value_type, doc)`` at a module's top level."""

    module: str  # path relative to the repository
    name: str  # the constant
    key: str  # the key string
    value_type: str  # the type's source
    doc: str
    line: int


@functools.cache
def _source(path: Path) -> str:
    return path.read_text()


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's parsed source (parsed once for every test here)."""
    return ast.parse(_source(path))


def _rel(path: Path) -> str:
    return str(path.relative_to(APP.parent))


def _is_declarer(call: ast.AST) -> bool:
    if not isinstance(call, ast.Call):
        return False
    f = call.func
    return (isinstance(f, ast.Name) and f.id in _DECLARERS) or \
        (isinstance(f, ast.Attribute) and f.attr == "Key")


def _declarations_in(tree: ast.Module, module: str) -> tuple[list[Declared], list[int]]:
    """(the declarations at the module's top level, lines of declaring calls anywhere else)."""
    found, top_calls = [], set()
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        call = getattr(node, "value", None)
        if isinstance(target, ast.Name) and _is_declarer(call) and call.args \
                and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
            args = call.args
            vtype = ast.unparse(args[1]) if len(args) > 1 else ""
            doc = args[2].value if len(args) > 2 and isinstance(args[2], ast.Constant) else ""
            found.append(Declared(module, target.id, args[0].value, vtype, doc, node.lineno))
            top_calls.add(id(call))
    stray = [n.lineno for n in ast.walk(tree) if _is_declarer(n) and id(n) not in top_calls
             and not (isinstance(n.func, ast.Name) and n.func.id == "Key" and module == _rel(KEYS_PY))]
    return found, stray


def _declarations() -> list[Declared]:
    return [d for p in MODULES for d in _declarations_in(_tree(p), _rel(p))[0]]


DECLARED: dict[str, Declared] = {d.key: d for d in _declarations()}


def _docstrings(tree: ast.AST) -> list[ast.Constant]:
    docs = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            docs.append(body[0].value)
    return docs


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """String constants of a module that are neither docstrings nor a declaration's arguments."""
    tree = _tree(path)
    skip = {id(d) for d in _docstrings(tree)}
    skip |= {id(a) for n in ast.walk(tree) if _is_declarer(n) for a in n.args}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]


@functools.cache
def _literal_keys(text: str) -> list[tuple[int, str]]:
    """(line, name) of every key a module's source spells as a literal (or a literal prefix) where
    a key goes, outside docstrings."""
    doc_lines = {i for d in _docstrings(ast.parse(text)) for i in range(d.lineno, d.end_lineno + 1)}
    return [(i, m.group(1)) for i, line in enumerate(text.splitlines(), 1) if i not in doc_lines
            for pattern in _LITERAL_KEYS for m in pattern.finditer(line)]


def _module_of(dotted: str) -> str | None:
    """The repository path of an app module named ``app.x.y`` (a module or a package)."""
    base = APP.parent / dotted.replace(".", "/")
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return _rel(p)
    return None


def _foreign_uses(tree: ast.Module, module: str, owned: dict[tuple[str, str], Declared]) -> list[str]:
    """Uses in ``module`` of a key constant another module owns (``owned``: (module, constant) →
    its declaration): ``from app.x import NAME`` or ``alias.NAME`` where ``alias`` is that module."""
    aliases: dict[str, str] = {}
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                target = _module_of(a.name)
                if target and a.asname:
                    aliases[a.asname] = target
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            source = _module_of(node.module)
            for a in node.names:
                sub = _module_of(f"{node.module}.{a.name}")
                if sub:
                    aliases[a.asname or a.name] = sub
                elif source and (source, a.name) in owned and source != module:
                    uses.append(f"{module}:{node.lineno}: imports {a.name} from {source}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            target = aliases.get(node.value.id)
            if target and target != module and (target, node.attr) in owned:
                uses.append(f"{module}:{node.lineno}: {node.value.id}.{node.attr} is {target}'s key")
    for node in ast.walk(tree):  # a dotted ``app.components.x.NAME`` without an alias
        if isinstance(node, ast.Attribute):
            dotted = ast.unparse(node.value)
            target = _module_of(dotted) if dotted.startswith("app.") else None
            if target and target != module and (target, node.attr) in owned:
                uses.append(f"{module}:{node.lineno}: {dotted}.{node.attr} is {target}'s key")
    return uses


def _owned() -> dict[tuple[str, str], Declared]:
    return {(d.module, d.name): d for d in DECLARED.values() if d.module != _rel(KEYS_PY)}


def _keys_py_users() -> dict[str, set[str]]:
    """keys.py's constant → the modules that use it as ``keys.NAME``."""
    users: dict[str, set[str]] = {}
    for p in COVERED:
        for m in re.finditer(r"\bkeys\.([A-Z][A-Z0-9_]*)\b", _source(p)):
            users.setdefault(m.group(1), set()).add(_rel(p))
    return users


# ----------------------------------------------------------------------------- declarations


def test_the_declarations_are_found_in_keys_py_and_in_their_owners():
    """The finder sees keys.py's declarations (all of keys.ALL) and the owners' (so the checks
    below are not blind): the app has more than 250 keys, and most are declared by their owner."""
    in_keys = {d.key for d in DECLARED.values() if d.module == _rel(KEYS_PY)}
    assert in_keys == set(keys.ALL)
    owners = {d.module for d in DECLARED.values()} - {_rel(KEYS_PY)}
    assert len(DECLARED) > 250 and len(DECLARED) - len(in_keys) > 200 and len(owners) >= 20


def test_no_key_is_declared_twice():
    counts = Counter(d.key for p in MODULES for d in _declarations_in(_tree(p), _rel(p))[0])
    assert not [k for k, c in counts.items() if c > 1], counts.most_common(5)


def test_keys_are_declared_at_a_modules_top_level_only():
    """A key made inside a function or a class would escape the checks here."""
    stray = [f"{_rel(p)}:{line}" for p in MODULES
             for line in _declarations_in(_tree(p), _rel(p))[1]]
    assert not stray, stray


def test_every_key_has_a_type_and_a_description():
    types = {n for n, v in vars(builtins).items() if isinstance(v, type)}
    for d in DECLARED.values():
        assert d.value_type in types and d.doc, d
    for name, key in keys.ALL.items():
        assert key == name and isinstance(key, str) and hash(key) == hash(name)
        assert isinstance(key.value_type, type) and key.doc


def test_an_importable_owners_keys_are_keys():
    """Components (the pages are scripts) hold a typed :class:`keys.Key` under each declared name."""
    for d in DECLARED.values():
        if d.module.startswith("app/components/") and d.module != _rel(KEYS_PY):
            module = importlib.import_module(d.module.removesuffix(".py").replace("/", "."))
            key = getattr(module, d.name)
            assert isinstance(key, keys.Key) and key == d.key and key.value_type.__name__ == d.value_type, d


# ----------------------------------------------------------------------------- spelling


def test_the_covered_modules_spell_no_declared_key_as_a_literal():
    found = [f"{_rel(p)}:{line}: {text!r}" for p in COVERED for line, text in _code_strings(p)
             if text in DECLARED and (_rel(p), text) not in NOT_KEYS]
    assert not found, found


def test_no_module_spells_an_undeclared_key():
    """Every key (or key prefix) spelled where a key goes is declared (in keys.py or by its owner):
    together with the test above, no module of the app spells a session key as a literal."""
    found = [f"{_rel(p)}:{line}: {name!r}" for p in COVERED
             for line, name in _literal_keys(_source(p)) if name not in DECLARED]
    assert not found, f"{len(found)} undeclared literal keys: {found}"


def test_the_literal_key_finder_finds_each_spelling():
    """The finder above sees each way a key can be spelled (so its zero is not a blind spot)."""
    src = textwrap.dedent('''\
        """A docstring: key="in_a_docstring" is not code."""
        st.button("Go", key="a_key")
        st.session_state["b_key"] = 1
        st.session_state.get("c_key")
        state.seed_widget("x", "d_key")
        st.number_input("v", key=f"e_prefix_{i}")
        if "f_key" not in st.session_state:
            pass
        CSS = ".st-key-g_key input"
        with st.form("h_form"):
            pass
        def f(*, key: str = "i_key"):
            pass
        modes.simulation_badge("j_badge")
        st.radio("r", [], on_change=state.on_change("p", "k_key", int))
        ok = f".st-key-{keys.EPS_SLIDER} input"
        st.session_state[keys.EX_K] = 2
        OWN: Key[int] = Key("own_key", int, "a declaration is no literal use")
        ''')
    got = [name for _, name in _literal_keys(src)]
    assert sorted(got) == ["a_key", "b_key", "c_key", "d_key", "e_prefix_", "f_key", "g_key", "h_form",
                           "i_key", "j_badge", "k_key"]


def test_each_exception_is_still_there():
    """A NOT_KEYS entry whose string left its module is stale."""
    for (module, text), _reason in NOT_KEYS.items():
        assert text in DECLARED and any(t == text for _, t in _code_strings(APP.parent / module)), module


# ----------------------------------------------------------------------------- owners


def test_keys_py_holds_only_keys_more_than_one_module_uses():
    """A key one module uses belongs to that module (declared at its top), not to keys.py."""
    users = _keys_py_users()
    alone = {d.name: sorted(users.get(d.name, ())) for d in DECLARED.values()
             if d.module == _rel(KEYS_PY) and len(users.get(d.name, ())) < 2}
    assert not alone, f"declare these in their one module (or delete them): {alone}"


def test_no_module_uses_a_key_another_module_owns():
    """A key two modules use is moved to keys.py; an owner's key is its own."""
    owned = _owned()
    found = [u for p in COVERED for u in _foreign_uses(_tree(p), _rel(p), owned)]
    assert not found, found


def test_the_foreign_use_finder_finds_each_spelling():
    """The finder above sees an owner's key used through each import form."""
    owned = {("app/components/state.py", "PARAMS_KEY"): None,
             ("app/components/friendlycore/live.py", "VECTOR"): None}
    src = textwrap.dedent('''\
        import app.components.state
        from app.components import state
        from app.components import state as s
        from app.components.friendlycore import live as explore_live
        from app.components.state import PARAMS_KEY
        a = state.PARAMS_KEY
        b = s.PARAMS_KEY
        c = explore_live.VECTOR
        d = app.components.state.PARAMS_KEY
        e = state.params()
        ''')
    uses = _foreign_uses(ast.parse(src), "app/views/explore.py", owned)
    assert [u.split(":")[1] for u in uses] == ["5", "6", "7", "8", "9"], uses
    assert _foreign_uses(ast.parse(src), "app/components/state.py",
                         {("app/components/state.py", "PARAMS_KEY"): None}) == []


def test_every_declared_key_is_used_by_its_module():
    """keys.py's keys are used elsewhere as ``keys.NAME``; an owner's key in its own module."""
    users = _keys_py_users()
    unused = []
    for d in DECLARED.values():
        if d.module == _rel(KEYS_PY):
            used = bool(users.get(d.name))
        else:
            used = len(re.findall(rf"\b{d.name}\b", _source(APP.parent / d.module))) > 1
        if not used:
            unused.append(f"{d.module}: {d.name}")
    assert not unused, unused


def test_the_key_list_in_main_names_keys_that_exist():
    doc = ast.get_docstring(_tree(APP / "main.py"))
    listed = set(re.findall(r"``([a-z_]+)``", doc[doc.index("Stable widget keys"):]))
    code = "\n".join(_source(p) for p in MODULES)
    missing = sorted(k for k in listed if f'"{k}"' not in code and k not in DECLARED)
    assert not missing, missing
