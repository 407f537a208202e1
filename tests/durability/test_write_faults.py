"""The reference store's and its index's write paths under every fault of the directory
fault layer (`faulty_directory`), and the SQLite backend on a database SQLite itself
finds full (`PRAGMA max_page_count`, a real SQLITE_FULL).

The workload (`run_workload`): create a store with small sizes (the index flushes every
3 rows and merges every 3 segments, the log rolls every 2 KiB, a checkpoint is due every
5 records), then 10 transactions, each putting its own window with two messages (and
every fifth deleting an earlier window), then close. A first run without faults counts
the operations; then the workload runs once per fault: every write failing with ENOSPC,
EIO or short, every write starting a full disk that lasts until space returns, or
failing with a rollback whose truncate fails too (the default run takes one of these
five kinds in turn at each write, the `slow` run all of them), and every sync and every
rename failing.

A second sweep (`SEALING`) runs the same workload with a log that rolls after 300 bytes,
so that every transaction alone fills and seals its own log file, and a reconcile after
each transaction with a checkpoint due whenever it ends (`checkpoint_idle_records` 1):
a fault in a seal then meets the checkpoint a quiet writer saves, as well as the one of
its close.

After each fault:
* every error the workload met is a `StoreError` naming a file of the store;
* once space returns, reopening the store shows exactly the transactions acknowledged
  (a transaction that raised is absent; one that returned is there), each message
  found by a search for its own word, and `verify` (the index rebuilt from the
  transcripts) finds nothing wrong;
* a power cut just before the fault (`crash_at_fault`) leaves every transaction
  acknowledged before it, and at most the one in flight besides.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from engine.backends.reference.backend import ReferenceBackend
from engine.config import EngineConfig
from engine.diagnostics.verify import verify_backend
from engine.directory import Directory, MemoryDirectory
from engine.errors import StoreError
from engine.model import SearchRequest, SessionWindow
from tests.durability.faulty_directory import EIO, ENOSPC, SHORT, Fault, FaultyDirectory

SETTINGS = EngineConfig(index_flush_documents=3, index_merge_segments=3, log_roll_bytes=2048,
                        checkpoint_after_records=5)
TRANSACTIONS = 10


@dataclass(frozen=True)
class Workload:
    """The sizes a sweep's store uses, and whether a reconcile follows each transaction."""

    settings: EngineConfig = SETTINGS
    reconcile_each: bool = False


DEFAULT = Workload()
SEALING = Workload(replace(SETTINGS, log_roll_bytes=300, checkpoint_after_records=10_000,
                           checkpoint_idle_records=1), reconcile_each=True)


def deleted_by(number: int) -> int | None:
    """The window transaction `number` deletes (every fifth deletes the one two before)."""
    return number - 2 if number % 5 == 4 else None


def write_transaction(backend: ReferenceBackend, number: int) -> None:
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow(f"w{number}", f"agent:main:w{number}"))
        for part in ("a", "b"):
            transaction.append_event(f"w{number}", {
                "type": "message", "id": f"m{number}{part}",
                "parentId": None if part == "a" else f"m{number}a", "timestamp": number,
                "message": {"role": "user", "content": f"word{number}{part} shared text"}})
        gone = deleted_by(number)
        if gone is not None:
            transaction.delete_session(f"agent:main:w{gone}")


def expected_windows(acknowledged: list[int]) -> set[str]:
    """The windows a store holds after the transactions `acknowledged`, in order."""
    windows: set[str] = set()
    for number in acknowledged:
        windows.add(f"w{number}")
        gone = deleted_by(number)
        if gone is not None:
            windows.discard(f"w{gone}")
    return windows


@dataclass
class Outcome:
    """What one run of the workload saw."""

    created: bool = False
    acknowledged: list[int] = field(default_factory=list)
    errors: list[StoreError] = field(default_factory=list)
    #: The transactions acknowledged before the first fault fired, and the one in
    #: flight then (None: the fault hit the creation or the close).
    acknowledged_at_fault: list[int] | None = None
    in_flight_at_fault: int | None = None


def run_workload(directory: FaultyDirectory, workload: Workload = DEFAULT) -> Outcome:
    outcome = Outcome()

    def note_fault(in_flight: int | None) -> None:
        if directory.fired and outcome.acknowledged_at_fault is None:
            outcome.acknowledged_at_fault = list(outcome.acknowledged)
            outcome.in_flight_at_fault = in_flight

    try:
        backend = ReferenceBackend.create_in(directory, config=workload.settings)
    except StoreError as error:
        outcome.errors.append(error)
        note_fault(None)
        return outcome
    note_fault(None)
    outcome.created = True
    for number in range(TRANSACTIONS):
        try:
            write_transaction(backend, number)
        except StoreError as error:
            outcome.errors.append(error)
        else:
            outcome.acknowledged.append(number)
        if workload.reconcile_each:
            try:
                backend.reconcile()
            except StoreError as error:  # the transaction stays acknowledged
                outcome.errors.append(error)
        note_fault(number)
    try:
        backend.close()
    except StoreError as error:
        outcome.errors.append(error)
    note_fault(None)
    return outcome


