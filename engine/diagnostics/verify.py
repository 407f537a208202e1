"""`session-search verify`: check the transcripts, rebuild the reference index from them
and compare (a SQLite partition: `engine.backends.sqlite.verify`).

Owns: what "the committed index agrees with the transcripts" means, and the report.
Must not touch: the index on disk (verify reads; `repair` is a separate, explicit step
in the backend), byte layouts, search.

First what opening found (`TranscriptStore.problems`; the store is opened with
`accept_lost_commits`, so that missing committed data is reported rather than raised):
committed transactions missing from the log (a log file cut shorter than the catalog
checkpoint or the index manifest records as committed, or a log file they name missing:
the file and the byte range; see `engine.transcript.evidence`), a checkpoint that is
damaged or disagrees with the log, each a problem; an unfinished transaction at the end
of the log is a note (informational: a crash leaves one; exit status unchanged). When
committed transactions are missing, the index is not compared (it covers commits the log
lacks), and the report says what `--repair` can and cannot recover.

Then the transcripts themselves: `TranscriptStore.verify_log` CRCs every byte of
committed data against the log files' footers and the running CRC of the open one (the
thorough check that opening skips: an open from the catalog checkpoint reads only the
log files' headers, footers and last commit). Damage there is reported as a problem naming
the file (and the first damaged record's offset), and the index is then not compared,
since its rows would be rebuilt from damaged records.

Repair (`repair_backend`, `verify --repair`; the store opened as the writer with
`accept_lost_commits`): committed transactions the log no longer holds are dropped (the
damaged end of the log is cut back to the last intact commit and the checkpoint saved
again for what remains), an unfinished tail is cut, and the index is rebuilt from the
transcripts. It cannot bring back missing bytes: only a backup of the file holds them.
The report lists what was done (`repairs`), then the verification of the result.

What is compared, per window of the store:

* a window whose index state is clean must hold exactly the rows of its active path
  (`projection.index_entries`) up to its watermark `indexed_seq`;
* a window without state (deferred: imported without forward indexing) must hold no rows,
  and so must an incognito window (`SessionWindow.is_incognito`: never indexed);
* a window that needs a rebuild keeps stale rows until reconcile: they are only required
  to point at existing events, and are counted as `stale`;
* rows of windows the store no longer has are `orphans`.

The expected rows are then indexed afresh into an in-memory `InvertedIndex` with the
same analyzer, and the two indexes are compared term by term (rows matched by
`(session_id, seq)`, since doc ids depend on history), together with `N` and the total
token count. `engine.index.check` runs on the committed index too. Verify never repairs;
`repair_backend` (the `--repair` flag) does, explicitly.

A store is verified partition by partition (`verify_store`): each agent's partition has
its own transcripts and index, so each gets its own report, and the store's report is
their sum with every problem prefixed by its agent (`StoreVerifyReport`). Before them
comes what the store's root says is missing: an agent it lists whose partition folder is
gone (`FolderPartitions.missing_problems`), and a folder in `agents/` the root does not
list (`stray_problems`: never used until adopted). The repair drops a missing agent from
the list and says that its sessions cannot be recovered without a backup, and adopts a
stray folder (lists it and verifies it with the others), saying so. A SQLite partition is
checked by `engine.backends.sqlite.verify` (its FTS rows against a rebuild from its
transcript rows, and SQLite's own integrity checks of the file), into the same
`VerifyReport`.

Cost: O(transcript bytes + events + postings): every committed byte is CRC-checked once,
every event of every window is read, every posting list of both indexes is walked once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from engine.backends.reference.backend import ReferenceBackend
from engine.backends.verify_report import MAX_LISTED, VerifyReport
from engine.errors import UnknownSession, UsageError
from engine.index.check import check_index
from engine.index.documents import fts_text
from engine.index.inverted_index import InvertedIndex
from engine.index.loading import check_index_files
from engine.model import IndexEntry
from engine.store.partitioned import PartitionedStore
from engine.transcript.evidence import counted
from engine.transcript.log_files import log_file_name
from engine.transcript.lost_commits import LostCommits
from engine.transcript.projection import extract_index_entry, index_entries

RowKey = tuple[str, int]


def _row_key(entry: IndexEntry) -> RowKey:
    return (entry.session_id, entry.seq)


def expected_entries(backend: ReferenceBackend, report: VerifyReport) -> list[IndexEntry]:
    """The rows the index should hold, window by window (stale rows taken as they are)."""
    store = backend.store
    index = backend.index
    committed: dict[str, list[IndexEntry]] = {}
    for entry in backend.iter_index_entries():
        committed.setdefault(entry.session_id, []).append(entry)
    expected: list[IndexEntry] = []
    for window in store.windows():
        report.windows += 1
        session_id = window.session_id
        state = index.window_states.get(session_id)
        if state is None or window.is_incognito:
            continue
        if state.needs_rebuild:
            stale = committed.get(session_id, [])
            report.stale_rows += len(stale)
            expected.extend(stale)
            continue
        events = store.events(session_id)[: state.indexed_seq + 1]
        expected.extend(replace(entry, text=fts_text(entry.text)) for entry in index_entries(events))
    return expected


def _postings_by_row(index: InvertedIndex) -> dict[str, Counter[tuple[RowKey, tuple[int, ...]]]]:
    """`{term: Counter((session_id, seq), positions)}` over the live rows."""
    keys = {record.doc_id: (record.session_id, record.seq) for record in index.documents()}
    terms: set[str] = set()
    for segment in index.all_segments():
        terms.update(segment.terms())
    table: dict[str, Counter[tuple[RowKey, tuple[int, ...]]]] = {}
    for term in terms:
        postings = index.postings(term)
        if postings:
            table[term] = Counter((keys[p.doc_id], p.positions) for p in postings)
    return table


def _row_source(backend: ReferenceBackend):
    store = backend.store

    def lookup(session_id: str, seq: int) -> tuple[bool, IndexEntry | None]:
        try:
            stored = store.event(session_id, seq)
        except UnknownSession:
            return False, None
        return True, extract_index_entry(stored)

    return lookup


def repair_advice(lost: LostCommits) -> str:
    """What `verify --repair` can and cannot do about `lost`, one line."""
    return (f"`verify --repair` can drop transactions {lost.first_lost}..{lost.last_lost} "
            f"and go on with what remains ({lost.remains()}): it cuts what is left of them "
            "from the end of the log, saves the catalog checkpoint again and rebuilds the "
            "index; it cannot recover the missing committed bytes: if a backup "
            "holds the file, restore it before any repair or write")


def repair_backend(backend: ReferenceBackend) -> list[str]:
    """Repair a reference store opened as the writer with `accept_lost_commits` (which
    already dropped missing committed transactions and cut the log's damaged or
    unfinished end): save the checkpoint of what remains, rebuild the index from the
    transcripts; return what was done and what could not be, one line each."""
    store = backend.store
    done: list[str] = []
    lost = store.lost_commits
    if lost is not None:
        done.append(f"{lost.problem.location}: {lost.describe_loss()}; they were dropped")
    tail = store.recovered_tail
    if tail is not None:
        done.append(f"{store.directory.location(log_file_name(tail.file_number))}: cut "
                    f"{tail.cut_bytes} bytes after the last intact commit (bytes "
                    f"{tail.committed_end}..{tail.file_size}: {tail.reason})")
    store.rewrite_checkpoint()
    windows = backend.rebuild_index()
    done.append(f"rebuilt the index from the transcripts ({counted(windows, 'window')}, "
                f"{counted(store.generation, 'transaction')})")
    if lost is not None:
        done.append("could not recover the missing committed bytes (only a backup of the "
                    "file holds them)")
    return done


def verify_backend(backend: ReferenceBackend) -> VerifyReport:
    """Compare `backend`'s committed index with one rebuilt from its transcripts, after
    reporting what its store found wrong on open (`TranscriptStore.problems`)."""
    report = VerifyReport()
    store = backend.store
    for problem in store.problems():
        (report.problems if problem.serious else report.notes).append(str(problem))
    if store.lost_commits is not None:
        report.windows = len(store.windows())
        damage = store.verify_log()
        if damage is not None:
            report.problems.append(f"transcripts: {damage}")
        report.problems.append("the index was not compared: committed transactions are "
                               "missing from the transcripts")
        report.notes.append(repair_advice(store.lost_commits))
        return report
    damage = backend.store.verify_log()
    if damage is not None:
        report.problems.append(f"transcripts: {damage}")
        report.problems.append("the index was not compared: the transcripts are damaged")
        return report
    file_damage = check_index_files(backend.store.directory)
    if file_damage:
        report.problems.extend(f"index: {problem}" for problem in file_damage)
        report.problems.append("the index was not compared: its files are damaged "
                               "(verify --repair rebuilds it from the transcripts)")
        return report
    index = backend.index
    report.problems.extend(check_index(index, _row_source(backend)))
    committed = list(backend.iter_index_entries())
    report.rows_committed = len(committed)
    expected = expected_entries(backend, report)
    report.rows_expected = len(expected)
    report.windows_needing_reconcile = len(backend.windows_needing_reconcile())
    for session_id in backend.orphan_session_ids():
        report.problems.append(f"orphan rows or state for window {session_id!r} (run reconcile)")

    committed_rows = Counter(committed)
    expected_rows = Counter(expected)
    missing = list((expected_rows - committed_rows).elements())
    extra = list((committed_rows - expected_rows).elements())
    for entry in missing[:MAX_LISTED]:
        report.problems.append(f"missing row {_row_key(entry)} message {entry.message_id!r}")
    for entry in extra[:MAX_LISTED]:
        report.problems.append(f"unexpected row {_row_key(entry)} message {entry.message_id!r}")

    rebuilt = InvertedIndex()
    for entry in expected:
        rebuilt.add_entry(entry, backend.analyzer.terms(entry.text))
    if (rebuilt.document_count, rebuilt.total_tokens) != (index.document_count, index.total_tokens):
        report.problems.append(
            f"statistics differ: committed N={index.document_count} tokens={index.total_tokens},"
            f" rebuilt N={rebuilt.document_count} tokens={rebuilt.total_tokens}"
        )
    committed_postings = _postings_by_row(index)
    rebuilt_postings = _postings_by_row(rebuilt)
    differing = sorted(
        term for term in committed_postings.keys() | rebuilt_postings.keys()
        if committed_postings.get(term) != rebuilt_postings.get(term)
    )
    for term in differing[:MAX_LISTED]:
        report.problems.append(f"postings of term {term!r} differ from the rebuild")
    if len(differing) > MAX_LISTED:
        report.problems.append(f"... and {len(differing) - MAX_LISTED} more differing terms")
    return report


@dataclass(frozen=True, slots=True)
class StoreVerifyReport:
    """The reports of every partition of a store, by agent id in agent order."""

    partitions: dict[str, VerifyReport]
    #: Problems of the store as a whole: partitions its root lists whose folder is gone.
    store_problems: tuple[str, ...] = ()
    #: What the repair did to the store as a whole (agents dropped from its list).
    store_repairs: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when no partition is missing and every partition's index matches its
        transcripts."""
        return not self.store_problems and all(report.ok for report in self.partitions.values())

    @property
    def problems(self) -> list[str]:
        """The store's problems, then every partition's, each prefixed with its agent."""
        return [*self.store_problems, *self._prefixed("problems")]

    def _prefixed(self, name: str) -> list[str]:
        return [f"agent {agent_id}: {line}" for agent_id, report in self.partitions.items()
                for line in getattr(report, name)]

    def total(self, name: str) -> int:
        """One count of `VerifyReport` summed over the partitions."""
        return sum(getattr(report, name) for report in self.partitions.values())

    def to_json(self) -> dict[str, object]:
        """The summed report (as `VerifyReport.to_json`) plus `partitions` by agent."""
        summed = VerifyReport(
            windows=self.total("windows"), rows_committed=self.total("rows_committed"),
            rows_expected=self.total("rows_expected"), stale_rows=self.total("stale_rows"),
            windows_needing_reconcile=self.total("windows_needing_reconcile"),
            problems=self.problems, notes=self._prefixed("notes"),
            repairs=[*self.store_repairs, *self._prefixed("repairs")])
        return {**summed.to_json(),
                "partitions": {agent_id: report.to_json()
                               for agent_id, report in self.partitions.items()}}

    def lines(self) -> list[str]:
        """A readable report: the store's status, then each partition's report."""
        status = "OK: the index matches its transcripts" if self.ok else (
            f"MISMATCH: {len(self.problems)} problem(s)")
        lines = [f"repaired: {repair}" for repair in self.store_repairs]
        lines.extend(f"repaired: {repair}" for report in self.partitions.values()
                     for repair in report.repairs)
        lines.append(status)
        lines.extend(f"store: {problem}" for problem in self.store_problems)
        for agent_id, report in self.partitions.items():
            verdict = "ok" if report.ok else f"{len(report.problems)} problem(s)"
            own = [line for line in report.lines() if not line.startswith("repaired: ")]
            lines.append(f"agent {agent_id}: {verdict}; {own[1]}")  # own[0] is its status
            lines.extend(f"  {line}" for line in own[2:])
        return lines


