"""What reconcile detects, on both backends, with the same outcome (behaviour.md §8.3, §8.4).

Upstream's "detects missing, dirty, lagging, and unclassified transcript projections" and
"sweeps orphaned index rows even when transcript watermarks are current" (§12.2), through
the store-level API. §8.3: a window with events needs work when it has no index state, is
dirty (`needs_rebuild`) or lags (its newest seq is past the state's `indexed_seq`); index
rows of a window the store does not hold are orphans, which reconcile sweeps. §8.4: while
a window needs work a search says `indexing: true`; §5.3: it returns no hit of a dirty
window until its rebuild, while a window that only lags or has no state keeps its rows
searchable (they are a consistent prefix of its active path), as upstream's kernel
filters only `needs_rebuild != 0`. Orphaned rows never give a hit and do not make
`indexing` true; `reconcile` sweeps them, even when no window needs work.

Each case writes two clean windows, then reaches below the write path on purpose to make
one of them need work, or to add rows under a session id the store holds no window of: on
the reference backend through the partition's `InvertedIndex` and `flush()`, on SQLite
through the partition's writer connection in a transaction, so that the triggers keep the
reconcile queue as they would for another writer. It then searches, reconciles (the
`reconcile` call, or `reconcile_in_batches` as the `reconcile` command and the background
worker run it), searches again and checks the index against a rebuild
(`background_stores.assert_index_equals_a_rebuild`). Both backends' observations are
compared with each other and with the expected literal in one assertion.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.backends.protocol import Backend
from engine.backends.reference.backend import ReferenceBackend
from engine.backends.sqlite.backend import SqliteBackend
from engine.index.lifecycle import WindowIndexState
from engine.model import IndexEntry, SearchRequest
from engine.store.partitioned import PartitionedStore
from tests.backends.background_stores import (
    QUIET,
    assert_index_equals_a_rebuild,
    make_store,
    sqlite_writer,
    write_clean,
)

#: The backends compared: each case's tampering reaches below the write path of the
#: reference index or of a SQLite database, and none is written here for a PostgreSQL
#: partition's rows (its reconcile is driven through the write path by the lifecycle
#: and background-reconcile suites instead).
BACKENDS = ("reference", "sqlite")

#: The window made to need work, the clean window beside it, and the session id of the
#: orphaned rows (the store holds no window of it).
TARGET = "target"
OTHER = "other"
GHOST = "ghost"
#: The word of every clean window's messages, and the word only the orphaned row holds.
WORD = "kappa"
GHOST_WORD = "phantom"
#: The agent of `write_clean`'s windows (`agent:main:...`): the partition tampered with.
AGENT = "main"

OTHER_HIT = (OTHER, "c0")
TARGET_HITS = ((TARGET, "c0"), (TARGET, "c1"))
ALL_HITS = (OTHER_HIT, *TARGET_HITS)

#: The ways to reconcile a store: `reconcile()` (its count of windows rebuilt), and
#: `reconcile_in_batches()` (finished, windows rebuilt, their rows, orphaned windows swept).
WAYS = ("reconcile", "reconcile_in_batches")


@dataclass(frozen=True, slots=True)
class Detection:
    """What a store says about its index at one moment."""

    pending: tuple[str, ...]  # the partition's windows needing reconcile (§8.3)
    hits: tuple[tuple[str, str], ...]  # (session id, message id) of the hits for WORD, sorted
    ghost_hits: int  # hits for GHOST_WORD, the orphaned row's word
    indexing: bool  # the search result's flag (§8.4)
    index_status: bool  # the store's `index_status()`
    ghost_rows: int  # index rows under GHOST (below the search: what the sweep drops)


@dataclass(frozen=True, slots=True)
class Run:
    """One case on one backend: before reconcile, what reconcile answered, after it."""

    before: Detection
    reconciled: object
    after: Detection
    equals_a_rebuild: bool


def search(store: PartitionedStore, query: str) -> tuple[tuple[tuple[str, str], ...], bool]:
    """The hits for `query` over every partition as sorted (session id, message id), and
    the result's `indexing`."""
    result = store.search(SearchRequest(query, session_keys=()))
    return tuple(sorted((hit.session_id, hit.message_id) for hit in result.hits)), result.indexing


