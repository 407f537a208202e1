"""A handle on a transcript store: the store's own files and what an open handle holds.

Owns: the names of the store's own files (`store.meta`, `LOCK`) and `StoreHandle`, the
fields of an open `TranscriptStore` (its catalog, the cursor and sealed log files it has
seen, its writer and open transaction, what opening found) with the checks every part of
the store makes on them. Must not touch: byte layouts (`engine.codec`), the log files
(`log_reader` and `log_writer` read and write them), search indexes, or event semantics
(the store keeps each event as an opaque JSON object; `engine.transcript.events` and
friends interpret them). Why apart: every part of the store works on these fields
(`store_checkpoint`, `store_compaction`, `store_reads`, `store_recovery`,
`store_writes`, and `store`, which assembles them); declared once, at the bottom, they
let each part build on the parts below it and import none above it.

Files of a store (a `Directory`):

    store.meta                       backend name and creation time (framed, versioned)
    LOCK                             the single writer's lock; holds its pid
    transcripts/segment-NNNNNN.log   the transcript log: append-only transactions
                                     (`log_files`)
    transcripts/catalog.ckpt         catalog checkpoint (derived; optional; `checkpoint`)
    transcripts/compaction.state     compactions begun, one running (`compaction`;
                                     absent until the first compaction)

State. The store is the replay of its committed transactions, in order (the rule is
`Catalog.apply`); event objects are decoded from the log on demand, by the positions the
catalog holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.codec.compaction_file import CompactionState
from engine.codec.meta_file import StoreMeta
from engine.config import EngineConfig
from engine.directory import Directory, LockHandle
from engine.errors import StoreError
from engine.transcript.catalog import Catalog
from engine.transcript.changes import ChangeFeed
from engine.transcript.checkpoint import CheckpointPositionsReader
from engine.transcript.evidence import CommittedClaim
from engine.transcript.log_files import log_file_name
from engine.transcript.log_positions import LogCursor, SealedLogFile
from engine.transcript.log_reader import LogReader

if TYPE_CHECKING:  # a writer's parts: a reader never makes them (start-up cost)
    from engine.transcript.log_tail import LogTail
    from engine.transcript.log_writer import LogWriter
    from engine.transcript.lost_commits import LostCommits
    from engine.transcript.store_problem import StoreProblem
    from engine.transcript.transaction import StoreTransaction

META_NAME = "store.meta"
LOCK_NAME = "LOCK"


class StoreHandle:
    """What an open store holds, and the checks on it; `TranscriptStore` builds on it."""

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

    @property
    def generation(self) -> int:
        """How many transactions are committed (and seen by this handle)."""
        return self._catalog.generation

    @property
    def is_writer(self) -> bool:
        """Whether this handle holds the writer lock."""
        return self._writer is not None

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")

    def _log_file_location(self, file_number: int) -> str:
        return self.directory.location(log_file_name(file_number))

    def newest_log_location(self) -> str:
        """Where the log file holding the newest commit read is."""
        return self._log_file_location(self._cursor.file_number)