def repair_store(store: PartitionedStore) -> dict[str, list[str]]:
    """Repair `store`, opened as the writer with `accept_lost_commits`: drop the agents
    whose partition folder is gone from the root's list (their data cannot be brought
    back), set a damaged commit journal aside, adopt every stray folder in `agents/` (the explicit adoption: it is listed and
    verified with the others), then repair every partition (`repair_backend`, or
    `sqlite_verify.repair_sqlite_backend`); return what was done, by agent."""
    repairs = {agent_id: [(f"agents/{agent_id}: dropped agent {agent_id!r} from the store: "
                           "its partition folder was missing, and its sessions cannot be "
                           "recovered without a backup")]
               for agent_id in store.space.forget_missing()}
    set_aside = store.set_damaged_journal_aside()
    if set_aside is not None:
        repairs[""] = [set_aside]
    for agent_id in store.adopt_strays():
        adopted = (f"agents/{agent_id}: adopted the folder the store did not list as the "
                   f"partition of agent {agent_id!r} (verified below)")
        repairs[agent_id] = [adopted]
    for agent_id, partition in store.partitions().items():
        repairs[agent_id] = [*repairs.get(agent_id, ()), *repair_partition(partition)]
    went_back = store.witness_problems()
    store.record_all_generations()
    if went_back:
        repairs[""] = [*repairs.get("", ()), *(
            f"{problem}: accepted what the partition holds" for problem in went_back)]
    return repairs


