"""The live import's marks: how far each source of an OpenClaw state was imported.

Owns: the file `live-import.json` at the root of a store (its JSON shape, reading it
leniently, writing it atomically). Must not touch: the sources themselves or the store's
own files (the backends own those; this file sits beside them and no backend reads it).

Why a file of its own, and why JSON: the marks are derived, disposable bookkeeping that
only make a re-import cheap (an unchanged transcript file is skipped after one `stat`
and one read of its last line). The store stays the authority: a mark is trusted only
when the event count it records equals what the store holds for its window, so a crash
between the import's commit and the write of this file (which comes after it) leaves a
mark that is simply not trusted, and the next import compares the source with the
store's events instead. An unreadable file is ignored with a note, for the same reason.
So no byte layout of `engine/codec` is needed: the file is small, readable JSON,
documented in docs/file-formats.md.

Shape (version 1)::

    {"version": 1,
     "states": {"<resolved state path>": {
        "files": {"agents/main/sessions/<id>.jsonl":
                     {"window": "<session id>", "size": <bytes consumed>,
                      "lines": <lines consumed>, "lastLineStart": <offset>,
                      "lastLineSha256": "<hex of the last consumed line's bytes>",
                      "events": <events the window holds>}},
        "databases": {"agents/main/agent/openclaw-agent.sqlite":
                     {"<session id>": {"highestSeq": <source seq>, "events": <count>}}},
        "setAside": {"agents/main/sessions/<id>.jsonl":
                     {"signature": [[<size>, <mtime ns>], ...], "reason": "<the error>"}}}}}

Paths of files and databases are relative to the state folder, with `/`. `setAside`
(optional: absent in files written before it) lists the sources a live import could
not read (a malformed line, a database it cannot open), each with the error and the
size and modification time of its files (a database's with its `-wal`) when it was set
aside: while they are the same, the source stays aside without a new warning; once
they change, the next import tries it again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.directory import FileDirectory

MARKS_FILE = "live-import.json"
MARKS_VERSION = 1


class UnreadableMarks(ValueError):
    """The marks file, or a part of it, is not what this module writes."""


@dataclass(frozen=True, slots=True)
class FileMark:
    """How far one transcript file was read: `size` bytes, `lines` lines; the last line
    consumed starts at `last_line_start` and its bytes hash to `last_line_sha256`; the
    window then held `events` events."""

    window: str
    size: int
    lines: int
    last_line_start: int
    last_line_sha256: str
    events: int

    def to_json(self) -> dict[str, Any]:
        """The mark as its JSON object."""
        return {"window": self.window, "size": self.size, "lines": self.lines,
                "lastLineStart": self.last_line_start,
                "lastLineSha256": self.last_line_sha256, "events": self.events}

    @classmethod
    def from_json(cls, value: Any) -> FileMark:
        """A mark from its JSON object (`UnreadableMarks` when it is not one).

        >>> FileMark.from_json({"window": "w", "size": 9, "lines": 1, "lastLineStart": 0,
        ...                     "lastLineSha256": "ab", "events": 1}).size
        9
        """
        if not isinstance(value, dict):
            raise UnreadableMarks("a file mark is not an object")
        return cls(_text(value, "window"), _count(value, "size"), _count(value, "lines"),
                   _count(value, "lastLineStart"), _text(value, "lastLineSha256"),
                   _count(value, "events"))


@dataclass(frozen=True, slots=True)
class WindowMark:
    """How far one window of an OpenClaw database was read: up to source seq
    `highest_seq`, the store's window then holding `events` events."""

    highest_seq: int
    events: int

    def to_json(self) -> dict[str, Any]:
        """The mark as its JSON object."""
        return {"highestSeq": self.highest_seq, "events": self.events}

    @classmethod
    def from_json(cls, value: Any) -> WindowMark:
        """A mark from its JSON object (`UnreadableMarks` when it is not one)."""
        if not isinstance(value, dict):
            raise UnreadableMarks("a window mark is not an object")
        return cls(_count(value, "highestSeq", minimum=-1), _count(value, "events"))


