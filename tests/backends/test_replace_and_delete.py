"""Replacing a window's transcript and deleting a session, on both backends (issue 14,
items 1 and 4; behaviour.md §8.2, §8.4, §12.2 and §12.3).

Every test runs on a partitioned store of each backend (`store` is parametrized by
backend name, as the stores are opened in use), made with a config whose §8.2 limits are
shrunk (`SMALL_LIMITS`: at most 3 events, 4 KiB) so that a "large" replacement is a few
events. The differential tests run both backends side by side and compare every result
field by field (`tests.parity.test_backend_differential.result_differences`), before
and after reconcile; `verify` (reference) and a rebuild of the SQLite rows from the
transcripts check the index once reconciled.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.backends.postgres.backend import PostgresBackend
from engine.backends.reference.backend import ReferenceBackend
from engine.backends.replacement import rebuild_is_deferred, transcript_bytes
from engine.backends.sqlite.backend import SqliteBackend
from engine.config import EngineConfig
from engine.diagnostics.verify import verify_store
from engine.directory import FileDirectory
from engine.errors import InputError, UnknownSession, UsageError
from engine.model import SearchRequest, SessionWindow
from engine.store.layout import PartitionKind
from engine.store.opening import create_partitioned, open_partitioned
from engine.store.partitioned import PartitionedStore
from engine.transcript.projection import index_entries
from tests.parity.test_backend_differential import outcome, result_differences

#: The §8.2 limits shrunk: a replacement of 4 events, or of more than 4 KiB, is large.
#: No background reconcile: these tests see what a replacement leaves until `reconcile`.
SMALL_LIMITS = EngineConfig(sync_rebuild_max_events=3, sync_rebuild_max_bytes=4096,
                            background_reconcile=False)
KEY = "agent:main:main"
OTHER_KEY = "agent:main:other"


def configured_kind(name: str, config: EngineConfig) -> PartitionKind:
    """Partitions of backend `name` made and opened with `config` (`postgres-expected`:
    reference partitions answering as the postgres backend would)."""
    if name in ("reference", "postgres-expected"):
        expectation = "postgres" if name == "postgres-expected" else "sqlite"

        class ConfiguredReference(ReferenceBackend):
            @classmethod
            def create(cls, path: str | os.PathLike[str]) -> ReferenceBackend:
                backend = cls.create_in(FileDirectory(path), config=config)
                backend.set_expectation(expectation)
                return backend

            @classmethod
            def open(cls, path: str | os.PathLike[str], *, writer: bool = False,
                     accept_lost_commits: bool = False) -> ReferenceBackend:
                backend = cls.open_in(FileDirectory(path), writer=writer, config=config,
                                      accept_lost_commits=accept_lost_commits)
                backend.set_expectation(expectation)
                return backend

        return PartitionKind("reference", ConfiguredReference)

    class ConfiguredSqlite(SqliteBackend):
        @classmethod
        def create_file(cls, path: str | os.PathLike[str]) -> SqliteBackend:
            backend = super().create_file(path)
            backend.config = config
            return backend

        @classmethod
        def open_file(cls, path: str | os.PathLike[str], *, writer: bool = False) -> SqliteBackend:
            backend = super().open_file(path, writer=writer)
            backend.config = config
            return backend

    if name == "postgres":
        return PartitionKind("postgres", configured_postgres(config))
    return PartitionKind("sqlite", ConfiguredSqlite)


def configured_postgres(config: EngineConfig) -> type[PostgresBackend]:
    """The postgres backend with `config` on every partition it makes and opens."""

    class ConfiguredPostgres(PostgresBackend):
        @classmethod
        def create(cls, path: str | os.PathLike[str], *, dsn: str | None = None
                   ) -> PostgresBackend:
            backend = super().create(path, dsn=dsn)
            backend.config = config
            return backend

        @classmethod
        def open(cls, path: str | os.PathLike[str], *, writer: bool = False,
                 dsn: str | None = None) -> PostgresBackend:
            backend = super().open(path, writer=writer, dsn=dsn)
            backend.config = config
            return backend

    return ConfiguredPostgres


def new_store(folder: Path, name: str, config: EngineConfig = SMALL_LIMITS) -> PartitionedStore:
    return create_partitioned(folder / name, configured_kind(name, config), config=config)


@pytest.fixture(params=["reference", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PartitionedStore]:
    backend = new_store(tmp_path, request.param)
    try:
        yield backend
    finally:
        backend.close()


def message(message_id: str, parent: str | None, text: str, role: str = "user",
            timestamp: float | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "message", "id": message_id, "parentId": parent,
                             "message": {"role": role, "content": text}}
    if timestamp is not None:
        event["timestamp"] = timestamp
    return event


def chain(prefix: str, texts: list[str]) -> list[dict[str, Any]]:
    """Messages `<prefix>0`, `<prefix>1`, ... each the child of the one before."""
    return [message(f"{prefix}{i}", f"{prefix}{i - 1}" if i else None, text,
                    "user" if i % 2 == 0 else "assistant", 100.0 + i)
            for i, text in enumerate(texts)]


def seed(backend: Any) -> None:
    """Two windows of KEY (w-old retained, w-new current) and one of OTHER_KEY."""
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("w-old", KEY, current=False))
        transaction.put_window(SessionWindow("w-new", KEY, previous_session_id="w-old",
                                             reason="reset"))
        transaction.put_window(SessionWindow("w-other", OTHER_KEY))
        for event in chain("a", ["stale origin story", "stale reply"]):
            transaction.append_event("w-old", event, created_at=1.0)
        for event in chain("b", ["current words", "current answer"]):
            transaction.append_event("w-new", event, created_at=2.0)
        for event in chain("c", ["bystander stale text"]):
            transaction.append_event("w-other", event, created_at=3.0)


def found(backend: Any, query: str, **fields: Any) -> tuple[list[tuple[str, str]], bool]:
    """The (session id, message id) of every hit of `query`, and the `indexing` flag."""
    result = backend.search(SearchRequest(query, agent_id="main", **fields))
    return [(hit.session_id, hit.message_id) for hit in result.hits], result.indexing


def replace(backend: Any, session_id: str, events: list[dict[str, Any]],
            created_at: Any = 5.0) -> int:
    with backend.transaction() as transaction:
        return transaction.replace_transcript(session_id, events, created_at)


def sqlite_rows_match_a_rebuild(partition: SqliteBackend) -> None:
    """The FTS rows of every window are exactly the entries of its active path (none for
    an incognito window)."""
    connection = sqlite3.connect(partition.path)
    try:
        rows = sorted(connection.execute(
            "SELECT m.session_id, m.message_id, f.text, f.role FROM session_transcript_fts_rows "
            "AS m JOIN session_transcript_fts AS f ON f.rowid = m.id"))
        states = dict(connection.execute(
            "SELECT session_id, needs_rebuild FROM session_transcript_index_state"))
    finally:
        connection.close()
    expected = sorted((entry.session_id, entry.message_id, entry.text, entry.role)
                      for window in partition.windows() if not window.is_incognito
                      for entry in index_entries(partition.events(window.session_id)))
    assert rows == expected
    assert not any(states.values())


def check_consistent(backend: PartitionedStore) -> None:
    """After reconcile: nothing pending, and the index equals a rebuild (`verify` on both
    backends; on SQLite also the FTS rows read directly)."""
    assert not backend.index_status()
    report = verify_store(backend)
    assert report.ok, report.lines()
    if backend.name == "sqlite":
        for partition in backend.partitions().values():
            sqlite_rows_match_a_rebuild(partition)


# ---- the rule and its measure ----------------------------------------------------------


def test_the_rule_counts_events_and_the_utf8_bytes_of_their_compact_json() -> None:
    events = [message("m1", None, "é" * 10)]
    text = '{"type":"message","id":"m1","parentId":null,"message":{"role":"user","content":"' \
        + "é" * 10 + '"}}'
    assert transcript_bytes(events) == len(text.encode("utf-8"))
    limit = len(text.encode("utf-8"))
    assert not rebuild_is_deferred(events, EngineConfig(sync_rebuild_max_bytes=limit))
    assert rebuild_is_deferred(events, EngineConfig(sync_rebuild_max_bytes=limit - 1))
    assert not rebuild_is_deferred(events * 4000, EngineConfig())
    assert rebuild_is_deferred(events * 4001, EngineConfig())
    assert EngineConfig().sync_rebuild_max_bytes == 4 * 1024 * 1024


# ---- small: rebuilt in the same transaction -------------------------------------------


def test_a_small_replacement_is_searchable_at_once_with_the_new_text_only(
        store: PartitionedStore) -> None:
    seed(store)
    assert sorted(found(store, "stale")[0]) == [("w-old", "a0"), ("w-old", "a1"),
                                                ("w-other", "c0")]
    assert replace(store, "w-old", chain("n", ["fresh origin story", "fresh reply"])) == 2
    assert found(store, "stale") == ([("w-other", "c0")], False)
    assert sorted(found(store, "fresh")[0]) == [("w-old", "n0"), ("w-old", "n1")]
    assert found(store, "fresh")[1] is False
    assert [event.event["id"] for event in store.events("w-old")] == ["n0", "n1"]
    assert [event.created_at for event in store.events("w-old")] == [5.0, 5.0]
    assert store.windows_of(KEY)[0].session_id == "w-old"  # the window keeps its place
    check_consistent(store)


def test_a_rewind_inside_a_small_replacement_is_resolved_in_the_same_transaction(
        store: PartitionedStore) -> None:
    seed(store)
    events = [message("m1", None, "alpha origin"), message("m2", "m1", "beta abandoned"),
              {"type": "leaf", "id": "l1", "parentId": "m2", "targetId": "m1"}]
    replace(store, "w-new", events)
    assert found(store, "alpha") == ([("w-new", "m1")], False)
    assert found(store, "beta") == ([], False)


def test_appends_after_a_replacement_continue_the_new_transcript(store: PartitionedStore) -> None:
    seed(store)
    with store.transaction() as transaction:
        transaction.replace_transcript("w-new", chain("n", ["fresh start"]), 5.0)
        assert transaction.append_event("w-new", message("n1", "n0", "fresh follow"), 6.0) == 1
    with store.transaction() as transaction:
        assert transaction.append_event("w-new", message("n2", "n1", "fresh later"), 7.0) == 2
    assert sorted(found(store, "fresh")[0]) == [("w-new", "n0"), ("w-new", "n1"), ("w-new", "n2")]
    assert found(store, "current") == ([], False)
    check_consistent(store)


def test_an_empty_replacement_leaves_the_window_without_events_or_rows(
        store: PartitionedStore) -> None:
    seed(store)
    assert replace(store, "w-old", []) == 0
    assert store.event_count("w-old") == 0
    assert found(store, "stale") == ([("w-other", "c0")], False)
    store.reconcile()
    check_consistent(store)


# ---- large: the window is marked dirty, its old rows hidden until reconcile --------------


def test_a_large_replacement_keeps_old_rows_hidden_until_reconcile(store: PartitionedStore) -> None:
    """§12.2 "preserves stale FTS rows until a replaced transcript is reconciled after
    commit": neither the old nor the new text of the window is found, `indexing` is
    true, other windows are still found; after reconcile only the new text."""
    seed(store)
    replace(store, "w-old", chain("n", ["fresh one", "fresh two", "fresh three", "fresh four"]))
    assert found(store, "stale") == ([("w-other", "c0")], True)
    assert found(store, "fresh") == ([], True)
    assert sorted(found(store, "current")[0]) == [("w-new", "b0"), ("w-new", "b1")]
    assert store.index_status()
    assert store.reconcile() == 1
    assert found(store, "stale") == ([("w-other", "c0")], False)
    assert sorted(found(store, "fresh")[0]) == [("w-old", f"n{i}") for i in range(4)]
    check_consistent(store)


def test_a_replacement_over_the_byte_limit_is_deferred_too(store: PartitionedStore) -> None:
    seed(store)
    replace(store, "w-old", [message("big", None, "fresh " + "x" * 5000)])
    assert found(store, "fresh") == ([], True)
    assert found(store, "stale") == ([("w-other", "c0")], True)
    store.reconcile()
    assert found(store, "fresh") == ([("w-old", "big")], False)


def test_a_rewind_surfaces_only_the_active_branch_after_the_deferred_rebuild(
        store: PartitionedStore) -> None:
    """§12.2 "only surfaces the active branch after a deferred leaf-control rebuild"."""
    seed(store)
    events = [message("m1", None, "alpha origin"), message("m2", "m1", "beta abandoned"),
              message("m3", "m2", "beta more"),
              {"type": "leaf", "id": "l1", "parentId": "m3", "targetId": "m1"}]
    replace(store, "w-new", events)
    assert found(store, "beta") == ([], True)
    assert found(store, "alpha") == ([], True)
    store.reconcile()
    assert found(store, "beta") == ([], False)
    assert found(store, "alpha") == ([("w-new", "m1")], False)
    check_consistent(store)


def test_a_deferred_replacement_survives_reopening(tmp_path: Path, store: PartitionedStore) -> None:
    """The decision is committed with the replacement: a reopened store still hides the
    window until reconcile (for the reference store also when its index files are gone
    and the whole log is replayed)."""
    seed(store)
    replace(store, "w-old", chain("n", ["fresh one", "fresh two", "fresh three", "fresh four"]))
    name = store.name
    root = tmp_path / name
    store.close()
    if name == "reference":
        shutil.rmtree(root / "agents" / "main" / "index")
    reopened = open_partitioned(root, configured_kind(name, SMALL_LIMITS), writer=True,
                                config=SMALL_LIMITS)
    try:
        assert found(reopened, "fresh") == ([], True)
        assert found(reopened, "stale") == ([("w-other", "c0")], True)
        reopened.reconcile()
        assert len(found(reopened, "fresh")[0]) == 4
        check_consistent(reopened)
    finally:
        reopened.close()


def test_a_small_replacement_replays_from_the_log_alone(tmp_path: Path) -> None:
    backend = new_store(tmp_path, "reference")
    seed(backend)
    replace(backend, "w-old", chain("n", ["fresh one"]))
    backend.close()
    shutil.rmtree(tmp_path / "reference" / "agents" / "main" / "index")
    reopened = open_partitioned(tmp_path / "reference",
                                configured_kind("reference", SMALL_LIMITS), writer=True,
                                config=SMALL_LIMITS)
    try:
        assert found(reopened, "fresh") == ([("w-old", "n0")], False)
        assert found(reopened, "stale") == ([("w-other", "c0")], False)
    finally:
        reopened.close()


# ---- refusals --------------------------------------------------------------------------


def test_replacing_an_unknown_window_is_a_clear_error(store: PartitionedStore) -> None:
    seed(store)
    with pytest.raises(UnknownSession, match="unknown session id 'nope'"):
        replace(store, "nope", chain("n", ["fresh"]))
    assert found(store, "stale")[1] is False


BAD_EVENTS = [
    ({"type": "message", "id": "x", "parentId": None, "message": {"role": 5}}, "w-old"),
    ({"type": 5}, "w-old"),
    ({"type": "custom", "data": b"raw"}, "w-old"),
    ({"type": "leaf", "id": "l1", "targetId": "m1"}, "w-old"),
]


@pytest.mark.parametrize(("bad", "session_id"), BAD_EVENTS)
def test_a_bad_event_is_refused_as_append_refuses_it_and_the_old_transcript_stays(
        store: PartitionedStore, bad: dict[str, Any], session_id: str) -> None:
    seed(store)
    before = [event.event for event in store.events(session_id)]
    with pytest.raises(InputError) as appended:
        with store.transaction() as transaction:
            transaction.append_event(session_id, bad, created_at=5.0)
    with pytest.raises(InputError) as replaced:
        with store.transaction() as transaction:
            transaction.replace_transcript(session_id, [*chain("n", ["fresh"]), bad], 5.0)
    assert str(replaced.value) == str(appended.value)
    # Refused before anything is written: the same transaction can go on and commit.
    with store.transaction() as transaction:
        with pytest.raises(InputError):
            transaction.replace_transcript(session_id, [bad], 5.0)
        transaction.append_event("w-other", message("c1", "c0", "later words"), 6.0)
    assert [event.event for event in store.events(session_id)] == before
    assert len(found(store, "stale")[0]) == 3
    assert found(store, "later") == ([("w-other", "c1")], False)


# ---- one receipt stamp per event ---------------------------------------------------------


@pytest.mark.parametrize("large", [False, True])
def test_per_event_stamps_are_stored_each_with_its_event(
        store: PartitionedStore, large: bool) -> None:
    """`created_at` as a list: each event keeps its own stamp (a live import keeps the
    OpenClaw database's), small or deferred, and after reopening and reconcile."""
    seed(store)
    texts = ["fresh one", "fresh two", "fresh three", "fresh four"][: 4 if large else 2]
    stamps = [10.0 + index for index in range(len(texts))]
    assert replace(store, "w-old", chain("n", texts), stamps) == len(texts)
    assert [event.created_at for event in store.events("w-old")] == stamps
    assert found(store, "fresh")[1] is large
    store.reconcile()
    assert [event.created_at for event in store.events("w-old")] == stamps
    assert len(found(store, "fresh")[0]) == len(texts)
    with store.transaction() as transaction:  # a tuple, and None for the time of the write
        transaction.replace_transcript("w-new", chain("m", ["later one", "later two"]),
                                       (7.0, None))
    stored = [event.created_at for event in store.events("w-new")]
    assert stored[0] == 7.0 and stored[1] is not None and stored[1] > 1e12
    check_consistent(store)


def test_per_event_stamps_survive_reopening(tmp_path: Path, store: PartitionedStore) -> None:
    """The log's event records carry each its own stamp: a reopened store (the reference
    one with its index files gone, so the log is replayed) reads them back."""
    seed(store)
    replace(store, "w-old", chain("n", ["fresh one", "fresh two"]), [11.0, 12.0])
    name = store.name
    store.close()
    if name == "reference":
        shutil.rmtree(tmp_path / name / "agents" / "main" / "index")
    reopened = open_partitioned(tmp_path / name, configured_kind(name, SMALL_LIMITS),
                                writer=True, config=SMALL_LIMITS)
    try:
        assert [event.created_at for event in reopened.events("w-old")] == [11.0, 12.0]
        hits, indexing = found(reopened, "fresh")
        assert (sorted(hits), indexing) == ([("w-old", "n0"), ("w-old", "n1")], False)
    finally:
        reopened.close()


@pytest.mark.parametrize("stamps", [[5.0], [5.0, 6.0, 7.0], []])
def test_per_event_stamps_must_be_one_per_event(store: PartitionedStore,
                                                stamps: list[float]) -> None:
    seed(store)
    with pytest.raises(UsageError, match=f"created_at holds {len(stamps)} stamp\\(s\\) "
                                         "for 2 events"):
        replace(store, "w-old", chain("n", ["fresh one", "fresh two"]), stamps)
    assert [event.event["id"] for event in store.events("w-old")] == ["a0", "a1"]
    assert sorted(found(store, "stale")[0]) == [("w-old", "a0"), ("w-old", "a1"),
                                                ("w-other", "c0")]


@pytest.mark.parametrize("bad", [float("nan"), "5", 1e300, True])
def test_a_bad_per_event_stamp_is_refused_as_append_refuses_it(
        store: PartitionedStore, bad: Any) -> None:
    seed(store)
    with pytest.raises(InputError) as appended:
        with store.transaction() as transaction:
            transaction.append_event("w-old", message("x", None, "fresh"), created_at=bad)
    with pytest.raises(InputError) as replaced:
        replace(store, "w-old", chain("n", ["fresh one", "fresh two"]), [5.0, bad])
    assert str(replaced.value) == str(appended.value)
    assert [event.created_at for event in store.events("w-old")] == [1.0, 1.0]


# ---- both backends give the same answers -----------------------------------------------

PROBES = ["stale", "fresh", "alpha", "beta", "current", "origin", "bystander", "fresh one",
          "fre", "words"]


def probe_requests() -> list[SearchRequest]:
    requests = []
    for query in PROBES:
        requests.append(SearchRequest(query, agent_id="main"))
        requests.append(SearchRequest(query, agent_id="main", match="prefix", order="recent"))
        requests.append(SearchRequest(query, agent_id="main", session_keys=(KEY,), limit=2))
    return requests


def assert_same_answers(reference: PartitionedStore, sqlite: PartitionedStore, step: str) -> None:
    for request in probe_requests():
        expected = outcome(sqlite, request)
        problems = result_differences(expected, outcome(reference, request))
        assert problems == [], f"{step}: {request!r}\n" + "\n".join(problems)


def lifecycle_steps() -> list[tuple[str, Any]]:
    """Small and large replacements, rewinds and branch switches inside them, appends
    after them, a deletion; each a function of a backend."""
    rewound = [message("m1", None, "alpha origin"), message("m2", "m1", "beta abandoned"),
               {"type": "leaf", "id": "l1", "parentId": "m2", "targetId": "m1"}]
    switched = [message("s1", None, "alpha origin fresh"), message("s2", "s1", "beta first"),
                message("s3", "s1", "beta second", "assistant"),
                {"type": "leaf", "id": "l2", "parentId": "s3", "targetId": "s2"},
                message("s4", "s2", "fresh after the switch")]

    def append_more(backend: Any) -> None:
        with backend.transaction() as transaction:
            count = backend.event_count("w-new")
            last = backend.events("w-new")[-1].event.get("id") if count else None
            transaction.append_event("w-new", message("z1", last, "fresh appended words"), 9.0)

    def replace_and_append(backend: Any) -> None:
        """A commit of several changes that leaves a window dirty (it may wait for the
        next read on the reference backend)."""
        with backend.transaction() as transaction:
            transaction.replace_transcript("w-old", chain("D", ["fresh deferred"] * 4), 8.0)
            transaction.append_event("w-other", message("c1", "c0", "bystander more"), 8.0)

    def delete_other(backend: Any) -> None:
        with backend.transaction() as transaction:
            assert transaction.delete_session(OTHER_KEY) == 1

    return [
        ("seed", seed),
        ("small replacement", lambda b: replace(b, "w-old", chain("n", ["fresh origin"]))),
        ("small rewind", lambda b: replace(b, "w-new", rewound)),
        ("large branch switch", lambda b: replace(b, "w-new", switched)),
        ("append to a dirty window", append_more),
        ("large replacement", lambda b: replace(b, "w-old", chain("L", ["fresh"] * 5))),
        ("large replacement and an append", replace_and_append),
        ("reconcile", lambda b: b.reconcile()),
        ("append after reconcile", append_more),
        ("delete a key", delete_other),
        ("replace after reconcile", lambda b: replace(b, "w-new", rewound)),
    ]


#: Reference configs to run the lifecycle with: the shrunk limits alone; with commits of
#: two changes or more that leave a window dirty deferred to the next read or reconcile
#: (`IndexedStore._on_commit`); with every clear path.
REFERENCE_CONFIGS = {
    "limits": SMALL_LIMITS,
    "deferred commits": EngineConfig(sync_rebuild_max_events=3, sync_rebuild_max_bytes=4096,
                                     index_flush_documents=2, background_reconcile=False),
    "clear paths": EngineConfig.clear_paths(sync_rebuild_max_events=3,
                                            sync_rebuild_max_bytes=4096,
                                            background_reconcile=False),
}


@pytest.mark.parametrize("probe_every_step", [True, False])
@pytest.mark.parametrize("config_name", list(REFERENCE_CONFIGS))
def test_both_backends_give_identical_answers_through_replacements(
        tmp_path: Path, config_name: str, probe_every_step: bool) -> None:
    """Without a probe after every step, a reconcile follows deferred commits that no
    read applied (the rows of the windows they leave dirty are never written)."""
    with both_stores(tmp_path, REFERENCE_CONFIGS[config_name]) as (reference, sqlite):
        for step, action in lifecycle_steps():
            for backend in (reference, sqlite):
                action(backend)
            if probe_every_step or step in ("reconcile", "delete a key"):
                assert reference.index_status() == sqlite.index_status(), step
                assert_same_answers(reference, sqlite, step)


@contextmanager
def both_stores(folder: Path, reference_config: EngineConfig = SMALL_LIMITS
                ) -> Iterator[tuple[PartitionedStore, PartitionedStore]]:
    """A reference store and a SQLite store in `folder`; after the block (when it
    succeeded) both are reconciled alike, compared, and checked against a rebuild."""
    reference = new_store(folder, "reference", reference_config)
    sqlite = new_store(folder, "sqlite")
    try:
        yield reference, sqlite
        assert reference.reconcile() == sqlite.reconcile()
        assert_same_answers(reference, sqlite, "final reconcile")
        check_consistent(reference)
        check_consistent(sqlite)
    finally:
        reference.close()
        sqlite.close()


# ---- deletion --------------------------------------------------------------------------


def test_deleting_a_session_removes_every_retained_window_and_its_rows(
        store: PartitionedStore) -> None:
    """§12.3 "deletion removes every retained window": one transaction removes the
    windows, events, index rows and index states of the key."""
    seed(store)
    replace(store, "w-old", chain("n", ["fresh one", "fresh two", "fresh three", "fresh four"]))
    before = store.stats()
    assert store.index_status()  # w-old is dirty: its state goes with it
    with store.transaction() as transaction:
        assert transaction.delete_session(KEY) == 2
    assert found(store, "stale") == ([("w-other", "c0")], False)
    for query in ("current", "fresh", "origin"):
        assert found(store, query) == ([], False)
    assert store.windows_of(KEY) == [] and KEY not in store.session_keys()
    after = store.stats()
    assert (before["sessions"] - after["sessions"], before["windows"] - after["windows"],
            before["events"] - after["events"]) == (1, 2, 6)
    assert after["messages_indexed"] == 1
    with store.transaction() as transaction:
        assert transaction.delete_session(KEY) == 0
    check_consistent(store)


def test_a_deletion_that_does_not_commit_leaves_everything(store: PartitionedStore) -> None:
    seed(store)
    with pytest.raises(RuntimeError):
        with store.transaction() as transaction:
            transaction.delete_session(KEY)
            raise RuntimeError("crash before the commit")
    assert len(found(store, "current")[0]) == 2
    assert len(store.windows_of(KEY)) == 2
    check_consistent(store)


def sqlite_leftovers(partition: SqliteBackend, session_ids: tuple[str, ...]) -> dict[str, int]:
    """Rows any table still holds for `session_ids`."""
    connection = sqlite3.connect(partition.path)
    marks = ", ".join("?" * len(session_ids))
    try:
        return {table: connection.execute(
                    f"SELECT count(*) FROM {table} WHERE session_id IN ({marks})",
                    session_ids).fetchone()[0]
                for table in ("transcript_events", "transcript_event_identities",
                              "session_transcript_active_events", "session_transcript_fts_rows",
                              "session_transcript_fts", "session_transcript_index_state",
                              "session_windows", "session_search_windows",
                              "session_search_reconcile_queue")}
    finally:
        connection.close()


def test_sqlite_deletion_leaves_no_row_of_the_windows_in_any_table(tmp_path: Path) -> None:
    store = new_store(tmp_path, "sqlite")
    try:
        seed(store)
        replace(store, "w-old", chain("n", ["fresh"] * 5))  # dirty, queued, stale rows
        with store.transaction() as transaction:
            transaction.delete_session(KEY)
        partition = store.partitions()["main"]
        assert set(sqlite_leftovers(partition, ("w-old", "w-new")).values()) == {0}
    finally:
        store.close()


def test_reference_deletion_reopens_without_the_windows(tmp_path: Path) -> None:
    """The deletion is one log record: a reopen that replays the whole log (index files
    removed) finds none of the windows' rows."""
    store = new_store(tmp_path, "reference")
    seed(store)
    with store.transaction() as transaction:
        transaction.delete_session(KEY)
    store.close()
    shutil.rmtree(tmp_path / "reference" / "agents" / "main" / "index")
    reopened = open_partitioned(tmp_path / "reference",
                                configured_kind("reference", SMALL_LIMITS), writer=True,
                                config=SMALL_LIMITS)
    try:
        assert found(reopened, "current") == ([], False)
        assert reopened.stats()["windows"] == 1
        check_consistent(reopened)
    finally:
        reopened.close()



def test_a_replaced_incognito_window_stays_out_of_the_index(store: PartitionedStore) -> None:
    """An incognito window gets no row from a replacement either, small or large."""
    seed(store)
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow("w-secret", "agent:main:hidden", incognito=True))
        transaction.append_event("w-secret", message("s0", None, "secret stale"), 1.0)
    replace(store, "w-secret", chain("p", ["secret fresh"]))
    assert found(store, "secret") == ([], False)
    replace(store, "w-secret", chain("q", ["secret fresh"] * 4))
    store.reconcile()
    assert found(store, "secret") == ([], False)
    assert [event.event["id"] for event in store.events("w-secret")] == [f"q{i}" for i in range(4)]
    check_consistent(store)


