"""The catalog checkpoint: the catalog saved beside the log, so that opening decodes no
records.

Owns: the file `transcripts/catalog.ckpt` (its bytes are `engine.codec.catalog_file`),
when a writer saves it (`checkpoint_is_due`, `quiet_checkpoint_is_due`), turning a
catalog into a checkpoint and back (lazily: the windows as `WindowColumns`, the entries
built by `Catalog.loaded` when first read), deciding at open whether one can be trusted
(`load_checkpoint`), and reading the event positions it holds the first time one is
needed (`CheckpointPositionsReader`).
Must not touch: the log files beyond the cheap checks of `engine.transcript.log_checks`, the
store's lock or writer, or the live catalog of a store (loading builds a new one).

Why. Without a checkpoint, opening replays every log file, decoding every record once:
O(total bytes), which takes seconds for a large store. After each commit that
seals a log file or brings the records committed since the last checkpoint to
`EngineConfig.checkpoint_after_records`, when a reconcile ends once
`EngineConfig.checkpoint_idle_records` records were committed or replayed since the last
one (`TranscriptStore.save_checkpoint_when_quiet`), and when a writer is closed cleanly,
the writer saves the whole catalog (windows, position arrays, transaction start
positions, the log position it covers with the offset of the last commit record, and the
size, record count and footer CRC of every sealed log file) with an atomic write. Opening
reads the checkpoint's head and index (windows, keys, transactions), not the event
positions (most of its bytes), which a search never needs: the catalog's
windows share them by range (`SharedPositions`), and they are read once, the first time
any event position is needed (reading events, appending to a window that had events,
saving the next checkpoint), through the file handle the open used, so a checkpoint a
writer saved over it since does not matter.

What is checked, and when:

* At open, O(log files + windows), never O(bytes): the checkpoint's own CRCs, and
  `log_checks.check_checkpoint_log`: each covered sealed log file must have the size, footer
  record count and footer CRC the checkpoint recorded (header and footer are read, the
  records between are not); the unsealed log file must have an intact header, reach the
  covered offset, and end it with an intact commit record of the checkpoint's
  transaction. A checkpoint that fails is ignored (`checkpoint_ignored` says why) and the
  full replay runs, which names any damaged record; so does one of another version (it is
  derived data; the next writer close saves a current one). Its claim is kept all the
  same (`OpenedCheckpoint.claim`): it was saved after the commits it covers were fsynced,
  so a log that the replay finds shorter lost committed transactions, and the store
  refuses to open it (`engine.transcript.evidence`). What follows the covered
  offset is replayed and decoded as without a checkpoint. Even for a large store this
  open reads only a small part of the checkpoint and takes little time and memory; the
  positions cost their time and memory only when first needed.
* When the positions are first needed: their CRC32 and the footer's record count
  (`read_catalog_positions`). If they are damaged, or the file can no longer be read,
  nothing is misread and no data is lost: they are rebuilt by replaying the log up to
  the checkpoint's transaction (O(bytes), as an open without checkpoint), and
  `checkpoint_positions_rebuilt` says why; a writer's close then saves a sound
  checkpoint. Only if the log contradicts the checkpoint's windows is that `CorruptFile`
  naming the checkpoint (`CheckpointPositionsReader`).
* On read: every event read checks the record's own frame CRC and that it is the event
  the catalog expects (`LogReader.read_events`); `changes_since` decodes, and so checks,
  every record it re-reads. Damage inside covered bytes is therefore `CorruptFile` naming
  the log file and the record's offset when that record is read, not at open. Window,
  delete and commit records under a checkpoint are read again only by `changes_since`
  (the catalog has their effect) and by verify. Not checked at open either: the running
  record count and CRC the checkpoint saved for the unsealed log file (they would need
  every byte); a writer continues from them, so if covered bytes were damaged, the footer
  it later writes disagrees with them and a replay refuses that file, as it should.
* `TranscriptStore.verify_log()` (run by `session-search verify`) is the thorough check:
  `log_checks.check_covered_log` CRCs every committed byte against the footers and the running
  CRC of the open log file, O(bytes); on a mismatch it names the first damaged record
  (`log_checks.find_damaged_record`). Opening without checkpoints
  (`EngineConfig(catalog_checkpoints=False)`) is the other oracle: it refuses damage at
  open, as before checkpoints existed.

`LoadedCheckpoint` is a NamedTuple, not a frozen dataclass: a search's start-up imports
this module, and a NamedTuple's class costs a fraction of a frozen dataclass's to make.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from functools import partial
from itertools import chain
from operator import attrgetter
from typing import Any, NamedTuple, overload

from engine.codec.catalog_file import (
    WINDOW_FIELD_NAMES,
    CatalogCheckpoint,
    PositionsRegion,
    WindowRecords,
    built_windows,
    read_catalog_file,
    read_catalog_positions,
)
from engine.codec.framing import DecodeError
from engine.config import EngineConfig
from engine.directory import Directory, ReadHandle
from engine.errors import CorruptFile, StoreError
from engine.model import SessionWindow
from engine.transcript.catalog import (
    Catalog,
    EventPositions,
    ScopeRow,
    SharedPositions,
    WindowEntry,
    scope_rows_of,
)
from engine.transcript.evidence import CommittedClaim
from engine.transcript.log_checks import check_checkpoint_log
from engine.transcript.log_files import LOG_FOLDER, log_file_name
from engine.transcript.log_positions import LogCursor, SealedLogFile
from engine.transcript.log_reader import LogReader

CHECKPOINT_NAME = f"{LOG_FOLDER}/catalog.ckpt"


def checkpoint_is_due(records_since_checkpoint: int, config: EngineConfig) -> bool:
    """Whether a commit that sealed no log file still saves the checkpoint, given the
    records (commits included) committed since the last one was saved.

    >>> config = EngineConfig()
    >>> checkpoint_is_due(config.checkpoint_after_records, config), checkpoint_is_due(1, config)
    (True, False)
    """
    return records_since_checkpoint >= config.checkpoint_after_records


def quiet_checkpoint_is_due(records_since_checkpoint: int, config: EngineConfig) -> bool:
    """Whether a writer that goes quiet (a reconcile ended) saves the checkpoint, given
    the records (commits included) committed or replayed since the last one was saved.

    >>> config = EngineConfig()
    >>> quiet_checkpoint_is_due(config.checkpoint_idle_records, config)
    True
    >>> quiet_checkpoint_is_due(config.checkpoint_idle_records - 1, config)
    False
    """
    return records_since_checkpoint >= config.checkpoint_idle_records


def checkpoint_of(
    catalog: Catalog, cursor: LogCursor, sealed_files: Sequence[SealedLogFile], *,
    whole_positions: bool = True,
) -> CatalogCheckpoint:
    """The whole catalog, whose last commit ends at `cursor`, with the sealed log files
    before it (and `cursor.file_number` when `cursor.sealed`). Its event positions are
    three arrays the windows' positions are expanded into (`EventPositions.extend_into`),
    or with `whole_positions=False` three
    `PositionsColumn`s over them, which give a slice at a time (what a save reads: the
    catalog must not change until it is written)."""
    counts = array("i", [len(entry.events) for entry in catalog.entries.values()])
    if whole_positions:
        file_numbers, offsets, lengths = array("i"), array("q"), array("i")
        for entry in catalog.entries.values():
            entry.events.extend_into(file_numbers, offsets, lengths)
    else:
        from engine.transcript.positions_column import PositionsColumn  # saves only

        windows_positions = [entry.events for entry in catalog.entries.values()]
        file_numbers, offsets, lengths = (  # type: ignore[assignment]
            PositionsColumn.of(windows_positions, name)
            for name in ("file_numbers", "offsets", "lengths"))
    windows = tuple(entry.window for entry in catalog.entries.values())
    keys = tuple((key, tuple(session_ids)) for key, session_ids in catalog.keys.items())
    sealed = tuple((item.size, item.record_count, item.records_crc) for item in sealed_files)
    return CatalogCheckpoint(cursor.file_number, cursor.offset, cursor.record_count,
                             cursor.records_crc, cursor.sealed, catalog.generation,
                             cursor.commit_offset, sealed, windows, counts, file_numbers,
                             offsets, lengths, keys, catalog.transaction_files,
                             catalog.transaction_offsets)


#: A window's session id (`map` over the windows at C level).
_SESSION_ID_OF = attrgetter("session_id")


def event_total(checkpoint: CatalogCheckpoint) -> int:
    """How many events the checkpoint's windows hold: what its head says when it was
    read without its positions (`read_catalog_file` checked that the windows' counts
    add up to it), else their sum."""
    region = checkpoint.positions_region
    return sum(checkpoint.event_counts) if region is None else int(region.event_count)


class WindowColumns(Sequence[SessionWindow]):
    """A checkpoint's windows kept as its `windows` records' columns (the `windows_of`
    with which `open_checkpoint` reads a checkpoint), built into `SessionWindow`s
    (`built_windows`) the first time one is read; `column` and `scope_rows` read the
    columns themselves, so a search builds no window. Compares and prints as the tuple
    of its windows (`built_windows(records)`, the clear version and its oracle).

    >>> records = [[["a", "b"], ["k", "j"], *[[None, None]] * 12, [{}, {}]]]
    >>> records[0][WINDOW_FIELD_NAMES.index("archived")] = [False, True]
    >>> windows = WindowColumns(records)
    >>> len(windows), windows.column("session_key"), windows.scope_rows()
    (2, ['k', 'j'], [('a', 'k', False), ('b', 'j', True)])
    >>> windows == built_windows(records), windows[1].session_id, windows.column("session_id")
    (True, 'b', ['a', 'b'])
    """

    __slots__ = ("_built", "_length", "_location", "_records")

    def __init__(self, records: WindowRecords, location: str = CHECKPOINT_NAME) -> None:
        self._records: WindowRecords | None = records
        self._length = sum(len(columns[0]) for columns in records)
        self._built: tuple[SessionWindow, ...] | None = None
        self._location = location

    def built(self) -> tuple[SessionWindow, ...]:
        """The windows, built on the first call (the columns are let go then)."""
        if self._built is None:
            assert self._records is not None
            try:
                self._built = built_windows(self._records)
            except DecodeError as error:
                raise self._undecodable(error) from None
            self._records = None
        return self._built

    def column(self, name: str) -> list[Any]:
        """Field `name` of every window, in order."""
        if self._records is None:
            return list(map(attrgetter(name), self.built()))
        index = WINDOW_FIELD_NAMES.index(name)
        try:
            return list(chain.from_iterable(columns[index] for columns in self._records))
        except DecodeError as error:
            raise self._undecodable(error) from None

    def _undecodable(self, error: DecodeError) -> StoreError:
        """What a column left unread at open (`engine.codec.catalog_index`) that does not
        decode raises: its record's CRC held, so only a faulty writer made it. A writer
        and `verify` decode every column at open (`open_checkpoint`'s `every_column`),
        where such a checkpoint is ignored and reported as a damaged one."""
        return StoreError(f"{self._location}: a window column of the catalog checkpoint does "
                          f"not decode ({error}); `session-search verify` reports it, and "
                          "the next writer replays the log and saves a new checkpoint")

    def scope_rows(self) -> list[ScopeRow]:
        """`scope_rows_of(self)`, from the columns while the windows are not built."""
        if self._records is None:
            return scope_rows_of(self.built())
        return list(zip(*map(self.column, ("session_id", "session_key", "archived"))))

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> SessionWindow: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[SessionWindow, ...]: ...
    def __getitem__(self, index: int | slice) -> SessionWindow | tuple[SessionWindow, ...]:
        return self.built()[index]

    def __iter__(self) -> Iterator[SessionWindow]:
        return iter(self.built())

    def __eq__(self, other: object) -> bool:
        return self.built() == (other.built() if isinstance(other, WindowColumns) else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.built())


def catalog_of(checkpoint: CatalogCheckpoint, shared: SharedPositions) -> Catalog:
    """The catalog a checkpoint saved, whose positions are `shared` (every window's
    positions are a range of them: no per-event work, and nothing read from them); its
    entries and keys are built on first use (`Catalog.loaded`: a search reads neither),
    and so are its windows when they are `WindowColumns` (a search reads their
    `scope_rows`)."""
    windows = checkpoint.windows
    if isinstance(windows, WindowColumns):
        session_ids, scope_rows = windows.column("session_id"), windows.scope_rows
    else:
        session_ids, scope_rows = list(map(_SESSION_ID_OF, windows)), None
    indexes = dict(zip(session_ids, range(len(session_ids))))
    if len(indexes) != len(session_ids):
        raise StoreError("the checkpoint lists a window twice")
    catalog = Catalog.loaded(windows, indexes, checkpoint.event_counts, shared,
                             checkpoint.keys, scope_rows)
    catalog.event_total = event_total(checkpoint)
    catalog.generation = checkpoint.transaction_id
    catalog.transaction_files = checkpoint.transaction_segments
    catalog.transaction_offsets = checkpoint.transaction_offsets
    return catalog


def built_catalog_of(checkpoint: CatalogCheckpoint, shared: SharedPositions) -> Catalog:
    """`catalog_of` with its entries and keys built at once (the clear version, and the
    oracle of `catalog_of`, which builds them on first use)."""
    catalog = Catalog()
    windows = checkpoint.windows
    catalog.entries = entries = dict(zip(
        [window.session_id for window in windows],
        map(WindowEntry, windows, EventPositions.ranges(shared, checkpoint.event_counts)),
    ))
    if len(entries) != len(windows):
        raise StoreError("the checkpoint lists a window twice")
    catalog.event_total = sum(checkpoint.event_counts)
    catalog.keys = {key: dict.fromkeys(session_ids) for key, session_ids in checkpoint.keys}
    catalog.generation = checkpoint.transaction_id
    catalog.transaction_files = checkpoint.transaction_segments
    catalog.transaction_offsets = checkpoint.transaction_offsets
    return catalog


def save_checkpoint(
    directory: Directory, catalog: Catalog, cursor: LogCursor,
    sealed_files: Sequence[SealedLogFile], config: EngineConfig,
) -> int:
    """Write the checkpoint of `catalog`, whose last commit ends at `cursor`; return the
    generation it holds (StoreError naming the file if writing fails).

    The file is written a record at a time (`catalog_file_pieces`, whose pieces join to
    `encode_catalog_file`'s bytes) into the temporary that `open_atomic` renames over the
    old checkpoint at its commit: a save that fails or is interrupted half-way leaves the
    old checkpoint in place, and the whole file is never held at once; nor are the
    catalog's event positions copied (`PositionsColumn`: one record's slice at a time)."""
    from engine.codec.catalog_file_pieces import catalog_file_pieces  # writers only

    checkpoint = checkpoint_of(catalog, cursor, sealed_files, whole_positions=False)
    pieces = catalog_file_pieces(
        checkpoint, windows_per_record=config.checkpoint_windows_per_record)
    with directory.open_atomic(CHECKPOINT_NAME) as writer:  # left uncommitted: removed
        for piece in pieces:
            writer.write(piece)
        writer.commit()
    return checkpoint.transaction_id


class LoadedCheckpoint(NamedTuple):
    """What a trusted checkpoint gives an opening store: the catalog it saved, where the
    log it covers ends, the sealed log files before, and the reader of its event
    positions, which reads them on first need."""

    catalog: Catalog
    cursor: LogCursor
    sealed_files: tuple[SealedLogFile, ...]
    positions_reader: CheckpointPositionsReader

    @property
    def transaction_id(self) -> int:
        """The generation the checkpoint covers."""
        return self.catalog.generation


def load_checkpoint(directory: Directory, config: EngineConfig) -> LoadedCheckpoint | None:
    """Start from the catalog checkpoint when the log still matches it; None when there
    is none.

    Trusting it skips reading the records it covers. What is checked is cheap,
    O(log files) (`check_checkpoint_log`): each sealed log file's size and footer, and
    the header, length and last commit record of the unsealed one. Damage inside covered
    records is found when they are read, and by verify. A damaged, stale or mismatched
    checkpoint raises StoreError saying why: the caller ignores it, and the full replay
    that follows names any damaged record (it is derived data). The event positions of
    the checkpoint are not read here: the handle stays open for the
    `CheckpointPositionsReader`, which reads them on first need. (The store opens in the
    two steps, `open_checkpoint` then `trust_checkpoint`, to keep the claim of a
    checkpoint it does not trust.)
    """
    opened = open_checkpoint(directory, config)
    if opened is None:
        return None
    problem = opened.disagreement(directory)
    if problem is not None:
        opened.close()
        raise StoreError(problem)
    return trust_checkpoint(directory, opened)


class OpenedCheckpoint:
    """A checkpoint whose head and index were read (not its positions), and the handle
    they were read through (closed by `close`, or handed on by `trust_checkpoint`). A
    plain class, not a dataclass: a search's start-up makes this class, and a
    dataclass's costs more to make (nothing compares or copies these)."""

    __slots__ = ("checkpoint", "handle", "location")

    def __init__(self, checkpoint: CatalogCheckpoint, handle: ReadHandle | None,
                 location: str) -> None:
        self.checkpoint = checkpoint
        self.handle = handle
        self.location = location

    @property
    def cursor(self) -> LogCursor:
        """Where the log it covers ends."""
        checkpoint = self.checkpoint
        return LogCursor(checkpoint.segment, checkpoint.offset, checkpoint.record_count,
                         checkpoint.records_crc, checkpoint.sealed, checkpoint.transaction_id,
                         checkpoint.commit_offset)

    @property
    def sealed_files(self) -> tuple[SealedLogFile, ...]:
        """The sealed log files it lists, from log file 1."""
        return tuple(SealedLogFile(*item) for item in self.checkpoint.sealed_segments)

    def claim(self) -> CommittedClaim:
        """What it says was committed: a checkpoint is saved only after the commits it
        covers were fsynced, so this holds even when it no longer matches the log."""
        checkpoint = self.checkpoint
        return CommittedClaim(self.location, checkpoint.transaction_id, checkpoint.segment,
                              checkpoint.offset, event_total(checkpoint))

    def disagreement(self, directory: Directory) -> str | None:
        """Why the log files are not the ones it covers (`check_checkpoint_log`), or None."""
        try:
            return check_checkpoint_log(directory, self.cursor, self.sealed_files)
        except StoreError as error:  # a log file it lists is gone, or unreadable
            return str(error)

    def close(self) -> None:
        """Release the file."""
        if self.handle is not None:
            self.handle.close()
            self.handle = None


def open_checkpoint(directory: Directory, config: EngineConfig, *,
                    every_column: bool = False) -> OpenedCheckpoint | None:
    """Read the checkpoint's head and index; None when there is none. StoreError when it
    cannot be read (CorruptFile when damaged, UnsupportedVersion for another version).
    Its windows are `WindowColumns`, built when first read; with `every_column` they are
    built now (a writer's and `verify`'s open), so that a column that does not decode
    makes the checkpoint a damaged one, not an error when a window is first read."""
    if not directory.exists(CHECKPOINT_NAME):
        return None
    location = directory.location(CHECKPOINT_NAME)
    handle = directory.open_read(CHECKPOINT_NAME)
    try:
        checkpoint = read_catalog_file(handle.read, handle.size(), location,
                                       probe_length=config.checkpoint_probe_bytes,
                                       windows_of=built_windows if every_column
                                       else partial(WindowColumns, location=location))
    except BaseException:
        handle.close()
        raise
    return OpenedCheckpoint(checkpoint, handle, location)


def trust_checkpoint(directory: Directory, opened: OpenedCheckpoint) -> LoadedCheckpoint:
    """The store state of a checkpoint the log matches (`OpenedCheckpoint.disagreement`
    said None); its handle goes to the positions reader (StoreError, the handle closed,
    when the checkpoint contradicts itself)."""
    checkpoint = opened.checkpoint
    positions_reader: CheckpointPositionsReader | None = None
    try:
        region = checkpoint.positions_region
        assert region is not None and opened.handle is not None  # read_catalog_file says where
        positions_reader = CheckpointPositionsReader(directory, opened.handle, region,
                                                     checkpoint)
        opened.handle = None  # the reader keeps it open until it has read them
        shared = SharedPositions(load=positions_reader)
        return LoadedCheckpoint(catalog_of(checkpoint, shared), opened.cursor,
                                opened.sealed_files, positions_reader)
    except StoreError:
        if positions_reader is not None:
            positions_reader.close()
        opened.close()
        raise


class CheckpointPositionsReader:
    """Reads the event positions of a checkpoint the first time one is needed
    (the `load` of the catalog's `SharedPositions`).

    It reads through the handle the store opened the checkpoint with, so a checkpoint
    that a writer saved over it since is no concern: the bytes read are those of the
    file whose head and index were read. If they are damaged all the same (changed in
    place, or unreadable: the CRC32 the head states does not match, or the handle is
    gone and the file by that name is another one), nothing is misread: the positions
    are rebuilt by replaying the log up to the checkpoint's transaction, exactly as an
    open without the checkpoint would find them (the checkpoint is derived data; this
    costs a replay, O(bytes of the log)), and `problem` says why. Only when the log
    disagrees with the checkpoint's windows does it raise CorruptFile.
    It holds no reference to the store (so no cycle keeps a dropped store alive).
    """

    def __init__(self, directory: Directory, handle: ReadHandle, region: PositionsRegion,
                 checkpoint: CatalogCheckpoint) -> None:
        """Read `region` of the checkpoint open at `handle` when first called."""
        self.directory = directory
        self.handle: ReadHandle | None = handle
        self.region = region
        self.location = directory.location(CHECKPOINT_NAME)
        self.windows = checkpoint.windows
        self.event_counts = checkpoint.event_counts
        self.transaction_id = checkpoint.transaction_id
        #: Why the positions were rebuilt by replay (None: read intact, not read yet, or
        #: the replay failed too).
        self.problem: str | None = None
        #: What the replay raised, raised again on later calls instead of another replay.
        self.failure: StoreError | None = None

    def __call__(self) -> tuple[array, array, array]:
        """The positions, read and CRC-checked, or rebuilt by replay."""
        if self.failure is not None:
            raise self.failure
        try:
            handle = self.handle or self.directory.open_read(CHECKPOINT_NAME)
            self.handle = handle
            return read_catalog_positions(handle.read, self.region, self.location)
        except StoreError as error:  # CorruptFile included
            problem = f"{error} (the event positions were rebuilt from the segments)"
        finally:
            self.close()
        try:
            arrays = self.replay()
        except StoreError as error:  # the log is damaged or contradicts the index
            self.failure = error
            raise
        self.problem = problem
        return arrays

    def close(self) -> None:
        """Release the checkpoint file (a later read opens it again by name)."""
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    def replay(self) -> tuple[array, array, array]:
        """The checkpoint's positions, rebuilt from the log: replay transactions 1 ..
        `transaction_id` and take each window's positions in the checkpoint's order."""
        catalog = Catalog()
        directory = self.directory
        if self.transaction_id:
            for transaction in LogReader(directory).iter_transactions():
                catalog.apply(transaction,
                              lambda number: directory.location(log_file_name(number)))
                if catalog.generation >= self.transaction_id:
                    break
        if catalog.generation != self.transaction_id or \
                len(catalog.entries) != len(self.windows):
            raise CorruptFile(self.location, self.region.offset, (
                f"the segments hold {catalog.generation} transactions and "
                f"{len(catalog.entries)} windows, the checkpoint {self.transaction_id} and "
                f"{len(self.windows)}"))
        arrays = (array("i"), array("q"), array("i"))
        for window, count in zip(self.windows, self.event_counts, strict=True):
            entry = catalog.entries.get(window.session_id)
            if entry is None or len(entry.events) != count:
                found = "no window" if entry is None else f"{len(entry.events)} events"
                raise CorruptFile(self.location, self.region.offset, (
                    f"window {window.session_id!r} has {count} events in the checkpoint, "
                    f"{found} in the segments"))
            entry.events.extend_into(*arrays)
        return arrays