def check_store(directory: Directory, windows: set[str], settings: EngineConfig = SETTINGS
                ) -> None:
    """Reopen the store in `directory` as the writer: it holds exactly `windows`, every
    message is found by its word, and verify finds nothing wrong."""
    backend = ReferenceBackend.open_in(directory, writer=True, config=settings)
    try:
        assert {window.session_id for window in backend.windows()} == windows
        for session_id in windows:
            number = session_id[1:]
            assert [stored.event["id"] for stored in backend.events(session_id)] == [
                f"m{number}a", f"m{number}b"]
            found = backend.search(SearchRequest(f"word{number}b", agent_id="main"))
            assert [hit.message_id for hit in found.hits] == [f"m{number}b"]
        report = verify_backend(backend)
        assert report.problems == [], report.problems
    finally:
        backend.close()


def write_fault_kinds(number: int) -> list[tuple[Fault, ...]]:
    """Every way the `number`-th write can fail."""
    return [(Fault("write", number, ENOSPC),), (Fault("write", number, EIO),),
            (Fault("write", number, SHORT),),
            (Fault("write", number, ENOSPC, until_space_returns=True),),
            (Fault("write", number, ENOSPC), Fault("truncate", 1, EIO))]


def faults_to_inject(*, every_kind: bool, workload: Workload = DEFAULT
                     ) -> list[tuple[Fault, ...]]:
    """The faults of the sweep: at every write, sync and rename of the workload; at each
    write every kind of write fault (`every_kind`), or one kind in turn."""
    counted = FaultyDirectory(MemoryDirectory())
    clean = run_workload(counted, workload)
    assert clean.errors == [] and clean.acknowledged == list(range(TRANSACTIONS))
    assert counted.counts["truncate"] == 0  # only rollbacks truncate; see the double faults
    faults: list[tuple[Fault, ...]] = []
    for number in range(1, counted.counts["write"] + 1):
        kinds = write_fault_kinds(number)
        faults.extend(kinds if every_kind else [kinds[number % len(kinds)]])
    faults.extend((Fault("sync", number, EIO),) for number in range(1, counted.counts["sync"] + 1))
    faults.extend((Fault("rename", number, EIO),)
                  for number in range(1, counted.counts["rename"] + 1))
    return faults


#: The default run: one kind of write fault in turn at each write; the slow run: all.
FAULTS = faults_to_inject(every_kind=False)
EVERY_FAULT = faults_to_inject(every_kind=True)
SEALING_FAULTS = faults_to_inject(every_kind=False, workload=SEALING)


def test_the_faults_hit_every_file_kind_the_store_writes() -> None:
    """Log appends, commits and seals, checkpoints, segments, the manifest, the store's
    metadata: the workload writes, syncs and renames each file kind, and the sweep fails
    every one of those operations."""
    counted = FaultyDirectory(MemoryDirectory())
    run_workload(counted)
    kinds = {operation: {location.rsplit("/", 1)[-1].rsplit(".", 1)[-1]
                         for done, location in counted.operations if done == operation}
             for operation in ("write", "sync", "rename")}
    assert kinds["write"] >= {"meta", "log", "ckpt", "postings", "terms", "manifest"}, kinds
    assert kinds["sync"] >= {"meta", "log", "ckpt", "postings", "terms", "manifest"}, kinds
    assert kinds["rename"] >= {"meta", "ckpt", "postings", "terms", "manifest"}, kinds
    failed = {(fault.operation, fault.at) for faults in FAULTS for fault in faults}
    assert failed >= {(operation, number) for operation in ("write", "sync", "rename")
                      for number in range(1, counted.counts[operation] + 1)}
    assert len(FAULTS) >= 100 and len(EVERY_FAULT) >= 400


def fault_name(faults: tuple[Fault, ...]) -> str:
    return " + ".join(map(str, faults))


@pytest.mark.parametrize("faults", FAULTS, ids=fault_name)
def test_after_a_write_fault_the_store_is_whole_once_space_returns(
        faults: tuple[Fault, ...]) -> None:
    check_fault(faults)


@pytest.mark.slow
@pytest.mark.parametrize("faults", [faults for faults in EVERY_FAULT if faults not in FAULTS],
                         ids=fault_name)
def test_after_every_kind_of_write_fault_the_store_is_whole_once_space_returns(
        faults: tuple[Fault, ...]) -> None:
    check_fault(faults)