def verify_store(store: PartitionedStore, *,
                 repairs: dict[str, list[str]] | None = None) -> StoreVerifyReport:
    """Verify every partition of `store` (`verify_partition`); `repairs` (from
    `repair_store`, run before) are attached to each partition's report."""
    reports: dict[str, VerifyReport] = {}
    for agent_id, partition in store.partitions().items():
        report = verify_partition(partition)
        report.repairs = list((repairs or {}).get(agent_id, ()))
        reports[agent_id] = report
    store_repairs = tuple(repair for agent_id, done in (repairs or {}).items()
                          if agent_id not in reports for repair in done)
    return StoreVerifyReport(
        reports, tuple(problem.with_advice() for problem in (
            *store.space.missing_problems(), *store.space.stray_problems(),
            *store.journal_problems(),
            *(problem for problem in store.witness_problems() if problem.serious))),
        store_repairs)


def verify_partition(partition: object) -> VerifyReport:
    """The report of one partition: `verify_backend` for a reference one,
    `sqlite_verify.verify_sqlite_backend` for a SQLite one,
    `engine.backends.postgres.verify.verify_postgres_backend` for a PostgreSQL one;
    `UsageError` for another."""
    return partition_checks(partition, "verify")[0](partition)


def repair_partition(partition: object) -> list[str]:
    """What `--repair` did to one partition (`repair_backend`, or
    `sqlite_verify.repair_sqlite_backend`)."""
    return partition_checks(partition, "verify --repair")[1](partition)


def partition_checks(partition: object, action: str) -> tuple[Callable[[Any], VerifyReport],
                                                             Callable[[Any], list[str]]]:
    """The verify and repair functions of `partition`'s backend (`UsageError` naming
    `action` and the backend when there are none)."""
    if isinstance(partition, ReferenceBackend):
        return verify_backend, repair_backend
    # Imported here, when a SQLite partition is checked: a reference store's verification
    # never loads SQLite.
    from engine.backends.sqlite.backend import SqliteBackend
    from engine.backends.sqlite.verify import repair_sqlite_backend, verify_sqlite_backend

    if isinstance(partition, SqliteBackend):
        return verify_sqlite_backend, repair_sqlite_backend
    if getattr(partition, "name", None) == "postgres":  # loaded only for its partitions
        from engine.backends.postgres.verify import (
            repair_postgres_backend,
            verify_postgres_backend,
        )

        return verify_postgres_backend, repair_postgres_backend
    name = getattr(partition, "name", type(partition).__name__)
    raise UsageError(f"{action} cannot check a partition of backend {name!r}")
