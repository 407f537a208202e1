"""The store's background reconcile (`engine.backends.background`), on both backends.

A search on a writer's store that finds windows needing work answers with what is
consistent and `indexing: true`, and starts the worker; once it ends, the same search
finds the rebuilt windows' hits with `indexing: false`. Meanwhile no hit of a window
needing a rebuild is returned, application writes go through and are kept, closing stops
the run cleanly (the next open reconciles the rest), a reader never starts one, and the
watchdog ends a run past its budget. The kill -9 during a background run is in
`tests/durability/test_killed_background_reconcile.py`.

The rebuilt windows are made by a rewind: `m1` "alpha origin", `m2` "beta abandoned",
then the leaf moved back to `m1`, all in one transaction. The forward indexer indexes
both messages and then marks the window dirty (§8.1), so its "beta" row exists but is
hidden until the rebuild, which drops it (it is off the active branch) and keeps
"alpha". So "beta" must never be found, before, during or after the run.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from engine.backends.partitioned import PartitionedStore
from engine.backends.reference import ReferenceBackend
from engine.backends.registry import open_backend
from engine.backends.sqlite_fts5 import DATABASE_NAME, SqliteBackend
from engine.config import EngineConfig
from engine.diagnostics.verify import verify_backend
from engine.model import SearchRequest, SessionWindow
from engine.transcript.projection import index_entries

BACKENDS = ("reference", "sqlite")
#: Every window in its own batch, so that a run takes many batches.
SMALL_BATCHES = EngineConfig(reconcile_batch_events=1)
QUIET = EngineConfig(background_reconcile=False)
EVERY_AGENT = ()  # `session_keys=()`: every partition


def message(message_id: str, parent: str | None, text: str, timestamp: int) -> dict:
    return {"type": "message", "id": message_id, "parentId": parent, "timestamp": timestamp,
            "message": {"role": "user", "content": text}}


def write_rewound(store: PartitionedStore, agents: tuple[str, ...], count: int) -> list[str]:
    """`count` rewound (dirty) windows, spread over `agents`; their session ids."""
    session_ids = []
    with store.transaction() as transaction:
        for number in range(count):
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
    with store.transaction() as transaction:
        parent = f"c{number - 1}" if number else None
        transaction.append_event(session_id, message(f"c{number}", parent, text, 5000 + number))


def search(store: PartitionedStore, query: str) -> tuple[set[str], bool]:
    result = store.search(SearchRequest(query=query, session_keys=EVERY_AGENT, limit=25))
    return {hit.session_id for hit in result.hits}, result.indexing


def make_store(tmp_path: Path, backend: str, config: EngineConfig = EngineConfig()) -> PartitionedStore:
    return open_backend(tmp_path / backend, backend=backend, create=True, config=config)


def assert_index_equals_a_rebuild(store: PartitionedStore) -> None:
    """Every partition's index rows are those a full rebuild from its transcripts gives,
    and nothing needs work."""
    assert not store.index_status()
    for partition in store.partitions().values():
        if isinstance(partition, ReferenceBackend):
            assert verify_backend(partition).problems == []
            continue
        assert isinstance(partition, SqliteBackend)
        expected = {(entry.session_id, entry.message_id)
                    for window in partition.windows()
                    for entry in index_entries(partition.events(window.session_id))}
        with sqlite3.connect(f"file:{partition.path}?mode=ro", uri=True) as connection:
            rows = set(connection.execute(
                "SELECT session_id, message_id FROM session_transcript_fts_rows"))
        assert rows == expected


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_search_that_finds_work_starts_the_worker_and_answers_what_is_consistent(
        tmp_path: Path, backend: str) -> None:
    store = make_store(tmp_path, backend)
    try:
        rewound = write_rewound(store, ("main", "ops"), 4)
        write_clean(store, "clean", ["alpha clean"])
        assert not store.reconciling and store.background_run is None
        assert search(store, "alpha") == ({"clean"}, True)  # the rewound windows left out
        assert store.wait_for_reconcile(timeout=60)
        run = store.background_run
        assert run is not None and run.ending == "finished" and run.error is None
        assert (run.windows, run.rows) == (4, 4)  # one "alpha" row each
        assert search(store, "alpha") == ({"clean", *rewound}, False)
        assert search(store, "beta") == (set(), False)
        assert not store.reconciling  # nothing pending: no new run
        assert_index_equals_a_rebuild(store)
    finally:
        store.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_hits_of_windows_needing_a_rebuild_never_appear_while_the_worker_runs_and_writes_go_on(
        tmp_path: Path, backend: str) -> None:
    store = make_store(tmp_path, backend, SMALL_BATCHES)
    try:
        rewound = write_rewound(store, ("main", "ops"), 24)  # within a search's limit of 25
        write_clean(store, "clean", ["gamma0"])
        seen: list[tuple[int, bool]] = []
        written = 1
        assert search(store, "alpha") == (set(), True)  # starts the run
        while store.reconciling or written < 5:
            alpha, indexing = search(store, "alpha")
            beta, _ = search(store, "beta")
            assert beta == set()
            assert alpha <= set(rewound)
            if len(alpha) < len(rewound):
                assert indexing  # completeness not confirmed while windows are missing
            seen.append((len(alpha), indexing))
            append_clean(store, "clean", written, f"gamma{written}")  # an application write
            written += 1
        assert store.wait_for_reconcile(timeout=60)
        assert [count for count, _ in seen] == sorted(count for count, _ in seen)
        assert search(store, "alpha") == (set(rewound), False)
        assert store.event_count("clean") == written  # no write lost, each one searchable
        assert all(search(store, f"gamma{number}") == ({"clean"}, False)
                   for number in range(written))
        assert_index_equals_a_rebuild(store)
    finally:
        store.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_from_another_thread_during_a_run_are_kept(tmp_path: Path, backend: str) -> None:
    store = make_store(tmp_path, backend, SMALL_BATCHES)
    try:
        rewound = write_rewound(store, ("main", "ops"), 24)
        write_clean(store, "clean", ["delta0"])
        failures: list[BaseException] = []

        def writer() -> None:
            try:
                for number in range(1, 31):
                    append_clean(store, "clean", number, f"delta{number}")
            except BaseException as error:  # noqa: BLE001 - reported below
                failures.append(error)

        assert search(store, "alpha") == (set(), True)
        thread = threading.Thread(target=writer)
        thread.start()
        thread.join(timeout=120)
        assert not thread.is_alive() and failures == []
        assert store.wait_for_reconcile(timeout=60)
        assert search(store, "alpha") == (set(rewound), False)
        assert store.event_count("clean") == 31
        assert all(search(store, f"delta{number}") == ({"clean"}, False) for number in range(31))
        assert_index_equals_a_rebuild(store)
    finally:
        store.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_close_during_a_run_stops_it_and_the_next_open_reconciles_the_rest(
        tmp_path: Path, backend: str) -> None:
    store = make_store(tmp_path, backend, SMALL_BATCHES)
    rewound = write_rewound(store, ("main", "ops"), 24)
    names_before = {thread.name for thread in threading.enumerate()}
    assert search(store, "alpha")[1]
    assert store.reconciling
    store.close()
    assert not store.reconciling
    run = store.background_run
    assert run is not None and run.ending in ("stopped", "finished") and run.error is None
    assert {thread.name for thread in threading.enumerate()} <= names_before
    reopened = open_backend(tmp_path / backend, writer=True, config=SMALL_BATCHES)
    try:
        if run.ending == "stopped":
            assert reopened.index_status()  # the rest is still pending
        assert search(reopened, "beta")[0] == set()
        assert reopened.wait_for_reconcile(timeout=60)
        assert search(reopened, "alpha") == (set(rewound), False)
        assert_index_equals_a_rebuild(reopened)
    finally:
        reopened.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_watchdog_ends_a_run_past_its_budget(tmp_path: Path, backend: str) -> None:
    budget = EngineConfig(reconcile_budget_milliseconds=1, reconcile_batch_events=1)
    store = make_store(tmp_path, backend, budget)
    try:
        rewound = write_rewound(store, ("main",), 3)
        with store.lock.application():  # the worker cannot take a batch before the deadline
            assert search(store, "alpha") == (set(), True)
            time.sleep(0.02)  # 20 times the budget
        assert store.wait_for_reconcile(timeout=60)
        run = store.background_run
        assert run is not None and (run.ending, run.windows) == ("budget", 0)
        assert search(store, "alpha") == (set(), True)  # nothing rebuilt; another run starts
        assert store.wait_for_reconcile(timeout=60)
        assert store.background_run.ending in ("budget", "finished")
        store.reconcile()  # the foreground reconcile has no budget
        assert search(store, "alpha") == (set(rewound), False)
    finally:
        store.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_run_on_a_reader_or_when_turned_off(tmp_path: Path, backend: str) -> None:
    store = make_store(tmp_path, backend, QUIET)
    write_rewound(store, ("main",), 2)
    assert search(store, "alpha") == (set(), True)
    assert not store.reconciling and store.background_run is None
    store.close()
    reader = open_backend(tmp_path / backend)
    try:
        assert search(reader, "alpha") == (set(), True)
        assert not reader.reconciling and reader.background_run is None
    finally:
        reader.close()
    assert (tmp_path / backend / "agents" / "main").is_dir()
    if backend == "sqlite":
        assert (tmp_path / backend / "agents" / "main" / "agent" / DATABASE_NAME).is_file()
