"""Compaction of the transcript log: reclaiming the records that later records made dead.

Owns: the rules and steps of a compaction (this docstring), the compaction state file
`transcripts/compaction.state` (its bytes are `engine.codec.compaction_file`), what a
compaction reports (`CompactionOutcome`, in `engine.transcript.compaction_outcome`,
which a read never loads; the name is still offered here) and the state a replay must give again
(`catalog_state`, which a reader also checks when it reloads). The rule that says which
committed records are dead (`superseded_records`, the one place to extend), the plan
(`plan_compaction`) and the rewrite of one sealed log file (`rewrite_log_file`) are
`engine.transcript.compaction_plan`'s, which only `compact` imports. Must not touch: the
store's catalog, lock or writer (`TranscriptStore.compact` runs the steps below with
them and reloads its catalog), record bytes (frames are copied as they are) or any
index.

Dead records. A record is dead when a later committed record supersedes it:

* every window, event and `replace` record of a window that a later `delete_session`
  record removed (the windows of the key at that point of the replay,
  `Catalog.delete_session`); a window re-created under a deleted window's session id
  starts a new life: its records come after the delete and stay;
* every event record of a window before a later `replace` record of it (its events
  from then on are the ones that follow the replace), and the window's earlier
  `replace` records with them (a replace is followed by its new events in the same
  transaction, so it goes with them: a replace kept without its events would not
  replay).

Kept always: every commit record (so transaction ids 1, 2, 3, ... and the store
generation are unchanged, and an index manifest's claim of the generation it covers
still holds, `engine.transcript.evidence`), every `delete_session` record (an index that
lags replays it from `changes_since`, and the change feed names the windows deleted),
and the last `replace` record of a live window (the same, for an index that lags: it
drops the window's rows before the new events come). One exception keeps a dead window's *window*
records (its events still go): when it moved to another session key during its life,
its first record may be what placed that key among the session keys, and the keys'
order is part of the state. After a compaction the replay of the log gives the same
state (windows, their order, keys, events) as before; only the byte positions move.
`plan_compaction` checks this on the planned log before writing anything. Extension
point: a record kind that supersedes earlier records adds one `case` to
`superseded_records` (the replace-transcript record is the second one there).

Which files. Only sealed log files are rewritten. When the open (last) log file holds
dead records, the writer seals it first (`LogWriter.roll`, as a full file is sealed),
so every dead record can be reclaimed, not only those of files past
`EngineConfig.log_roll_bytes`; the next transaction starts a new log file. A rewritten
file keeps its number, its header, the surviving frames byte for byte and in order, and
gets a footer of its new record count and CRC; it is written with
`Directory.write_atomic` (temporary file, fsync, rename over the old one, folder fsync),
so at any instant each log file is wholly the old or wholly the new one. Files are
rewritten from the last to the first, so the rewritten ones are always a suffix of the
log. That order matters: of a dead window's records, those left are then the start of
its life (its window record, events 0..k) followed by the delete that ends it, which is
a valid log that replays to the same state; first to last would leave later events of a
window whose window record is gone, which no replay accepts. Files are never merged or
renumbered (numbers must stay 1..N), so their count does not shrink.

Crash safety. The catalog checkpoint records each sealed file's size and footer and the
byte position of every event, so it disagrees with the log once a file was rewritten;
an open would then report it as a damaged checkpoint. So the steps are:

1. write the compaction state `{compactions + 1, in_progress: true}` (durable);
2. seal the open file if it holds dead records; rewrite each file that holds some;
3. reload the writer's catalog from the rewritten log and save a fresh checkpoint (or
   remove the old one when checkpoints are off);
4. write `{compactions + 1, in_progress: false}`.

An open that finds `in_progress` does not trust the checkpoint (its claim of what was
committed still counts: every commit is kept), replays the whole log and reports a
note that is not serious; a writer so opened then saves a fresh checkpoint and clears
the flag. A kill at any point therefore leaves a log of the same committed
transactions, opened without error and verified clean. A file the disk refuses
(ENOSPC, EIO) stops the compaction with a `StoreError`: the files already rewritten
and those not yet are both valid, the writer reloads its catalog from them, and the
flag stays set until a later step succeeds.

Readers. A reader (another process, or a handle opened with `writer=False`) holds
positions from before a compaction. It keeps the state it read at open; a read that
finds a record other than the one expected (`CorruptFile` from `LogReader`) reads the
state again, and when it moved (or was `in_progress`) reloads its catalog at the same
generation and reads again, instead of reporting damage; `refresh()` reloads in full
when the state moved. A reader whose view holds windows a compaction removed (they
were deleted after its generation) cannot be reloaded at that generation: it gets a
`StoreError` saying to refresh or reopen.

The index is unaffected: it names events by (session id, seq), never by log position,
and the generation its manifest records is unchanged. The change feed
(`changes_since`) of the transactions before a delete no longer lists the dead windows'
changes; a follower that lags (an index replaying from its manifest's generation) still
sees the delete, which removes whatever it had of them, so it ends in the same state.

Cost: one replay of the whole log to plan (O(bytes), every record decoded), then each
file with dead records read and written once, in memory (a file is at most
`log_roll_bytes` plus one transaction).
"""

