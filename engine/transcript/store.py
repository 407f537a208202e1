"""The transcript store: session windows and their events, durable in a `Directory`.

Owns: the public `TranscriptStore` API, assembled from the parts of the store, and its
opening: create / open (reading and writing the store metadata file `store.meta`, the
writer lock, the order of the steps below) and close. Must not touch: byte layouts
(`engine.codec`), the log files (`log_reader` and `log_writer` read and write them),
search indexes, or event semantics (the store keeps each event as an opaque JSON object;
`engine.transcript.events` and friends interpret them). The parts of the store, each a
class that builds on the ones before it: the fields of a handle and the store's files
(`store_handle`), the catalog loaded from its checkpoint and the log and saved back
(`store_checkpoint`), compaction and how reads follow it (`store_compaction`), reads
and a reader's refresh (`store_reads`), then, side by side, what was committed and what
is wrong (`store_recovery`: lost commits, the torn tail, verify) and write transactions
and their commit (`store_writes`). The concepts they use live in their own modules: the
catalog in memory (`catalog`), its checkpoint on disk (`checkpoint`), the evidence of
what was committed (`evidence`), write transactions (`transaction`) and the commit hooks
(`changes`).

Opening replays the log after the catalog checkpoint when one can be trusted, and the
whole log otherwise (`store_checkpoint`). It then compares what the log holds with what
was committed, and refuses a log that lost committed transactions unless
`accept_lost_commits` (`store_recovery`). Only then does a writer cut a torn or
uncommitted tail off the last log file (`LogWriter.recover`), save a checkpoint of what
remains when commits were lost, and finish a compaction that was interrupted
(`store_compaction`). Readers (`writer=False`) take no lock and never truncate.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Self

from engine.codec.meta_file import StoreMeta, decode_meta_file, encode_meta_file
from engine.config import EngineConfig
from engine.directory import Directory, FileDirectory
from engine.errors import StoreError, UsageError
from engine.transcript.compaction import read_compaction_state
from engine.transcript.evidence import CommittedClaim
from engine.transcript.log_files import LOG_FOLDER
from engine.transcript.store_handle import LOCK_NAME, META_NAME
from engine.transcript.store_recovery import StoreRecovery
from engine.transcript.store_writes import StoreWrites

if TYPE_CHECKING:
    from engine.transcript.log_writer import LogWriter


class TranscriptStore(StoreWrites, StoreRecovery):
    """Session windows and events in a directory; one writer, any number of readers."""

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
            from engine.transcript.clock import now_milliseconds  # a new store's only

            meta = StoreMeta(backend, now_milliseconds())
            directory.write_atomic(META_NAME, encode_meta_file(meta))
            store = cls(directory, meta, config or EngineConfig(), lock)
            store._writer = _log_writer(directory, store.config)
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
                store._writer = _log_writer(directory, store.config)
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


def _log_writer(directory: Directory, config: EngineConfig) -> LogWriter:
    """The writer's `LogWriter` (its module loads when a writer opens, not when a reader
    does: a search only reads)."""
    from engine.transcript.log_writer import LogWriter

    return LogWriter(directory, config)
