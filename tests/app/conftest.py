"""App tests never write to the user's ~/.dpviz: every test gets its own ledger directory."""

from __future__ import annotations

import pytest

from dpviz.privacy.ledger_store import ENV


@pytest.fixture(autouse=True)
def ledger_dir(tmp_path, monkeypatch):
    """A fresh ``$DPVIZ_LEDGER_DIR`` for each test (the persistent release ledger)."""
    path = tmp_path / "ledgers"
    monkeypatch.setenv(ENV, str(path))
    return path