from __future__ import annotations

from typing import Any

from engine.codec.compaction_file import (
    CompactionState,
    decode_compaction_file,
    encode_compaction_file,
)
from engine.directory import Directory
from engine.errors import StoreError
from engine.model import SessionWindow
from engine.transcript.catalog import Catalog
from engine.transcript.log_files import LOG_FOLDER

COMPACTION_STATE_NAME = f"{LOG_FOLDER}/compaction.state"

def __getattr__(name: str) -> Any:
    """`CompactionOutcome`, defined in `engine.transcript.compaction_outcome` and loaded
    on first use of the name here (PEP 562): a store opened to be read loads this module
    but never compacts, so it defines no dataclass of the outcome."""
    if name == "CompactionOutcome":
        from engine.transcript.compaction_outcome import CompactionOutcome

        return CompactionOutcome
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: The state read from a damaged compaction state file: a compaction may be running.
UNKNOWN_STATE = CompactionState(compactions=-1, in_progress=True)


# --------------------------------------------------------------------------------------
# The compaction state file
# --------------------------------------------------------------------------------------


def read_compaction_state(directory: Directory) -> CompactionState:
    """The compaction state (no file: never compacted); a damaged file reads as
    `UNKNOWN_STATE` (a compaction may be running: trust no checkpoint)."""
    if not directory.exists(COMPACTION_STATE_NAME):
        return CompactionState()
    try:
        return decode_compaction_file(directory.read_bytes(COMPACTION_STATE_NAME),
                                      directory.location(COMPACTION_STATE_NAME))
    except StoreError:
        return UNKNOWN_STATE


def write_compaction_state(directory: Directory, state: CompactionState) -> None:
    """Replace the compaction state, durably (`write_atomic`)."""
    directory.write_atomic(COMPACTION_STATE_NAME, encode_compaction_file(state))


def begun_state(state: CompactionState) -> CompactionState:
    """The state written before a compaction rewrites anything.

    >>> begun_state(CompactionState(2, False, 10))
    CompactionState(compactions=3, in_progress=True, reclaimed_bytes=10)
    >>> begun_state(UNKNOWN_STATE).compactions
    1
    """
    return CompactionState(max(state.compactions, 0) + 1, True, state.reclaimed_bytes)


def finished_state(state: CompactionState, reclaimed: int) -> CompactionState:
    """The state written once a compaction (begun as `state`) finished.

    >>> finished_state(CompactionState(3, True, 10), 5)
    CompactionState(compactions=3, in_progress=False, reclaimed_bytes=15)
    """
    return CompactionState(state.compactions, False, state.reclaimed_bytes + reclaimed)


def catalog_state(catalog: Catalog) -> tuple:
    """What a replay must give again, positions left out: the windows in order with
    their metadata and event counts, and the session keys in order with their windows
    (a comparable value)."""
    return state_of(catalog.entries, catalog.keys,
                    {session_id: len(entry.events)
                     for session_id, entry in catalog.entries.items()})


def state_of(entries: dict, keys: dict[str, dict[str, None]],
             event_counts: dict[str, int]) -> tuple:
    """`catalog_state` of windows `entries` and session `keys` with `event_counts`."""
    windows: list[tuple[str, SessionWindow, int]] = [
        (session_id, entry.window, event_counts.get(session_id, -1))
        for session_id, entry in entries.items()]
    return windows, [(key, list(session_ids)) for key, session_ids in keys.items()]
