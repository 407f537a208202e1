"""Cold archives: moving a session key's windows out of search, and back (restore).

Owns: what archiving and restoring a session do to its windows, on every backend, and
what they report (`ArchiveOutcome`). Must not touch: how search leaves archived windows
out and counts them (`engine.search.scope` on the reference backend, the `NOT IN` and the
count of `engine.backends.sqlite.search` on SQLite), how a backend stores a window's
metadata (its own `put_window`), the index rows (archiving never changes them).

The rules (behaviour.md §2.2, §5.3, §12.2; the seed's "Control UI search"):

* an archived (cold) window is excluded from search, and counted in
  `archivedTranscriptsExcluded` when the request's scope selects it (§5.3 decides the
  scope first, so a search of another key or agent counts nothing);
* `archive_session(store, key)` archives every window of the key, `restore_session`
  makes every one searchable again; restoring is what opening a session does in the
  product ("Cold transcript history becomes searchable again when its session is opened
  and the history is restored"), and **search never restores by itself** (readers do
  not write, and the seed says "Search does not restore archived history
  automatically");
* both are idempotent: a window already in the asked state is left as it is (the
  outcome says how many changed), so a repeated command changes nothing;
* a key the store does not hold is `UnknownSession`, naming it.

**Decision: the index rows stay.** Archiving writes only the windows' metadata, one
`put_window` per window with `archived` set, in one transaction: the window's events,
FTS rows (reference: postings) and index state are not touched. Search excludes the
window by its flag, exactly as it excludes one imported archived, so restoring needs no
rebuild: clearing the flag makes the rows, which were kept consistent all along (a
window archived while it needed a rebuild still needs it after the restore, and the
lifecycle goes on from there), searchable at the next search. On the reference backend
the flag is the window record of the transcript log; on SQLite our
`session_search_windows.archived` (read through the partial index
`session_search_windows_archived`).

**Why not upstream's cold rows.** Upstream OpenClaw 2026.9.6 archives a cold transcript
by moving it out of the database (`session-cold-storage-worker`): its events, identities,
active path, index state and FTS rows are written to a zstd-compressed JSONL archive (a
file `<sha256>.jsonl.zst`, or a blob), a `session_transcript_cold_archives` row records the
archive's name, hash, event count and generation, and the hot rows are deleted; restoring
decodes the archive and inserts them back. Python 3.11 has no zstd codec, and a
`session_transcript_cold_archives` row whose archive is not a real upstream archive
would make OpenClaw's own restore fail on such a file, so a store made here never writes
that table. A database the real OpenClaw wrote is read as upstream reads it: a window is
archived when it has a cold archive row (`sqlite_fts5.WINDOW_SELECT`, `search.
excluded_windows_sql`), and such a database opens read-only, so it is never archived or
restored here (`tests/backends/test_sqlite_openclaw_cold_archives.py` lets OpenClaw's own
cold storage archive a state, then restore one window, and compares the answers with
OpenClaw's kernel's). The known divergence: upstream's own kernel, reading a store made here,
would not see our flag.

Cost: one read of the key's windows and one metadata write per window; no row of the
index is read or written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from engine.backends.protocol import Backend, BackendTransaction
from engine.errors import InputError, UnknownSession
from engine.model import SessionWindow
from engine.store.registry import open_store


@dataclass(frozen=True, slots=True)
class ArchiveOutcome:
    """What archiving or restoring one session key did.

    `archived` is the state asked for; `windows` the key's windows; `changed` how many
    of them were in the other state and were moved.

    >>> ArchiveOutcome("agent:work:recall", archived=False, windows=2, changed=1).summary()
    'restored agent:work:recall: 1 of 2 windows searchable again'
    >>> ArchiveOutcome("agent:work:recall", archived=True, windows=2, changed=0).summary()
    'agent:work:recall was already archived (2 windows); nothing changed'
    """

    session_key: str
    archived: bool
    windows: int
    changed: int

    def to_json(self) -> dict[str, Any]:
        """`{"sessionKey", "archived", "windows", "changed"}`."""
        return {"sessionKey": self.session_key, "archived": self.archived,
                "windows": self.windows, "changed": self.changed}

    def summary(self) -> str:
        """One line for people."""
        counted = f"{self.windows} window{'' if self.windows == 1 else 's'}"
        if not self.changed:
            state = "archived" if self.archived else "searchable"
            return f"{self.session_key} was already {state} ({counted}); nothing changed"
        if self.archived:
            return (f"archived {self.session_key}: {self.changed} of {counted} left out of "
                    "search until restored")
        return f"restored {self.session_key}: {self.changed} of {counted} searchable again"


def set_archived_in(transaction: BackendTransaction, windows: Sequence[SessionWindow],
                    archived: bool) -> int:
    """Within an open transaction, set the `archived` flag of `windows` (the windows as
    they are now); return how many changed. Only metadata is written (the module says
    why the index rows stay)."""
    changed = 0
    for window in windows:
        if window.archived != archived:
            transaction.put_window(replace(window, archived=archived))
            changed += 1
    return changed


def set_session_archived(store: Backend, session_key: str, *, archived: bool) -> ArchiveOutcome:
    """Archive (`archived=True`) or restore every window of `session_key` in one
    transaction of `store` (its writer); `UnknownSession` when the key has no window."""
    if not isinstance(session_key, str) or not session_key.strip():
        raise InputError("a session key must be a non-empty string")
    with store.transaction() as transaction:
        windows = store.windows_of(session_key)
        if not windows:
            raise UnknownSession(f"no session {session_key!r} in this store (no window has "
                                 "this key)")
        changed = set_archived_in(transaction, windows, archived)
    return ArchiveOutcome(session_key, archived, len(windows), changed)


def archive_session(store: Backend, session_key: str) -> ArchiveOutcome:
    """Leave every window of `session_key` out of search until it is restored."""
    return set_session_archived(store, session_key, archived=True)


def restore_session(store: Backend, session_key: str) -> ArchiveOutcome:
    """Make every window of `session_key` searchable again (what opening it does)."""
    return set_session_archived(store, session_key, archived=False)


def archive_in_store(path: str | os.PathLike[str], session_key: str, *,
                     archived: bool) -> ArchiveOutcome:
    """Open the store at `path` as its writer (`registry.open_store`, so a bad path is
    refused as every command refuses it), archive or restore `session_key`, close."""
    command = "archive" if archived else "restore"
    store = open_store(path, command, writer=True)
    try:
        return set_session_archived(store, session_key, archived=archived)
    finally:
        store.close()