# ---- random lifecycles: both backends agree after every step --------------------------

WINDOW_IDS = ("w-old", "w-new", "w-other")
WORDS = ("alpha", "beta", "gamma", "stale", "fresh")


@st.composite
def transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A short transcript: messages on a tree (each the child of an earlier one, or a
    root), sometimes a leaf move back to an earlier message."""
    events: list[dict[str, Any]] = []
    ids: list[str] = []
    for position in range(draw(st.integers(0, 6))):
        if ids and draw(st.integers(0, 4)) == 0:
            events.append({"type": "leaf", "id": f"l{position}", "parentId": ids[-1],
                           "targetId": draw(st.sampled_from(ids))})
            continue
        parent = draw(st.sampled_from(ids)) if ids and draw(st.booleans()) else (
            ids[-1] if ids else None)
        text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))
        message_id = f"m{position}"
        events.append(message(message_id, parent, text,
                              draw(st.sampled_from(["user", "assistant"])), float(position)))
        ids.append(message_id)
    return events


operations = st.one_of(
    st.tuples(st.just("replace"), st.sampled_from(WINDOW_IDS), transcripts()),
    st.tuples(st.just("append"), st.sampled_from(WINDOW_IDS),
              st.lists(st.sampled_from(WORDS), min_size=1, max_size=2)),
    st.tuples(st.just("reconcile"), st.just(""), st.just(None)),
    st.tuples(st.just("delete"), st.sampled_from([KEY, OTHER_KEY]), st.just(None)),
    st.tuples(st.just("reseed"), st.just(""), st.just(None)),
)


def apply_operation(backend: Any, operation: tuple[str, str, Any], step: int) -> None:
    kind, name, value = operation
    if kind == "reseed":
        if not backend.windows():
            seed(backend)
    elif kind == "reconcile":
        backend.reconcile()
    elif kind == "delete":
        with backend.transaction() as transaction:
            transaction.delete_session(name)
    elif name in {window.session_id for window in backend.windows()}:
        if kind == "replace":
            replace(backend, name, value)
        else:
            events = backend.events(name)
            last = events[-1].event.get("id") if events else None
            with backend.transaction() as transaction:
                transaction.append_event(name, message(f"x{step}", last, " ".join(value)),
                                         float(step))


@settings(max_examples=25, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operations, min_size=1, max_size=8))
def test_random_lifecycles_give_identical_answers_on_both_backends(
        plan: list[tuple[str, str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as folder, both_stores(Path(folder)) as (reference, sqlite):
        seed(reference)
        seed(sqlite)
        for step, operation in enumerate(plan):
            for backend in (reference, sqlite):
                apply_operation(backend, operation, step)
            assert reference.index_status() == sqlite.index_status(), operation
            assert_same_answers(reference, sqlite, f"step {step}: {operation[:2]}")
