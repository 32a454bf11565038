"""App tests never write to the user's ~/.dpviz: every test gets its own ledger directory. Nor do
they read the committed precomputed sweeps (``DPVIZ_PRECOMPUTED=0``): a test's outcome never
depends on whether that file is current (tests/app/test_budget_shared.py checks the file itself)."""

from __future__ import annotations

import pytest

from dpviz.privacy.ledger_store import ENV


@pytest.fixture(autouse=True)
def ledger_dir(tmp_path, monkeypatch):
    """A fresh ``$DPVIZ_LEDGER_DIR`` for each test (the persistent release ledger)."""
    path = tmp_path / "ledgers"
    monkeypatch.setenv(ENV, str(path))
    return path


@pytest.fixture(autouse=True)
def no_precomputed_sweeps(monkeypatch):
    """Sweeps come from the session or the server's sessions, never from the committed file."""
    monkeypatch.setenv("DPVIZ_PRECOMPUTED", "0")