@dataclass(frozen=True, slots=True)
class SetAside:
    """A source a live import could not read: why, and the size and modification time
    of its files then (`signature`), so that it is tried again once they change."""

    signature: tuple[tuple[int, int], ...]
    reason: str

    def to_json(self) -> dict[str, Any]:
        """The entry as its JSON object."""
        return {"signature": [list(pair) for pair in self.signature], "reason": self.reason}

    @classmethod
    def from_json(cls, value: Any) -> SetAside:
        """An entry from its JSON object (`UnreadableMarks` when it is not one).

        >>> SetAside.from_json({"signature": [[10, 5]], "reason": "x:3: bad"}).signature
        ((10, 5),)
        """
        if not isinstance(value, dict) or not isinstance(value.get("signature"), list):
            raise UnreadableMarks("a set-aside entry is not an object with a signature")
        pairs = value["signature"]
        if not all(isinstance(pair, list) and len(pair) == 2 and all(
                isinstance(number, int) and not isinstance(number, bool) for number in pair)
                for pair in pairs):
            raise UnreadableMarks('"signature" must hold [size, mtime] pairs')
        return cls(tuple((pair[0], pair[1]) for pair in pairs), _text(value, "reason"))


@dataclass(frozen=True, slots=True)
class StateMarks:
    """The marks of one state folder: per transcript file, per database window, and the
    sources set aside."""

    files: dict[str, FileMark] = field(default_factory=dict)
    databases: dict[str, dict[str, WindowMark]] = field(default_factory=dict)
    set_aside: dict[str, SetAside] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The marks as their JSON object."""
        document: dict[str, Any] = {
            "files": {name: mark.to_json() for name, mark in sorted(self.files.items())},
            "databases": {name: {session_id: mark.to_json()
                                 for session_id, mark in windows.items()}
                          for name, windows in sorted(self.databases.items())}}
        if self.set_aside:
            document["setAside"] = {name: entry.to_json()
                                    for name, entry in sorted(self.set_aside.items())}
        return document

    @classmethod
    def from_json(cls, value: Any) -> StateMarks:
        """Marks from their JSON object (`UnreadableMarks` when it is not one)."""
        if not isinstance(value, dict):
            raise UnreadableMarks("the marks of a state are not an object")
        files = value.get("files", {})
        databases = value.get("databases", {})
        set_aside = value.get("setAside", {})
        if not all(isinstance(part, dict) for part in (files, databases, set_aside)):
            raise UnreadableMarks('"files", "databases" and "setAside" must be objects')
        return cls({str(name): FileMark.from_json(mark) for name, mark in files.items()},
                   {str(name): _window_marks(windows) for name, windows in databases.items()},
                   {str(name): SetAside.from_json(entry) for name, entry in set_aside.items()})


def state_name(state: Path) -> str:
    """The key a state folder's marks are kept under: its resolved path."""
    return str(state.resolve())


def read_marks(store_path: Path, notes: list[str]) -> dict[str, StateMarks]:
    """Every state's marks kept in the store at `store_path` (none when the file is
    absent); an unreadable file is ignored, with a note (the store is the authority)."""
    path = store_path / MARKS_FILE
    if not path.is_file():
        return {}
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(document, dict) or document.get("version") != MARKS_VERSION:
            raise UnreadableMarks(f"not version {MARKS_VERSION} of the live-import marks")
        states = document.get("states")
        if not isinstance(states, dict):
            raise UnreadableMarks('"states" must be an object')
        return {str(name): StateMarks.from_json(marks) for name, marks in states.items()}
    except (OSError, UnicodeDecodeError, ValueError) as error:
        notes.append(f"{path}: ignored ({error}); every source is compared with the store")
        return {}


def write_marks(store_path: Path, marks: dict[str, StateMarks]) -> None:
    """Replace the store's marks file, atomically and durably (after the import's
    commit: a crash before this leaves old marks, which the next import distrusts)."""
    document = {"version": MARKS_VERSION,
                "states": {name: state.to_json() for name, state in sorted(marks.items())}}
    data = (json.dumps(document, indent=1, sort_keys=False) + "\n").encode("utf-8")
    FileDirectory(store_path).write_atomic(MARKS_FILE, data)


def _window_marks(value: Any) -> dict[str, WindowMark]:
    if not isinstance(value, dict):
        raise UnreadableMarks("the marks of a database are not an object")
    return {str(session_id): WindowMark.from_json(mark) for session_id, mark in value.items()}


def _text(value: dict[str, Any], name: str) -> str:
    found = value.get(name)
    if not isinstance(found, str):
        raise UnreadableMarks(f'"{name}" must be a string')
    return found


def _count(value: dict[str, Any], name: str, minimum: int = 0) -> int:
    found = value.get(name)
    if not isinstance(found, int) or isinstance(found, bool) or found < minimum:
        raise UnreadableMarks(f'"{name}" must be a whole number of at least {minimum}')
    return found
