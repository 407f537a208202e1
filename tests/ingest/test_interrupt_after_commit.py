"""A Ctrl-C that comes after a live import has committed (engine.ingest.into_store).

The import's `warn` is called after the commit for a source it set aside; a `warn` that
raises `KeyboardInterrupt` stands for a Ctrl-C landing in the steps after the commit.
The interrupt reaches the caller as `InterruptedAfterCommit` carrying the committed
report (what `watch` sums: its summary once lost such a pass), the store holds what was
committed, and a store the import created is kept, not removed as a failed import's is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.ingest import live_import_into_store
from engine.ingest.into_store import InterruptedAfterCommit
from tests.ingest.test_live_state import append_lines, counts, hits, sessions_of
from tests.ingest.test_openclaw_state import build_state


def _interrupting_warn(message: str) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_an_interrupt_after_the_commit_carries_what_was_committed(
        tmp_path: Path, backend: str) -> None:
    state = build_state(tmp_path / "state")
    append_lines(sessions_of(state) / "uuid-2.jsonl", [{"type": "message", "id": "z"}])
    store = tmp_path / "store"
    with pytest.raises(InterruptedAfterCommit) as raised:
        live_import_into_store(store, backend, state, warn=_interrupting_warn)
    report = raised.value.report
    assert isinstance(raised.value, KeyboardInterrupt)
    assert (report.added, report.events) == (4, 6)  # uuid-2 set aside, the rest committed
    assert counts(store) == (4, 6)  # the new store was kept
    assert hits(store, "live") == [("uuid-1", "a1b2c3d4")]

