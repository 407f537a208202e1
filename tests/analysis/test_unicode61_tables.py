"""The generated `unicode61` tables can be rebuilt: ICU data plus the real SQLite 3.40.1 give
back the committed module byte for byte.

Owns: the reproducibility check of `engine/analysis/tables/unicode61_data.py`. Must not
touch: the committed module (the generator renders into memory only).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine.analysis.tables import unicode61_data
from tests.ci_policy import skip_or_fail

PINNED_SQLITE_VERSION = "3.40.1"


@pytest.mark.slow
def test_generator_reproduces_the_committed_module() -> None:
    if sqlite3.sqlite_version != PINNED_SQLITE_VERSION:
        reason = (
            f"the unicode61 tables describe SQLite {PINNED_SQLITE_VERSION}; "
            f"this Python links SQLite {sqlite3.sqlite_version}"
        )
        skip_or_fail(reason, "the unicode61 table generator cannot be checked")
    from engine.analysis.tables import generate

    rendered = generate.render_module(generate.derive_tables())
    committed = Path(unicode61_data.__file__).read_text(encoding="utf-8")
    assert rendered == committed