def ghost_rows(partition: Backend) -> int:
    """The index rows the partition holds under GHOST (on SQLite, the FTS table agrees
    with its row map)."""
    if isinstance(partition, ReferenceBackend):
        return len(partition.index.window_doc_ids(GHOST))
    connection = sqlite_writer(partition)
    (mapped,) = connection.execute(
        "SELECT count(*) FROM session_transcript_fts_rows WHERE session_id = ?",
        (GHOST,)).fetchone()
    (texts,) = connection.execute(
        "SELECT count(*) FROM session_transcript_fts WHERE session_id = ?", (GHOST,)).fetchone()
    assert texts == mapped
    return mapped


def detect(store: PartitionedStore) -> Detection:
    """The store's answers now: pending windows, hits, flags, orphaned rows."""
    partition = store.partition(AGENT)
    assert isinstance(partition, ReferenceBackend | SqliteBackend)  # ReconcilesInBatches
    hits, indexing = search(store, WORD)
    ghost_hits, _ = search(store, GHOST_WORD)
    return Detection(
        pending=tuple(partition.windows_needing_reconcile()),
        hits=hits,
        ghost_hits=len(ghost_hits),
        indexing=indexing,
        index_status=store.index_status(),
        ghost_rows=ghost_rows(partition),
    )


def equals_a_rebuild(store: PartitionedStore) -> bool:
    """Whether `assert_index_equals_a_rebuild` holds (nothing pending, every partition's
    rows those of a rebuild), as a value to compare between the backends."""
    try:
        assert_index_equals_a_rebuild(store)
    except AssertionError:
        return False
    return True


# ---- reaching below the write path, one way per backend --------------------------------


def move_state(store: PartitionedStore, change: Callable[[WindowIndexState], WindowIndexState],
               sql: str) -> None:
    """Replace TARGET's index state by `change(state)` (reference) or run `sql` on it, with
    TARGET as its parameter (SQLite); its rows stay as they are."""
    partition = store.partition(AGENT)
    if isinstance(partition, ReferenceBackend):
        states = partition.index.window_states
        states[TARGET] = change(states[TARGET])
        partition.flush()
        return
    with_writer(partition, sql, (TARGET,))


def drop_state(store: PartitionedStore) -> None:
    """Remove TARGET's index state; its rows (and on SQLite its active path) stay."""
    partition = store.partition(AGENT)
    if isinstance(partition, ReferenceBackend):
        partition.index.window_states.pop(TARGET)
        partition.flush()
        return
    with_writer(partition, "DELETE FROM session_transcript_index_state WHERE session_id = ?",
                (TARGET,))


def add_ghost_row(store: PartitionedStore) -> None:
    """One index row "kappa phantom" under GHOST, a session id the store holds no window of
    and so no index state (SQLite's state table refers to the windows)."""
    partition = store.partition(AGENT)
    text = f"{WORD} {GHOST_WORD}"
    if isinstance(partition, ReferenceBackend):
        partition.index.add_entry(IndexEntry(GHOST, "g1", "user", 1.0, text, 0),
                                  partition.analyzer.terms(text))
        partition.flush()
        return
    connection = sqlite_writer(partition)
    with partition.transaction():
        (row_id,) = connection.execute(
            "SELECT coalesce(max(id), 0) + 1 FROM session_transcript_fts_rows").fetchone()
        connection.execute("INSERT INTO session_transcript_fts_rows (id, session_id, message_id) "
                           "VALUES (?, ?, 'g1')", (row_id, GHOST))
        connection.execute(
            "INSERT INTO session_transcript_fts (rowid, text, session_id, message_id, role, "
            "timestamp) VALUES (?, ?, ?, 'g1', 'user', 1)", (row_id, text, GHOST))


def with_writer(partition: Backend, sql: str, parameters: tuple[str, ...]) -> None:
    """Run `sql` on a SQLite partition's writer connection, in one of its transactions."""
    connection = sqlite_writer(partition)
    with partition.transaction():
        assert connection.execute(sql, parameters).rowcount == 1


# ---- the cases -----------------------------------------------------------------------


