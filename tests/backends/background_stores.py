"""Stores with windows for the background reconcile to rebuild, and the checks after it
(shared by `tests/backends/test_background_reconcile.py` and
`tests/durability/test_killed_background_reconcile.py`).

The rebuilt windows are made by a rewind: `m1` "alpha origin", `m2` "beta abandoned",
then the leaf moved back to `m1`, all in one transaction. The forward indexer indexes
both messages and then marks the window dirty (§8.1), so its "beta" row exists but is
hidden until the rebuild, which drops it (it is off the active branch) and keeps
"alpha". So "beta" must never be found, before, during or after a run.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.backends.postgres.backend import PostgresBackend
from engine.backends.postgres.verify import verify_postgres_backend
from engine.backends.reference.backend import ReferenceBackend
from engine.backends.sqlite.backend import SqliteBackend
from engine.config import EngineConfig
from engine.diagnostics.verify import verify_backend
from engine.model import SearchRequest, SessionWindow
from engine.store.partitioned import PartitionedStore
from engine.store.registry import open_backend
from engine.transcript.projection import index_entries

BACKENDS = ("reference", "sqlite", "postgres")
#: Every window in its own batch, so that a run takes many batches.
SMALL_BATCHES = EngineConfig(reconcile_batch_events=1)
QUIET = EngineConfig(background_reconcile=False)
DEFAULTS = EngineConfig()
EVERY_AGENT = ()  # `session_keys=()`: every partition


def message(message_id: str, parent: str | None, text: str, timestamp: int) -> dict:
    """A user message event."""
    return {"type": "message", "id": message_id, "parentId": parent, "timestamp": timestamp,
            "message": {"role": "user", "content": text}}


def write_rewound(store: PartitionedStore, agents: tuple[str, ...], count: int,
                  start: int = 0) -> list[str]:
    """`count` rewound (dirty) windows, spread over `agents` (numbered from `start`);
    their session ids."""
    session_ids = []
    with store.transaction() as transaction:
        for number in range(start, start + count):
            agent = agents[number % len(agents)]
            session_id = f"r{number:03d}"
            transaction.put_window(SessionWindow(session_id, f"agent:{agent}:{session_id}"))
            transaction.append_event(session_id, message("m1", None, f"alpha origin {number}",
                                                         1000 + number))
            transaction.append_event(session_id, message("m2", "m1", "beta abandoned",
                                                         2000 + number))
            transaction.append_event(session_id, {"type": "leaf", "id": "l1", "parentId": "m2",
                                                  "targetId": "m1"})
            session_ids.append(session_id)
    return session_ids


def write_clean(store: PartitionedStore, session_id: str, texts: list[str]) -> None:
    """A window indexed as it is written (never needing work)."""
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow(session_id, f"agent:main:{session_id}"))
        parent = None
        for number, text in enumerate(texts):
            transaction.append_event(session_id, message(f"c{number}", parent, text, 5000 + number))
            parent = f"c{number}"


def append_clean(store: PartitionedStore, session_id: str, number: int, text: str) -> None:
    """Message `c<number>` after `c<number - 1>` in a window of `write_clean`."""
    with store.transaction() as transaction:
        transaction.append_event(session_id, clean_message(number, text))


def clean_message(number: int, text: str) -> dict:
    """The `number`th message of a window of `write_clean`."""
    return message(f"c{number}", f"c{number - 1}" if number else None, text, 5000 + number)


def search(store: PartitionedStore, query: str) -> tuple[set[str], bool]:
    """The windows of the hits for `query` over every partition, and `indexing`."""
    result = store.search(SearchRequest(query=query, session_keys=EVERY_AGENT, limit=25))
    return {hit.session_id for hit in result.hits}, result.indexing


def sqlite_writer(partition: object) -> sqlite3.Connection:
    """The writer connection of a SQLite partition, for a test that reaches below the
    write path on purpose (to make a state no write of the store makes)."""
    assert isinstance(partition, SqliteBackend)
    connection = partition._writer
    assert connection is not None
    return connection


def make_store(tmp_path: Path, backend: str,
               config: EngineConfig = DEFAULTS) -> PartitionedStore:
    """A new store of `backend` in `tmp_path`, opened as the writer with `config`."""
    return open_backend(tmp_path / backend, backend=backend, create=True, config=config)


def assert_index_equals_a_rebuild(store: PartitionedStore) -> None:
    """Every partition's index rows are those a full rebuild from its transcripts gives,
    and nothing needs work."""
    assert not store.index_status()
    for partition in store.partitions().values():
        if isinstance(partition, ReferenceBackend):
            assert verify_backend(partition).problems == []
            continue
        if isinstance(partition, PostgresBackend):
            assert verify_postgres_backend(partition).problems == []
            continue
        assert isinstance(partition, SqliteBackend)
        expected = {(entry.session_id, entry.message_id)
                    for window in partition.windows()
                    for entry in index_entries(partition.events(window.session_id))}
        with sqlite3.connect(f"file:{partition.path}?mode=ro", uri=True) as connection:
            rows = set(connection.execute(
                "SELECT session_id, message_id FROM session_transcript_fts_rows"))
        assert rows == expected
