"""The store's background reconcile (`engine.store.background`), on both backends.

A search on a writer's store that finds windows needing work answers with what is
consistent and `indexing: true`, and starts the worker; once it ends, the same search
finds the rebuilt windows' hits with `indexing: false`. Meanwhile no hit of a window
needing a rebuild is returned, application writes go through and are kept, closing stops
the run cleanly (the next open reconciles the rest), a reader never starts one, the
watchdog ends a run past its budget, and transcripts that predate the index (events, no
index state) are backfilled. The kill -9 during a background run is in
`tests/durability/test_killed_background_reconcile.py`.
The stores and the checks are in `tests/backends/background_stores.py`.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from engine.backends.postgres.backend import PostgresBackend
from engine.backends.reference.backend import ReferenceBackend
from engine.backends.sqlite.backend import DATABASE_NAME
from engine.config import EngineConfig
from engine.store.partitioned import PartitionedStore
from engine.store.registry import open_backend
from tests.backends.background_stores import (
    BACKENDS,
    QUIET,
    SMALL_BATCHES,
    append_clean,
    assert_index_equals_a_rebuild,
    make_store,
    search,
    sqlite_writer,
    write_clean,
    write_rewound,
)


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


def strip_the_index(store: PartitionedStore, session_ids: list[str]) -> None:
    """Make `session_ids` transcripts that predate the index: events stored, no index
    state and no rows (what an import by `openclaw doctor` leaves, §8.3)."""
    for partition in store.partitions().values():
        if isinstance(partition, ReferenceBackend):
            for session_id in session_ids:
                partition.index.delete_window_rows(session_id)
                partition.index.window_states.pop(session_id, None)
            partition.flush()
            continue
        if isinstance(partition, PostgresBackend):
            schema = partition.partition.schema
            with partition.transaction():
                connection = partition.reading_connection()
                connection.execute(f'DELETE FROM "{schema}".session_transcript_messages '
                                   "WHERE session_id = ANY(%s)", (session_ids,))
                connection.execute(f'UPDATE "{schema}".session_transcript_index_state SET '
                                   "indexed_seq = NULL, leaf_event_id = NULL "
                                   "WHERE session_id = ANY(%s)", (session_ids,))
            continue
        connection = sqlite_writer(partition)
        with partition.transaction():
            for table in ("session_transcript_fts_rows", "session_transcript_active_events",
                          "session_transcript_index_state"):
                connection.executemany(f"DELETE FROM {table} WHERE session_id = ?",
                                       [(session_id,) for session_id in session_ids])


@pytest.mark.parametrize("backend", BACKENDS)
def test_transcripts_that_predate_the_index_are_backfilled(tmp_path: Path, backend: str) -> None:
    store = make_store(tmp_path, backend, QUIET)
    old = [f"old{number}" for number in range(3)]
    for session_id in old:
        write_clean(store, session_id, [f"kappa {session_id}", "lambda"])
    write_clean(store, "fresh", ["kappa fresh"])
    strip_the_index(store, old)
    assert search(store, "kappa") == ({"fresh"}, True)
    store.close()
    store = open_backend(tmp_path / backend, writer=True)
    try:
        assert search(store, "kappa") == ({"fresh"}, True)
        assert store.wait_for_reconcile(timeout=60)
        run = store.background_run
        assert run is not None and (run.ending, run.windows, run.rows) == ("finished", 3, 6)
        assert search(store, "kappa") == ({"fresh", *old}, False)
        assert_index_equals_a_rebuild(store)
    finally:
        store.close()
