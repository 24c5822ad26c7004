from __future__ import annotations

from pathlib import Path

import pytest

from mayi_table.table.journal import Journal


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    """An empty journal in a temporary folder."""
    return Journal(tmp_path / "j.sqlite3")
