"""Session keys in one typed module (issue 38, item 4): ``app/components/keys.py`` declares every
key with the type of its value; the modules it covers use the names, not literals; and the key
list in ``app/main.py``'s docstring names keys that exist."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

from app.components import keys

APP = Path(__file__).resolve().parents[2] / "app"
#: Every module of the app but keys.py (pages, components, family folders, precompute scripts).
COVERED = sorted(p for p in APP.rglob("*.py") if p.name != "keys.py")

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


def _docstrings(tree: ast.AST) -> list[ast.Constant]:
    docs = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            docs.append(body[0].value)
    return docs


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """String constants of a module that are not docstrings."""
    tree = ast.parse(path.read_text())
    docs = {id(d) for d in _docstrings(tree)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def _literal_keys(text: str) -> list[tuple[int, str]]:
    """(line, name) of every key a module's source spells as a literal (or a literal prefix) where
    a key goes, outside docstrings."""
    doc_lines = {i for d in _docstrings(ast.parse(text)) for i in range(d.lineno, d.end_lineno + 1)}
    return [(i, m.group(1)) for i, line in enumerate(text.splitlines(), 1) if i not in doc_lines
            for pattern in _LITERAL_KEYS for m in pattern.finditer(line)]


def test_every_key_has_a_type_and_a_description_and_is_a_plain_string():
    assert len(keys.ALL) >= 40
    for name, key in keys.ALL.items():
        assert key == name and isinstance(key, str) and hash(key) == hash(name)
        assert isinstance(key.value_type, type) and key.doc


def test_the_covered_modules_spell_no_declared_key_as_a_literal():
    found = [f"{p.relative_to(APP.parent)}:{line}: {text!r}" for p in COVERED
             for line, text in _code_strings(p)
             if text in keys.ALL and (str(p.relative_to(APP.parent)), text) not in NOT_KEYS]
    assert not found, found


def test_no_module_spells_an_undeclared_key():
    """Every key (or key prefix) spelled where a key goes is declared in keys.py: together with the
    test above, no module of the app spells a session key as a literal."""
    found = [f"{p.relative_to(APP.parent)}:{line}: {name!r}" for p in COVERED
             for line, name in _literal_keys(p.read_text()) if name not in keys.ALL]
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
        ''')
    got = [name for _, name in _literal_keys(src)]
    assert sorted(got) == ["a_key", "b_key", "c_key", "d_key", "e_prefix_", "f_key", "g_key", "h_form",
                           "i_key", "j_badge", "k_key"]


def test_each_exception_is_still_there():
    """A NOT_KEYS entry whose string left its module is stale."""
    for (module, text), _reason in NOT_KEYS.items():
        assert text in keys.ALL and any(t == text for _, t in _code_strings(APP.parent / module)), module


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