def lag(store: PartitionedStore) -> None:
    """TARGET's watermark moved back one event: its newest seq is past `indexed_seq`."""
    move_state(store, lambda state: state._replace(indexed_seq=state.indexed_seq - 1),
               "UPDATE session_transcript_index_state SET indexed_seq = indexed_seq - 1 "
               "WHERE session_id = ?")


def make_dirty(store: PartitionedStore) -> None:
    """TARGET marked `needs_rebuild`, its watermark current."""
    move_state(store, lambda state: state._replace(needs_rebuild=True),
               "UPDATE session_transcript_index_state SET needs_rebuild = 1 WHERE session_id = ?")


#: Before reconcile, when TARGET is dirty: it alone is pending, its hits are left out
#: (§5.3: `needs_rebuild != 0`), OTHER's still show, and the store says `indexing`.
TARGET_DIRTY = Detection(pending=(TARGET,), hits=(OTHER_HIT,), ghost_hits=0, indexing=True,
                         index_status=True, ghost_rows=0)
#: Before reconcile, when TARGET lags or has no state: it is pending and the store says
#: `indexing`, but its rows stay searchable (§5.3 hides only dirty windows; a lagging
#: window's rows are a prefix of its active path, as upstream's kernel keeps them).
TARGET_LAGGING = Detection(pending=(TARGET,), hits=ALL_HITS, ghost_hits=0, indexing=True,
                           index_status=True, ghost_rows=0)
#: After reconcile: nothing pending, every hit once, `indexing` false, no orphaned row.
SETTLED = Detection(pending=(), hits=ALL_HITS, ghost_hits=0, indexing=False,
                    index_status=False, ghost_rows=0)
#: Before reconcile, with an orphaned row: no window pending, every window's hits show,
#: the ghost's never, and `indexing` is false (§8.4 counts windows needing work, §8.3;
#: no hit can come from an orphan), though the row is there until a reconcile sweeps it.
GHOST_PENDING = Detection(pending=(), hits=ALL_HITS, ghost_hits=0, indexing=False,
                          index_status=False, ghost_rows=1)

#: What each way of reconciling answers when it rebuilds TARGET (its two rows) and when it
#: only sweeps GHOST's row: `reconcile()` counts the windows rebuilt (`Maintenance`).
REBUILT_TARGET = {"reconcile": 1, "reconcile_in_batches": (True, 1, 2, 0)}
SWEPT_GHOST = {"reconcile": 0, "reconcile_in_batches": (True, 0, 0, 1)}

CASES: dict[str, tuple[Callable[[PartitionedStore], None], Detection, dict[str, object]]] = {
    "lagging": (lag, TARGET_LAGGING, REBUILT_TARGET),
    "dirty": (make_dirty, TARGET_DIRTY, REBUILT_TARGET),
    "no-state": (drop_state, TARGET_LAGGING, REBUILT_TARGET),
    "orphan-rows": (add_ghost_row, GHOST_PENDING, SWEPT_GHOST),
}


def reconcile(store: PartitionedStore, way: str) -> object:
    """Reconcile `store` the `way` named; what it answered, as a comparable value."""
    if way == "reconcile":
        return store.reconcile()
    done = store.reconcile_in_batches()
    return (done.finished, done.windows, done.rows, done.orphans)


def run_case(tmp_path: Path, backend: str, tamper: Callable[[PartitionedStore], None],
             way: str) -> Run:
    """Two clean windows, `tamper`, then detect, reconcile `way`, detect and verify."""
    store = make_store(tmp_path, backend, QUIET)
    try:
        write_clean(store, TARGET, [f"{WORD} first", f"{WORD} second"])
        write_clean(store, OTHER, [f"{WORD} beside"])
        tamper(store)
        before = detect(store)
        reconciled = reconcile(store, way)
        after = detect(store)
        return Run(before, reconciled, after, equals_a_rebuild(store))
    finally:
        store.close()


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_reconcile_detects_and_settles_the_same_on_both_backends(
        tmp_path: Path, case: str, way: str) -> None:
    tamper, pending, outcomes = CASES[case]
    expected = Run(pending, outcomes[way], SETTLED, True)
    observed = {backend: run_case(tmp_path, backend, tamper, way) for backend in BACKENDS}
    assert observed["reference"] == observed["sqlite"] == expected, observed
