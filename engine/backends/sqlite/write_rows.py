"""The rows one SQLite write transaction gathers before it writes them, table by table.

Owns: the insert statements of the rows an append makes (`transcript_events`, identities,
FTS map and FTS rows, active path, index state), a window's cursor in a transaction
(`WindowCursor`), the rows gathered since the last write (`PendingRows`, written with
one `executemany` per table, states first), the identities' two-pass write, and the FTS
rows of windows rebuilt at once held until the transaction ends (`HeldRows`, in an
unnamed temporary file). Must not touch: which rows an event makes, when they are
written, or what a rebuild reads (`engine.backends.sqlite.writes`, whose module
docstring says why), what is searchable (`engine.transcript.projection`).
"""

from __future__ import annotations

import json
import marshal
import sqlite3
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

from engine.index.lifecycle import WindowIndexState
from engine.transcript import events as kinds

UPSERT_STATE = (
    "INSERT INTO session_transcript_index_state (session_id, indexed_seq, leaf_event_id, "
    "needs_rebuild, active_event_count, active_message_count, updated_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
    "indexed_seq = excluded.indexed_seq, leaf_event_id = excluded.leaf_event_id, "
    "needs_rebuild = excluded.needs_rebuild, active_event_count = excluded.active_event_count, "
    "active_message_count = excluded.active_message_count, updated_at = excluded.updated_at"
)
INSERT_EVENT = (
    "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_utf8_bytes) "
    "VALUES (?, ?, ?, ?, ?)"
)
UPSERT_IDENTITY = (
    "INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, "
    "parent_id, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, event_id) "
    "DO UPDATE SET seq = excluded.seq, event_type = excluded.event_type, "
    "parent_id = excluded.parent_id, created_at = excluded.created_at"
)
#: The identities' first pass (`write_identities`): the same rows, an id already held kept.
INSERT_NEW_IDENTITY = (
    "INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, "
    "parent_id, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, event_id) "
    "DO NOTHING"
)
INSERT_FTS_ROW = "INSERT INTO session_transcript_fts_rows (id, session_id, message_id) VALUES (?, ?, ?)"
INSERT_FTS = (
    "INSERT INTO session_transcript_fts (rowid, text, session_id, message_id, role, timestamp) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
INSERT_ACTIVE = (
    "INSERT INTO session_transcript_active_events (session_id, active_position, event_seq, "
    "message_position, context_eligible) VALUES (?, ?, ?, ?, ?)"
)


def now_milliseconds() -> int:
    """The time of a write, as upstream records it (integral epoch milliseconds)."""
    return int(time.time() * 1000)


def context_eligibility(event: dict[str, Any]) -> int:
    """Upstream's `context_eligible`: 0 when the message says `excludeFromContext`.

    >>> context_eligibility({"message": {"excludeFromContext": True}}), context_eligibility({})
    (0, 1)
    """
    message = event.get("message")
    return 0 if isinstance(message, dict) and message.get("excludeFromContext") is True else 1


@dataclass(slots=True)
class WindowCursor:
    """What one transaction knows about a window it appends to (changes as it appends)."""

    last_seq: int
    state: WindowIndexState | None
    active_events: int = 0
    active_messages: int = 0
    #: An incognito window's events add no FTS row (`SessionWindow.is_incognito`).
    incognito: bool = False

    def state_row(self, session_id: str, updated_at: int) -> tuple:
        """The `session_transcript_index_state` row of this cursor (state not None)."""
        assert self.state is not None
        return (session_id, self.state.indexed_seq, self.state.leaf_event_id,
                int(self.state.needs_rebuild), self.active_events, self.active_messages,
                updated_at)


class PendingRows:
    """The rows gathered since the last flush, one list per table."""

    def __init__(self) -> None:
        self.states: dict[str, WindowCursor] = {}
        self.events: list[tuple] = []
        self.identities: list[tuple] = []
        self.fts_map: list[tuple] = []
        self.fts: list[tuple] = []
        self.active: list[tuple] = []

    def write(self, connection: sqlite3.Connection) -> None:
        """Write every gathered row (states first) and forget them."""
        if self.states:
            updated_at = now_milliseconds()
            connection.executemany(UPSERT_STATE, [
                cursor.state_row(session_id, updated_at)
                for session_id, cursor in self.states.items()
            ])
        if self.events:
            connection.executemany(INSERT_EVENT, self.events)
        write_identities(connection, self.identities)
        for sql, rows in ((INSERT_FTS_ROW, self.fts_map), (INSERT_FTS, self.fts),
                          (INSERT_ACTIVE, self.active)):
            if rows:
                connection.executemany(sql, rows)
        self.clear()

    def clear(self) -> None:
        """Forget every gathered row."""
        self.states.clear()
        for rows in (self.events, self.identities, self.fts_map, self.fts, self.active):
            rows.clear()


def write_identities(connection: sqlite3.Connection, rows: list[tuple]) -> None:
    """Write `transcript_event_identities` rows in order, a later row with an id taking
    the identity from an earlier one (`UPSERT_IDENTITY`, row by row).

    In two passes: the rows are inserted with `INSERT_NEW_IDENTITY`, which keeps an id
    already held; only when some row found its id held (fewer rows inserted than given)
    are all of them written again with `UPSERT_IDENTITY`, in order, so the last one of
    each id wins as before. The first pass is the whole work of an import (its ids are
    new), and SQLite runs it at a fraction of the upsert's cost: an upsert that may
    update `seq`, a column of the table's foreign key, makes SQLite prepare the foreign
    key's checks for every row, conflict or not."""
    if not rows:
        return
    if connection.executemany(INSERT_NEW_IDENTITY, rows).rowcount != len(rows):
        connection.executemany(UPSERT_IDENTITY, rows)


class HeldRows:
    """The FTS rows of the windows a transaction rebuilt at once (`append_transcript`),
    held until it ends, in an unnamed temporary file (an import of any size keeps the
    memory it had): per window, its rows and the dirty state the forward indexer would
    have left it in.

    >>> held = HeldRows()
    >>> held.add("b", [("m1", "hi", "user", 1)], WindowIndexState(0, "m1", True))
    >>> held.add("a", [], WindowIndexState(0, "m1", True))
    >>> "b" in held, held.drop("a").needs_rebuild, list(held.in_order(["c"]))
    (True, True, [('b', [('m1', 'hi', 'user', 1)]), ('c', None)])
    >>> bool(held)
    False
    """

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        #: session id -> (offset, size, dirty state)
        self._windows: dict[str, tuple[int, int, WindowIndexState]] = {}

    def __contains__(self, session_id: str) -> bool:
        return session_id in self._windows

    def __bool__(self) -> bool:
        return bool(self._windows)

    def add(self, session_id: str, rows: list[tuple], dirty: WindowIndexState) -> None:
        """Hold one window's rows `(message_id, text, role, timestamp)`, in path order."""
        if self._file is None:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 - closed by `close`
        data = marshal.dumps(rows)
        offset = self._file.seek(0, 2)
        self._file.write(data)
        self._windows[session_id] = (offset, len(data), dirty)

    def drop(self, session_id: str) -> WindowIndexState | None:
        """Forget a window's rows; the dirty state it was held with (None: not held)."""
        held = self._windows.pop(session_id, None)
        return None if held is None else held[2]

    def dirty_states(self) -> dict[str, WindowIndexState]:
        """Every held window's dirty state; forgets them all."""
        states = {session_id: held[2] for session_id, held in self._windows.items()}
        self.close()
        return states

    def in_order(self, others: Sequence[str] = ()) -> Iterator[tuple[str, list[tuple] | None]]:
        """Every held window's rows, and each of `others` with None, in session-id order
        (SQLite's BINARY collation: UTF-8 bytes, the order a reconcile rebuilds in);
        forgets them all."""
        file = self._file
        for session_id in sorted({*self._windows, *others}, key=lambda key: key.encode("utf-8")):
            held = self._windows.get(session_id)
            if held is None:
                yield session_id, None
                continue
            assert file is not None
            file.seek(held[0])
            yield session_id, marshal.loads(file.read(held[1]))
        self.close()

    def close(self) -> None:
        """Forget every held window and remove the file."""
        self._windows.clear()
        if self._file is not None:
            self._file.close()
            self._file = None


def add_event_rows(rows: PendingRows, session_id: str, seq: int, event: dict[str, Any],
                   received: float) -> None:
    """Gather the `transcript_events` row of one event, and its identity row when it has
    a string `id`."""
    event_json = json.dumps(event, ensure_ascii=True)
    rows.events.append((session_id, seq, event_json, received, len(event_json)))
    event_id = event.get("id")
    if isinstance(event_id, str):
        parent = event.get("parentId")
        rows.identities.append((session_id, event_id, seq, kinds.event_type(event),
                                parent if isinstance(parent, str) else None, received))