@pytest.mark.parametrize("faults", SEALING_FAULTS, ids=fault_name)
def test_after_a_fault_a_store_whose_every_commit_seals_and_reconciles_is_whole(
        faults: tuple[Fault, ...]) -> None:
    check_fault(faults, SEALING)


def check_fault(faults: tuple[Fault, ...], workload: Workload = DEFAULT) -> None:
    """Run the workload under `faults` and check the module docstring's promises."""
    settings = workload.settings
    directory = FaultyDirectory(MemoryDirectory(), *faults)
    outcome = run_workload(directory, workload)
    assert directory.fired, "the fault never fired"
    for error in outcome.errors:
        assert "memory:" in str(error), error  # names a file of the store
    directory.space_returns()
    if not outcome.created:
        assert outcome.acknowledged == []
        if directory.inner.exists("store.meta"):
            check_store(directory.inner, set(), settings)
    else:
        check_store(directory.inner, expected_windows(outcome.acknowledged), settings)
    crashed = directory.crash_at_fault()
    assert crashed is not None
    if crashed.exists("store.meta") and outcome.acknowledged_at_fault is not None:
        before = outcome.acknowledged_at_fault
        in_flight = outcome.in_flight_at_fault
        allowed = [expected_windows(before)]
        if in_flight is not None:
            allowed.append(expected_windows([*before, in_flight]))
        backend = ReferenceBackend.open_in(crashed, writer=True, config=settings)
        try:
            present = {window.session_id for window in backend.windows()}
        finally:
            backend.close()
        assert present in allowed
        check_store(crashed, present, settings)


def test_a_lasting_full_disk_refuses_every_transaction_clearly_until_space_returns() -> None:
    directory = FaultyDirectory(MemoryDirectory())
    backend = ReferenceBackend.create_in(directory, config=SETTINGS)
    write_transaction(backend, 0)
    directory.faults = (Fault("write", directory.counts["write"] + 1, ENOSPC,
                              until_space_returns=True),)
    refusals = []
    for number in (1, 2, 3):
        with pytest.raises(StoreError) as refused:
            write_transaction(backend, number)
        refusals.append(str(refused.value))
    assert refusals[0] == ("memory:transcripts/segment-000001.log: cannot write: "
                           "No space left on device")
    failed_earlier = f"the store writer failed earlier ({refusals[0]}); reopen the store"
    assert refusals[1:] == [failed_earlier] * 2
    with pytest.raises(StoreError, match="^memory:index/.*: cannot write: No space left"):
        backend.close()  # the index it flushes at close is refused too
    directory.space_returns()
    check_store(directory.inner, {"w0"})
    backend = ReferenceBackend.open_in(directory, writer=True, config=SETTINGS)
    write_transaction(backend, 1)
    backend.close()
    check_store(directory.inner, {"w0", "w1"})


# ----- SQLite: a database SQLite itself finds full -------------------------------------


def sqlite_messages(transaction: object, session: str, count: int) -> None:
    transaction.put_window(SessionWindow(session, f"agent:main:{session}"))  # type: ignore[attr-defined]
    for number in range(count):
        transaction.append_event(session, {  # type: ignore[attr-defined]
            "type": "message", "id": f"{session}-{number}",
            "parentId": None if number == 0 else f"{session}-{number - 1}", "timestamp": number,
            "message": {"role": "user", "content": f"{session} words {number} " * 20}})


def test_a_full_sqlite_database_refuses_the_transaction_clearly_and_keeps_the_rest(
        tmp_path: Path) -> None:
    from engine.store.registry import open_backend

    store = tmp_path / "store"
    database = store / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    backend = open_backend(store, backend="sqlite", create=True)
    with backend.transaction() as transaction:
        sqlite_messages(transaction, "kept", 20)
    connection: sqlite3.Connection = backend.partition("main")._writer  # its one connection
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count = {pages + 2}")  # SQLite's own size limit
    with pytest.raises(StoreError) as refused, backend.transaction() as transaction:
        sqlite_messages(transaction, "refused", 400)
    assert str(refused.value).startswith(f"{database}: "), refused.value
    assert str(refused.value).endswith("database or disk is full")
    assert [window.session_id for window in backend.windows()] == ["kept"]
    connection.execute("PRAGMA max_page_count = 1073741823")  # space returns
    with backend.transaction() as transaction:
        sqlite_messages(transaction, "later", 400)
    backend.close()
    with open_backend(store) as reopened:
        assert [window.session_id for window in reopened.windows()] == ["kept", "later"]
        assert reopened.event_count("kept") == 20 and reopened.event_count("later") == 400
        found = reopened.search(SearchRequest("refused", agent_id="main"))
        assert found.hits == ()
        found = reopened.search(SearchRequest("later", agent_id="main"))
        assert found.hits
