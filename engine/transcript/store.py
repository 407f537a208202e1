"""The transcript store: session windows and their events, durable in a `Directory`.

Owns: the public `TranscriptStore` API (create / open, the writer lock, recovery of a
torn tail, the refusal of a log that lost committed transactions, transactions and their
commit, reads, `changes_since`, verify), and the store metadata file `store.meta`. Must
not touch: byte layouts (`engine.codec`), the log files (`engine.transcript.log` reads
and writes them), search indexes, or event semantics (the store keeps each event as an
opaque JSON object; `engine.transcript.events` and friends interpret them). The concepts it assembles live in their own modules: the
catalog in memory (`catalog`), its checkpoint on disk (`checkpoint`), the evidence of
what was committed (`evidence`), write transactions (`transaction`) and the commit hooks
(`changes`).

Files of a store (a `Directory`):

    store.meta                       backend name and creation time (framed, versioned)
    LOCK                             the single writer's lock; holds its pid
    transcripts/segment-NNNNNN.log   the transcript log: append-only transactions (`log`)
    transcripts/catalog.ckpt         catalog checkpoint (derived; optional; `checkpoint`)
    transcripts/compaction.state     compactions begun, one running (`compaction`;
                                     absent until the first compaction)

State. The store is the replay of its committed transactions, in order (the rule is
`Catalog.apply`); event objects are decoded from the log on demand, by the positions the
catalog holds.

Opening replays the log after the catalog checkpoint when one can be trusted, and the
whole log otherwise (`engine.transcript.checkpoint` says what is checked, and when). It
then compares what the log holds with what was committed: the checkpoint (even one that
is not trusted) and any claim the opener passes (a search index's manifest) record it,
and a log that holds less lost committed transactions, which opening refuses, naming
the file and the missing range (`engine.transcript.evidence`; `accept_lost_commits`
opens all the same, for verify, stats and repair). Only then does a writer cut a torn or
uncommitted tail off the last log file (`LogWriter.recover`): what it cuts is never
covered by a claim. `problems()` lists what opening found, for `session-search verify`
and `stats`.

Transactions. `transaction()` yields a `StoreTransaction` whose records are written
through to the current log file as they come and whose effects are kept in a small
overlay that reads inside the transaction see. Leaving the block normally writes the
commit record and fsyncs; only then is the overlay applied to the catalog (through the
same functions replay uses), the generation bumped, the checkpoint saved when due and
the commit hooks called. Leaving it with an exception truncates the log file back and
drops the overlay. A transaction that wrote nothing commits nothing. So an error out of
the block means the transaction is absent: once the fsync returned, nothing raises (a
checkpoint the disk refuses is retried later; a log file that cannot be sealed leaves
the writer failed, to be reopened).

Readers (`writer=False`) take no lock, never truncate, and see the transactions that
were committed when they opened or last called `refresh()`.

Compaction (`compact()`, writer only) rewrites the sealed log files that hold records a
later delete made dead; opening, `refresh()` and the reads of a reader follow it as
`engine.transcript.compaction` says (a stale position is reloaded, never reported as
damage).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Self, TypeVar

from engine.codec.compaction_file import CompactionState
from engine.codec.log_file import CommitRecord
from engine.codec.meta_file import StoreMeta, decode_meta_file, encode_meta_file
from engine.config import EngineConfig
from engine.directory import Directory, FileDirectory, LockHandle
from engine.errors import CorruptFile, StoreError, UnknownSession, UsageError
from engine.model import SessionWindow, StoredEvent, agent_id_of
from engine.transcript.catalog import Catalog
from engine.transcript.changes import Change, ChangeFeed, CommitHook, changes_of
from engine.transcript.checkpoint import (
    CHECKPOINT_NAME,
    CheckpointPositionsReader,
    checkpoint_is_due,
    open_checkpoint,
    quiet_checkpoint_is_due,
    save_checkpoint,
    trust_checkpoint,
)
from engine.transcript.compaction import (
    CompactionOutcome,
    begun_state,
    catalog_state,
    finished_state,
    plan_compaction,
    read_compaction_state,
    rewrite_log_file,
    write_compaction_state,
)
from engine.transcript.evidence import CommittedClaim, LostCommits, StoreProblem, find_lost_commits
from engine.transcript.log import (
    LOG_FOLDER,
    CommittedTransaction,
    LogCursor,
    LogReader,
    LogTail,
    LogWriter,
    SealedLogFile,
    check_covered_log,
    find_damaged_record,
    log_file_name,
    now_milliseconds,
    sealed_log_file_of,
)
from engine.transcript.transaction import StoreTransaction

Value = TypeVar("Value")

#: How many times a reader reloads its catalog for one read while a compaction runs.
COMPACTION_RETRIES = 5

META_NAME = "store.meta"
LOCK_NAME = "LOCK"


class TranscriptStore:
    """Session windows and events in a directory; one writer, any number of readers."""

    def __init__(
        self,
        directory: Directory,
        meta: StoreMeta,
        config: EngineConfig,
        lock: LockHandle | None,
    ) -> None:
        """Use `create`, `open` or `open_path`; this only sets fields."""
        self.directory = directory
        self.backend = meta.backend
        self.created_at = meta.created_at
        self.config = config
        self._lock = lock
        self._catalog = Catalog()
        self._reader = LogReader(directory)
        #: Where the committed data this handle has seen ends, and the sealed log files
        #: before it (what a checkpoint saves and `verify_log` checks).
        self._cursor = LogCursor()
        self._sealed_files: list[SealedLogFile] = []
        self._writer: LogWriter | None = None
        self._transaction: StoreTransaction | None = None
        self._change_feed = ChangeFeed()
        self._closed = False
        #: What the writer cut from the end of the last log file on open (None: nothing).
        self.recovered_tail: LogTail | None = None
        #: The generation a catalog checkpoint supplied on open (None: none was used),
        #: and why a checkpoint found on open was not used (None: used, or absent).
        self.checkpoint_generation: int | None = None
        self.checkpoint_ignored: str | None = None
        self._saved_generation = 0  # the generation the checkpoint file holds
        self._records_since_checkpoint = 0  # records committed after it, commits included
        #: Reads the event positions of the checkpoint loaded on open, once.
        self._positions_reader: CheckpointPositionsReader | None = None
        #: What files written after commits say was committed (`engine.transcript.
        #: evidence`): the checkpoint's claim, and those the opener passed.
        self._claims: list[CommittedClaim] = []
        #: Whether opening may go on when committed transactions are missing.
        self._accepts_lost_commits = False
        #: The committed transactions found missing (only with `accept_lost_commits`).
        self.lost_commits: LostCommits | None = None
        #: Why the checkpoint found on open was not used, as a problem to report.
        self._checkpoint_problem: StoreProblem | None = None
        #: The compaction state read when the catalog was last loaded.
        self._compaction_seen = CompactionState()

    # ----- opening -----------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        directory: Directory,
        *,
        backend: str = "reference",
        config: EngineConfig | None = None,
    ) -> TranscriptStore:
        """Create an empty store in `directory` and open it as the writer."""
        if not isinstance(backend, str) or not backend:
            raise UsageError("a store needs a backend name")
        lock = directory.acquire_lock(LOCK_NAME)
        try:
            if directory.exists(META_NAME) or directory.list_names(LOG_FOLDER + "/"):
                raise StoreError(f"{directory.location(META_NAME)}: a store already exists here")
            meta = StoreMeta(backend, now_milliseconds())
            directory.write_atomic(META_NAME, encode_meta_file(meta))
            store = cls(directory, meta, config or EngineConfig(), lock)
            store._writer = LogWriter(directory, store.config)
            return store
        except BaseException:
            lock.release()
            raise

    @classmethod
    def open(
        cls,
        directory: Directory,
        *,
        writer: bool = False,
        config: EngineConfig | None = None,
        committed: Iterable[CommittedClaim] = (),
        accept_lost_commits: bool = False,
    ) -> TranscriptStore:
        """Open an existing store; as the writer, recover a torn or uncommitted tail.

        Committed transactions are never taken for a torn tail: when the log holds fewer
        than the catalog checkpoint or a claim in `committed` (a search index's
        manifest) records as committed, opening raises StoreError naming the file and
        what is missing (`engine.transcript.evidence`), before a writer cuts anything.
        With `accept_lost_commits` it opens all the same and `lost_commits` says what
        is missing (verify, stats); a writer so opened cuts the damaged tail like a torn
        one and saves a checkpoint of what remains (`verify --repair`).
        """
        if not directory.exists(META_NAME):
            raise StoreError(f"{directory.location(META_NAME)}: no store here (missing metadata)")
        lock = directory.acquire_lock(LOCK_NAME) if writer else None
        try:
            meta = decode_meta_file(directory.read_bytes(META_NAME), directory.location(META_NAME))
            store = cls(directory, meta, config or EngineConfig(), lock)
            store._accepts_lost_commits = accept_lost_commits
            store._compaction_seen = read_compaction_state(directory)
            store._load_checkpoint()
            store._replay()
            for claim in [*store._claims, *committed]:
                store._check_claim(claim)
            if writer:
                store._writer = LogWriter(directory, store.config)
                store.recovered_tail = store._writer.recover(store._reader)
                if store.lost_commits is not None:
                    store.rewrite_checkpoint()
                if store._compaction_seen.in_progress:
                    store._finish_interrupted_compaction()
            return store
        except BaseException:
            if lock is not None:
                lock.release()
            raise

    @classmethod
    def open_path(
        cls,
        path: str | os.PathLike[str],
        *,
        writer: bool = False,
        create: bool = False,
        backend: str = "reference",
    ) -> TranscriptStore:
        """Open the store in folder `path`; with `create`, make it first when absent.

        A store made here is opened as the writer whatever `writer` says; `backend`
        is used only when creating (an existing store keeps its own; see `.backend`).
        """
        directory = FileDirectory(path)
        if create and not directory.exists(META_NAME):
            return cls.create(directory, backend=backend)
        return cls.open(directory, writer=writer)

    def _replay(self) -> None:
        """Apply every committed transaction after the cursor to the catalog, counting
        its records (commits included) as committed since the checkpoint: the records a
        reader opening next would replay too."""
        location_of = self._log_file_location
        for transaction in self._reader.iter_transactions(self._cursor):
            self._catalog.apply(transaction, location_of)
            self._records_since_checkpoint += len(transaction.records) + 1
        self._cursor = self._reader.cursor
        self._sealed_files.extend(self._reader.sealed_files)

    def _load_checkpoint(self) -> None:
        """Start from the catalog checkpoint when it can be trusted (`load_checkpoint`);
        otherwise record in `checkpoint_ignored` why not, and let the replay do it all.
        A checkpoint that can be read is evidence of what was committed even when the
        log no longer matches it (or `catalog_checkpoints` is off): its claim is kept."""
        location = self.directory.location(CHECKPOINT_NAME)
        try:
            opened = open_checkpoint(self.directory, self.config)
        except StoreError as error:  # damaged, or another layout: no claim can be read
            self.checkpoint_ignored = str(error)
            self._checkpoint_problem = StoreProblem(
                location, f"{error} (the checkpoint was not used: the log was replayed; "
                          "the next writer's close saves a new one)",
                serious=isinstance(error, CorruptFile))
            return
        if opened is None:
            return
        self._claims.append(opened.claim())
        if not self.config.catalog_checkpoints:
            opened.close()
            return
        if self._compaction_seen.in_progress:
            opened.close()
            self.checkpoint_ignored = "a compaction of the log was running or interrupted"
            self._checkpoint_problem = StoreProblem(
                location, f"{location}: not used: a compaction of the transcript log was "
                          "running or was interrupted, so the log was replayed (nothing "
                          "committed is lost; the next writer saves a new checkpoint)",
                serious=False)
            return
        problem = opened.disagreement(self.directory)
        if problem is not None and read_compaction_state(self.directory) != \
                self._compaction_seen:  # a compaction began since the state was read
            self._compaction_seen = read_compaction_state(self.directory)
            problem = "a compaction of the log was running"
            opened.close()
            self.checkpoint_ignored = problem
            self._checkpoint_problem = StoreProblem(
                location, f"{location}: not used: the transcript log was compacted while "
                          "it was opened, so the log was replayed", serious=False)
            return
        if problem is not None:
            opened.close()
            self.checkpoint_ignored = problem
            self._checkpoint_problem = StoreProblem(
                location, f"{location}: the catalog checkpoint disagrees with the log "
                          f"({problem}); it was not used: the log was replayed")
            return
        try:
            loaded = trust_checkpoint(self.directory, opened)
        except StoreError as error:
            self.checkpoint_ignored = str(error)
            self._checkpoint_problem = StoreProblem(location, f"{location}: {error}")
            return
        self._catalog = loaded.catalog
        self._cursor = loaded.cursor
        self._sealed_files = list(loaded.sealed_files)
        self._positions_reader = loaded.positions_reader
        self.checkpoint_generation = self._saved_generation = loaded.transaction_id

    @property
    def checkpoint_positions_rebuilt(self) -> str | None:
        """Why the event positions of the checkpoint used on open were rebuilt by replay
        when they were first needed (damaged, or unreadable); None when they were read
        intact, are not needed yet, or no checkpoint was used."""
        reader = self._positions_reader
        return None if reader is None else reader.problem

    def verify_log(self) -> str | None:
        """Check every byte of committed data this handle has seen; return what is wrong
        (naming the file, and the offset of the first damaged record when one is found),
        or None.

        The thorough check that opening skips (`session-search verify` runs it): the
        CRC32 of all record bytes of every log file against its footer, and of the open
        log file against the running CRC kept by the writer (saved in the checkpoint) or
        by the replay. Cost: O(bytes of the log), CRC in C, no record decoding.
        """
        self._check_open()
        problem = check_covered_log(self.directory, self._cursor)
        if problem is None:
            return None
        damaged = find_damaged_record(self.directory, self._cursor)
        return problem if damaged is None else str(damaged)

    # ----- what was committed ------------------------------------------------------------

    def check_committed(self, claim: CommittedClaim) -> None:
        """Refuse a log that holds fewer transactions than `claim` says were committed
        (StoreError naming the file and what is missing), or record it in `lost_commits`
        when the store was opened with `accept_lost_commits`.

        A reader first catches up with the writer (`refresh`): a claim written after it
        opened may cover commits it has not read yet.
        """
        self._check_open()
        if claim.transaction_id > self.generation and self._writer is None:
            self.refresh()
        self._check_claim(claim)

    def _check_claim(self, claim: CommittedClaim) -> None:
        lost = find_lost_commits(self.directory, claim, self.generation, self._cursor,
                                 self.unfinished_tail, self._catalog.event_total)
        if lost is None:
            return
        if not self._accepts_lost_commits:
            raise StoreError(lost.problem.with_advice())
        if self.lost_commits is None or lost.last_lost > self.lost_commits.last_lost:
            self.lost_commits = lost

    def rewrite_checkpoint(self) -> None:
        """Writers, between transactions: save the catalog checkpoint of what is committed
        now, or remove the checkpoint file when nothing is (or checkpoints are off), so
        that one that was damaged, disagreed with the log or claimed commits the log lost
        is gone. Opening with `accept_lost_commits` does this at once as a writer;
        `verify --repair` calls it too."""
        self._check_open()
        if self._writer is None:
            raise StoreError("this store was opened read-only; open it with writer=True")
        cursor = self._committed_cursor()
        if cursor is not None and self._catalog.generation and self.config.catalog_checkpoints:
            self._save_checkpoint(cursor)
        elif self.directory.exists(CHECKPOINT_NAME):
            self.directory.remove(CHECKPOINT_NAME)
            self._saved_generation = 0

    def save_checkpoint_when_quiet(self) -> bool:
        """Writers, between transactions, when they go quiet: save the catalog checkpoint
        once `EngineConfig.checkpoint_idle_records` records (commits included) were
        committed, or replayed at open, since the last one (`quiet_checkpoint_is_due`);
        whether it was saved. The reference backend calls it when a reconcile of a
        partition ends, so that a reader opening next to the writer replays fewer
        records than that. A checkpoint is derived data: one the disk refuses leaves the
        store as it was (False), and the next quiet moment or the close tries again.
        Read-only stores and open transactions save nothing."""
        self._check_open()
        cursor = self._committed_cursor()
        # Records behind the checkpoint are commits (or replays) after it, so the count
        # alone says whether the catalog moved since it was saved.
        if (cursor is None or not self.config.catalog_checkpoints
                or not quiet_checkpoint_is_due(self._records_since_checkpoint, self.config)):
            return False
        return self._save_derived_checkpoint(cursor)

    @property
    def unfinished_tail(self) -> LogTail | None:
        """The bytes after the last commit of the log: what a writer cut off on open
        (`recovered_tail`), or what a reader left out at its last replay (an interrupted
        write, or the open transaction of a live writer); None when there are none."""
        return self.recovered_tail if self._writer is not None else self._reader.tail

    def problems(self) -> list[StoreProblem]:
        """What is wrong with the store's files, as found on open and since (for
        `session-search verify` and `stats`): committed transactions missing from the
        log (which covers the checkpoint and the tail it leaves), a checkpoint that was
        damaged, disagreed with the log or whose positions had to be rebuilt, and, only
        worth knowing, an unfinished transaction at the end of the log."""
        if self.lost_commits is not None:
            return [self.lost_commits.problem]
        found = [] if self._checkpoint_problem is None else [self._checkpoint_problem]
        rebuilt = self.checkpoint_positions_rebuilt
        if rebuilt is not None:
            found.append(StoreProblem(self.directory.location(CHECKPOINT_NAME), rebuilt))
        tail = self.unfinished_tail
        if tail is not None:
            location = self._log_file_location(tail.file_number)
            span = f"bytes {tail.committed_end}..{tail.file_size}: {tail.reason}"
            found.append(StoreProblem(location, (
                f"{location}: {tail.cut_bytes} bytes of an unfinished transaction were cut "
                f"off at open ({span})" if self._writer is not None else
                f"{location}: {tail.cut_bytes} bytes after the last commit are an unfinished "
                f"transaction, left out ({span}); the next writer cuts them off"),
                serious=False))
        return found

    def _committed_cursor(self) -> LogCursor | None:
        """Where a writer's committed records end, between transactions (None inside one,
        when no log file is open and the last commit sealed none, or when that cursor
        does not end at the catalog's last commit).

        The last case: a commit that was fsynced and applied to the catalog but whose
        log file then failed to seal (its footer refused) leaves the writer failed and
        the last sealed cursor one commit behind. A checkpoint over that cursor would
        claim the newer commit at a position that does not hold it, and every later
        open would refuse the log as corrupt; with no cursor, no checkpoint is saved and
        the next open replays the log, which holds the commit."""
        writer = self._writer
        if writer is None or self._transaction is not None:
            return None
        cursor = writer.committed_cursor()
        if cursor is None and self._cursor.sealed:
            cursor = self._cursor  # the last commit sealed its log file
        if cursor is not None and cursor.transaction_id != self._catalog.generation:
            return None
        return cursor

    def _save_derived_checkpoint(self, cursor: LogCursor) -> bool:
        """`_save_checkpoint` where a refusal is not an error: the checkpoint is derived
        data, a refused one leaves the store as it was, and a later save tries again;
        whether it was saved."""
        try:
            self._save_checkpoint(cursor)
        except StoreError:
            return False
        return True

    def _save_checkpoint(self, cursor: LogCursor) -> None:
        """Write the catalog checkpoint for the state that ends at `cursor`."""
        self._saved_generation = save_checkpoint(self.directory, self._catalog, cursor,
                                                 self._sealed_files, self.config)
        self._records_since_checkpoint = 0

    def _log_file_location(self, file_number: int) -> str:
        return self.directory.location(log_file_name(file_number))

    # ----- writing -----------------------------------------------------------------------

    @property
    def is_writer(self) -> bool:
        """Whether this handle holds the writer lock."""
        return self._writer is not None

    @contextmanager
    def transaction(self) -> Iterator[StoreTransaction]:
        """An all-or-nothing write transaction (writer only; one at a time)."""
        self._check_open()
        writer = self._writer
        if writer is None:
            raise StoreError("this store was opened read-only; open it with writer=True")
        if self._transaction is not None:
            raise UsageError("a transaction is already open on this store")
        writer.begin()
        transaction = self._transaction = StoreTransaction(
            self._catalog, writer, self._reader.read_events,
            keep_changes=self._change_feed.is_followed)
        try:
            yield transaction
        except BaseException:
            transaction.closed = True
            self._transaction = None
            writer.abort()
            raise
        transaction.closed = True
        self._transaction = None
        if self._closed:  # close() inside the block already cut the records back
            raise StoreError(
                "the store was closed inside the transaction; nothing was committed")
        if not transaction.records:
            writer.abort()
            return
        if transaction.failed is not None:
            writer.abort()
            raise StoreError(f"nothing was committed: {transaction.failed}")
        self._commit(writer, transaction)

    def _commit(self, writer: LogWriter, transaction: StoreTransaction) -> None:
        generation = self._catalog.generation + 1
        try:
            writer.commit(CommitRecord(generation, now_milliseconds()))
        except BaseException:
            writer.abort()
            raise
        records = transaction.records
        self._catalog.apply(
            CommittedTransaction(records, CommitRecord(generation, 0.0), records[0][0]),
            self._log_file_location,
        )
        if writer.sealed is not None:
            self._cursor = writer.sealed
            self._sealed_files.append(sealed_log_file_of(writer.sealed))
        else:
            self._cursor = writer.committed_cursor() or self._cursor
        self._records_since_checkpoint += len(records) + 1
        cursor = writer.sealed or writer.committed_cursor()
        due = writer.sealed is not None or checkpoint_is_due(
            self._records_since_checkpoint, self.config)
        if cursor is not None and due and self.config.catalog_checkpoints:
            self._save_derived_checkpoint(cursor)  # the transaction is durable either way
        changes = transaction.changes
        if changes is None and self._change_feed.is_followed:  # a hook was added meanwhile
            changes = [change for _, change in self.changes_since(generation - 1)]
        self._change_feed.publish(generation, changes or [])

    def add_commit_hook(self, hook: CommitHook) -> None:
        """Call `hook(generation, changes)` after the fsync of each later transaction."""
        self._change_feed.add(hook)

    # ----- reading -----------------------------------------------------------------------

    @property
    def generation(self) -> int:
        """How many transactions are committed (and seen by this handle)."""
        return self._catalog.generation

    def windows(self) -> list[SessionWindow]:
        """Every committed window, in first-insertion order."""
        return [entry.window for entry in self._catalog.entries.values()]

    def window(self, session_id: str) -> SessionWindow:
        """One committed window (UnknownSession if absent)."""
        return self._catalog.entry(session_id).window

    def windows_of(self, session_key: str) -> list[SessionWindow]:
        """The committed windows of one session key, in the order they joined the key
        (first-insertion order unless a window was moved from another key)."""
        session_ids = self._catalog.keys.get(session_key, {})
        return [self._catalog.entries[session_id].window for session_id in session_ids]

    def session_keys(self) -> list[str]:
        """Every session key holding at least one window, in order of first appearance."""
        return list(self._catalog.keys)

    def events(self, session_id: str) -> list[StoredEvent]:
        """Every committed event of a window, in seq order (UnknownSession if absent)."""
        def read() -> list[StoredEvent]:
            positions = self._catalog.entry(session_id).events
            return self._reader.read_events(session_id, 0, positions.to_list())

        return self._compaction_safe(read)

    def event(self, session_id: str, seq: int) -> StoredEvent:
        """One committed event by seq (UnknownSession if the window or seq is absent)."""
        def read() -> StoredEvent:
            positions = self._catalog.entry(session_id).events
            if not 0 <= seq < len(positions):
                raise UnknownSession(f"window {session_id!r} has no event with seq {seq}")
            return self._reader.read_events(session_id, seq, [positions[seq]])[0]

        return self._compaction_safe(read)

    def event_count(self, session_id: str) -> int:
        """How many committed events a window has (UnknownSession if absent)."""
        return len(self._catalog.entry(session_id).events)

    def event_counts(self) -> dict[str, int]:
        """Every committed window's event count, by session id, in first-insertion order
        (one pass over the catalog: what `event_count` for each window costs in calls)."""
        return {session_id: entry.events.count
                for session_id, entry in self._catalog.entries.items()}

    def stats(self) -> dict[str, int]:
        """Counts of agents, sessions (keys), windows, events, and the store's bytes."""
        keys = self._catalog.keys
        agents = {agent for key in keys if (agent := agent_id_of(key)) is not None}
        names = [META_NAME, *self.directory.list_names(LOG_FOLDER + "/")]
        return {
            "agents": len(agents),
            "sessions": len(keys),
            "windows": len(self._catalog.entries),
            "events": self._catalog.event_total,
            "bytes": sum(self.directory.size(name) for name in names),
        }

    def changes_since(self, generation: int) -> Iterator[tuple[int, Change]]:
        """Every committed change after `generation`, with its transaction's generation.

        Reads the log once, from the start of transaction `generation + 1` to the last
        transaction this handle has seen: O(bytes of those transactions).
        """
        if not isinstance(generation, int) or generation < 0:
            raise UsageError(f"generation must be a non-negative integer, not {generation!r}")
        yield from changes_of(self._iter_committed_after(generation))

    def _iter_committed_after(self, generation: int) -> Iterator[CommittedTransaction]:
        """Re-read transactions `generation + 1` .. `self.generation` from the log."""
        last = self._catalog.generation
        if generation >= last:
            return
        if self._writer is None and self._log_moved():
            self._reload_same_generation()
        cursor = LogCursor(self._catalog.transaction_files[generation],
                           self._catalog.transaction_offsets[generation],
                           transaction_id=generation)
        try:
            for transaction in LogReader(self.directory).iter_transactions(
                    cursor, verify_footers=False):
                yield transaction
                if transaction.transaction_id >= last:
                    return
        except CorruptFile:
            if self._writer is None and self._log_moved():
                raise StoreError(
                    f"{self.directory.location(LOG_FOLDER)}: the transcript log was compacted "
                    "while its changes were read; refresh the store and read them again"
                ) from None
            raise

    def refresh(self) -> None:
        """Readers: apply transactions committed since opening or the last refresh (after
        a compaction of the log, reload the catalog from the start)."""
        self._check_open()
        if self._writer is not None:
            return
        for _attempt in range(COMPACTION_RETRIES):
            state = read_compaction_state(self.directory)
            try:
                if state != self._compaction_seen or self._compaction_seen.in_progress:
                    self._reload_all(state)
                else:
                    self._replay()
                return
            except CorruptFile:
                if not self._log_moved():
                    raise
        raise self._compaction_busy()

    # ----- compaction --------------------------------------------------------------------

    def compact(self) -> CompactionOutcome:
        """Writers, between transactions: rewrite the log files that hold dead records
        (the records of windows a later delete removed) without them, crash-safely, and
        reload the catalog (`engine.transcript.compaction` says how and why). Nothing
        committed changes: every transaction, window and event a read sees stays. A
        file the disk refuses stops it with a StoreError that leaves the store whole."""
        self._check_open()
        writer = self._writer
        if writer is None:
            raise StoreError("this store was opened read-only; open it with writer=True")
        if self._transaction is not None:
            raise UsageError("cannot compact the log inside a transaction")
        plan = plan_compaction(self.directory, self._catalog)
        if not plan.dead:
            return CompactionOutcome()
        begun = begun_state(read_compaction_state(self.directory))
        write_compaction_state(self.directory, begun)
        self._compaction_seen = begun
        reclaimed = 0
        try:
            if plan.last_file in plan.dead and not self._cursor.sealed:
                writer.roll()
            for number in sorted(plan.dead, reverse=True):  # the last first: see the module
                reclaimed += rewrite_log_file(self.directory, number, plan.dead[number])
        except StoreError as error:
            self._reload_writer_catalog()
            raise StoreError(
                f"the compaction stopped: {error}; the store is whole (every committed "
                "transaction is kept, the next open replays the log): free space and run "
                "the compaction again") from None
        self._reload_writer_catalog()
        finished = finished_state(begun, reclaimed)
        try:
            self.rewrite_checkpoint()
            write_compaction_state(self.directory, finished)
        except StoreError as error:
            raise StoreError(
                f"the compaction rewrote {len(plan.dead)} log files but could not finish: "
                f"{error}; the store is whole (the next open replays the log, and the next "
                "writer saves the checkpoint)") from None
        self._compaction_seen = finished
        return CompactionOutcome(len(plan.dead), reclaimed, plan.record_count)

    def _finish_interrupted_compaction(self) -> None:
        """A writer that opened after an interrupted compaction: save a checkpoint of the
        log as it is and clear the flag (derived data: a refusal waits for the next)."""
        state = self._compaction_seen
        done = CompactionState(max(state.compactions, 1), False, state.reclaimed_bytes)
        try:
            self.rewrite_checkpoint()
            write_compaction_state(self.directory, done)
        except StoreError:
            return
        self._compaction_seen = done

    def _log_moved(self) -> bool:
        """Whether a compaction may have moved records since the catalog was loaded."""
        return (self._compaction_seen.in_progress
                or read_compaction_state(self.directory) != self._compaction_seen)

    def _compaction_busy(self) -> StoreError:
        return StoreError(f"{self.directory.location(LOG_FOLDER)}: the transcript log is being "
                          "compacted; try again when the compaction has finished")

    def _compaction_safe(self, read: Callable[[], Value]) -> Value:
        """Run a read of events; a reader whose positions a compaction moved reloads its
        catalog at its generation and reads again (never `CorruptFile` for that)."""
        for _attempt in range(COMPACTION_RETRIES):
            try:
                return read()
            except CorruptFile:
                if self._writer is not None or not self._log_moved():
                    raise
                self._reload_same_generation()
        raise self._compaction_busy()

    def _install(self, catalog: Catalog, reader: LogReader) -> None:
        """Use `catalog`, replayed by `reader`, from now on."""
        if self._positions_reader is not None:
            self._positions_reader.close()
            self._positions_reader = None
        self._catalog = catalog
        self._reader = reader
        self._cursor = reader.cursor
        self._sealed_files = list(reader.sealed_files)

    def _reload_writer_catalog(self) -> None:
        """Replay the whole (rewritten) log into a new catalog."""
        reader = LogReader(self.directory)
        catalog = Catalog()
        for transaction in reader.iter_transactions():
            catalog.apply(transaction, self._log_file_location)
        self._install(catalog, reader)

    def _reload_same_generation(self) -> None:
        """Readers: replay the log up to this handle's generation and use it, when it
        gives the same state (StoreError when windows of this view were compacted away)."""
        state = read_compaction_state(self.directory)
        target = self.generation
        reader = LogReader(self.directory)
        catalog = Catalog()
        for transaction in reader.iter_transactions():
            if transaction.transaction_id > target:
                break  # the reader's cursor is at the end of transaction `target`
            catalog.apply(transaction, self._log_file_location)
        if catalog.generation != target or catalog_state(catalog) != catalog_state(
                self._catalog):
            raise StoreError(
                f"{self.directory.location(LOG_FOLDER)}: the transcript log was compacted "
                f"after this reader read it (generation {target}), and windows it shows "
                "were deleted since: refresh or reopen the store")
        self._install(catalog, reader)
        self._compaction_seen = state

    def _reload_all(self, state: CompactionState) -> None:
        """Readers: load the catalog again as an open does (checkpoint, then replay)."""
        saved = (self._catalog, self._reader, self._cursor, self._sealed_files,
                 self._positions_reader, self._compaction_seen, self.checkpoint_generation,
                 self.checkpoint_ignored, self._checkpoint_problem, self._claims)
        self._catalog, self._reader, self._cursor, self._sealed_files = (
            Catalog(), LogReader(self.directory), LogCursor(), [])
        self._positions_reader, self._compaction_seen, self._claims = None, state, []
        self.checkpoint_generation = self.checkpoint_ignored = self._checkpoint_problem = None
        try:
            self._load_checkpoint()
            self._replay()
        except BaseException:
            if self._positions_reader is not None:
                self._positions_reader.close()
            (self._catalog, self._reader, self._cursor, self._sealed_files,
             self._positions_reader, self._compaction_seen, self.checkpoint_generation,
             self.checkpoint_ignored, self._checkpoint_problem, self._claims) = saved
            raise
        if saved[4] is not None:
            saved[4].close()

    def close(self) -> None:
        """Close files and release the writer lock (idempotent).

        A writer closed outside a transaction first saves a catalog checkpoint of
        everything committed (when anything changed since the last one, or the positions
        of the one it opened were found damaged), so the next open decodes no records.
        The commit hooks are dropped: a hook is usually a bound method of an owner that
        holds this store, so dropping them breaks that reference cycle and a closed
        store is freed by reference counting alone, without waiting for a collection.
        """
        if self._closed:
            return
        self._closed = True
        self._change_feed.clear()
        try:
            writer = self._writer
            if writer is not None:
                cursor = self._committed_cursor()
                writer.close()
                if (cursor is not None and self.config.catalog_checkpoints
                        and (self._catalog.generation > self._saved_generation
                             or self.checkpoint_positions_rebuilt is not None)):
                    self._save_checkpoint(cursor)
        finally:
            if self._positions_reader is not None:
                self._positions_reader.close()
            if self._lock is not None:
                self._lock.release()
                self._lock = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()

    # ----- internals ---------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")
