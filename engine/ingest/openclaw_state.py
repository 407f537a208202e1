"""The OpenClaw state-directory input form: the file layout real installations hold.

Owns: reading `<state>/agents/<agentId>/sessions/` folders (spec
`openclaw-state-format.md`) into an `ImportBatch`. Must not touch: the store, the corpus
or flat forms, or event meaning (validated by `engine.transcript.events`).

Layout read:

    <state>/agents/<agentId>/sessions/sessions.json       {sessionKey: entry, ...} (optional)
    <state>/agents/<agentId>/sessions/<name>.jsonl         a live transcript
    <state>/agents/<agentId>/sessions/<id>.jsonl.reset.<stamp>   a reset archive

Rules (the source format leaves these open; each is a decision of this importer):

* **Keys.** A `sessions.json` key that is `agent:...`, `global` or `unknown` is kept; any
  other key (`cron:<job>`, `hook:<uuid>`, ...) is scoped to its agent folder as
  `agent:<agentId>:<key>`.
* **Live transcripts.** `<name>.jsonl` is the window `<name>`. Its key is the entry whose
  `sessionFile` has that file name, else the entry whose `sessionId` is `<name>`; it is
  the key's current window when the entry points at this file (by `sessionFile`, or by
  `sessionId` when the entry has no `sessionFile`). A file no entry names goes under the
  reserved key `unknown` (retained, not current, not chained to other `unknown` windows)
  and the import report says so.
* **Reset archives.** `<id>.jsonl.reset.<stamp>` is the retained window `<id>.reset.<stamp>`
  (the live file may reuse `<id>`, so the archive needs its own id). Its key is the
  entry whose `sessionId` is `<id>`, else `unknown` (reported). Under one key, archives
  come first in `<stamp>` order (numbers by value, other stamps as text), then the live
  window; each window follows the one before it with reason `reset`.
* `*.jsonl.deleted.*` and other files are skipped (reported when they are transcripts).
* **Metadata.** `created_at` is the entry's `sessionStartedAt` (live window) or the header
  line's `timestamp`; `spawned_by` is the entry's `spawnedBy` when it is a valid key;
  the whole entry is kept in `SessionWindow.extra["openclawEntry"]`, with the file name
  in `extra["sourceFile"]`.
* **Events** are validated and stored as they came (the `session` header included), with
  the corpus form's checks (`corpus.import_transcript`); a bad line is reported with its
  file and line number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import MalformedInput
from engine.ingest.batch import ImportBatch
from engine.ingest.corpus import import_transcript
from engine.ingest.jsonl import iter_objects
from engine.model import RESERVED_SESSION_KEYS, SessionWindow
from engine.transcript.projection import parse_js_date
from engine.transcript.windows import session_key_problem, window_problem

AGENTS_FOLDER = "agents"
SESSIONS_FOLDER = "sessions"
INDEX_FILE = "sessions.json"
RESET_MARKER = ".jsonl.reset."
#: What joins a reset archive's window id to its base id: `<id>.reset.<stamp>`.
ARCHIVE_ID_MARKER = ".reset."
DELETED_MARKER = ".jsonl.deleted."


@dataclass(slots=True)
class _SourceWindow:
    """One transcript file and the window it becomes."""

    path: Path
    session_id: str
    session_key: str
    is_archive: bool
    stamp: str = ""
    entry: dict[str, Any] | None = None
    is_current: bool = False


def is_openclaw_state(path: Path) -> bool:
    """True for a directory with `agents/<agentId>/sessions/` folders."""
    agents = path / AGENTS_FOLDER
    return path.is_dir() and agents.is_dir() and any(
        (child / SESSIONS_FOLDER).is_dir() for child in agents.iterdir())


def import_openclaw_state(state: Path, batch: ImportBatch) -> None:
    """Read every agent's sessions folder of the state directory `state` into `batch`."""
    for agent_folder in sorted((state / AGENTS_FOLDER).iterdir()):
        sessions = agent_folder / SESSIONS_FOLDER
        if sessions.is_dir():
            import_agent_sessions(agent_folder.name, sessions, batch)


def import_agent_sessions(agent_id: str, folder: Path, batch: ImportBatch) -> None:
    """Import one `agents/<agentId>/sessions/` folder."""
    for path, window in plan_agent_sessions(agent_id, folder, batch.notes):
        batch.add_window(window, str(path), None)
        import_transcript(path, window.session_id, batch)


def plan_agent_sessions(agent_id: str, folder: Path, notes: list[str],
                        excluded: frozenset[Path] = frozenset()
                        ) -> list[tuple[Path, SessionWindow]]:
    """Every transcript file of one `agents/<agentId>/sessions/` folder with the window it
    becomes, each key's windows in chain order; what is skipped is added to `notes`, and
    the files in `excluded` (set aside by a live import) are left out."""
    entries = read_session_index(agent_id, folder / INDEX_FILE)
    sources = [source for path in sorted(folder.iterdir()) if path not in excluded
               and (source := _classify(path, entries, notes)) is not None]
    by_key: dict[str, list[_SourceWindow]] = {}
    for source in sources:
        by_key.setdefault(source.session_key, []).append(source)
    planned: list[tuple[Path, SessionWindow]] = []
    for key, key_sources in by_key.items():
        previous: str | None = None
        for source in sorted(key_sources, key=_chain_position):
            window = _window_of(source, previous)
            planned.append((source.path, window))
            # unrelated transcripts gathered under "unknown" are not a chain
            previous = window.session_id if key != "unknown" else None
    return planned


def read_session_index(agent_id: str, path: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """`sessions.json` as {canonical key: (its sessionId, entry)}; empty when absent."""
    if not path.is_file():
        return {}
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise MalformedInput(str(path), None, "not valid UTF-8") from None
    except json.JSONDecodeError as error:
        raise MalformedInput(str(path), error.lineno, f"invalid JSON: {error.msg}") from None
    if not isinstance(document, dict):
        raise MalformedInput(str(path), None, "expected a JSON object of session entries")
    entries: dict[str, tuple[str, dict[str, Any]]] = {}
    for raw_key, entry in document.items():
        key = canonical_key(agent_id, raw_key)
        problem = session_key_problem(key)
        if problem is not None:
            raise MalformedInput(str(path), None, f'entry "{raw_key}": {problem}')
        if not isinstance(entry, dict) or not isinstance(entry.get("sessionId"), str):
            raise MalformedInput(str(path), None,
                                 f'entry "{raw_key}" needs a string "sessionId"')
        entries[key] = (entry["sessionId"], entry)
    return entries


def canonical_key(agent_id: str, key: str) -> str:
    """The engine's key for a `sessions.json` key found under agent `agent_id`.

    >>> canonical_key("main", "agent:main:main"), canonical_key("main", "cron:daily")
    ('agent:main:main', 'agent:main:cron:daily')
    >>> canonical_key("main", "global")
    'global'
    """
    if key.startswith("agent:") or key in RESERVED_SESSION_KEYS:
        return key
    return f"agent:{agent_id}:{key}"


def _classify(
    path: Path, entries: dict[str, tuple[str, dict[str, Any]]], notes: list[str]
) -> _SourceWindow | None:
    """What a file in a sessions folder is: a live transcript, an archive, or neither."""
    name = path.name
    if not path.is_file():
        return None
    if DELETED_MARKER in name:
        notes.append(f"{path}: deleted transcript archive skipped")
        return None
    if RESET_MARKER in name:
        base, stamp = name.split(RESET_MARKER, 1)
        key, entry = _entry_by_session_id(entries, base)
        source = _SourceWindow(path, f"{base}{ARCHIVE_ID_MARKER}{stamp}", key, True, stamp, entry)
    elif name.endswith(".jsonl"):
        stem = name[: -len(".jsonl")]
        key, entry = _entry_by_file(entries, name)
        current = entry is not None
        if entry is None:
            key, entry = _entry_by_session_id(entries, stem)
            current = entry is not None and not isinstance(entry.get("sessionFile"), str)
        source = _SourceWindow(path, stem, key, False, "", entry, current)
    else:
        return None
    if source.entry is None:
        notes.append(f'{path}: no {INDEX_FILE} entry names it; imported under "unknown"')
    return source


def _entry_by_file(
    entries: dict[str, tuple[str, dict[str, Any]]], file_name: str
) -> tuple[str, dict[str, Any] | None]:
    for key, (_, entry) in entries.items():
        session_file = entry.get("sessionFile")
        if isinstance(session_file, str) and Path(session_file).name == file_name:
            return key, entry
    return "unknown", None


def _entry_by_session_id(
    entries: dict[str, tuple[str, dict[str, Any]]], session_id: str
) -> tuple[str, dict[str, Any] | None]:
    for key, (entry_session_id, entry) in entries.items():
        if entry_session_id == session_id:
            return key, entry
    return "unknown", None


def _chain_position(source: _SourceWindow) -> tuple[int, int, float, str]:
    """Archives first, by stamp (numeric stamps by value), then live files, current last."""
    if not source.is_archive:
        return (1, int(source.is_current), 0.0, source.session_id)
    try:
        return (0, 0, float(source.stamp), source.session_id)
    except ValueError:
        return (0, 1, 0.0, source.stamp)


def _window_of(source: _SourceWindow, previous: str | None) -> SessionWindow:
    """The `SessionWindow` of one source file, following `previous` under its key."""
    entry = source.entry or {}
    spawned_by = entry.get("spawnedBy")
    if not isinstance(spawned_by, str) or session_key_problem(spawned_by) is not None:
        spawned_by = None
    extra: dict[str, Any] = {"sourceFile": source.path.name}
    if source.entry is not None:
        extra["openclawEntry"] = source.entry
    window = SessionWindow(
        session_id=source.session_id,
        session_key=source.session_key,
        previous_session_id=previous,
        reason="reset" if previous is not None else "initial",
        current=source.is_current,
        spawned_by=spawned_by,
        created_at=_created_at(source, entry),
        extra=extra,
    )
    problem = window_problem(window)
    if problem is not None:
        raise MalformedInput(str(source.path), None, problem)
    return window


def _created_at(source: _SourceWindow, entry: dict[str, Any]) -> float | None:
    """`sessionStartedAt` of a live window's entry, else the header line's timestamp."""
    started = entry.get("sessionStartedAt")
    if not source.is_archive and isinstance(started, (int, float)) and not isinstance(
            started, bool):
        return float(started)
    objects = iter_objects(source.path)
    try:
        first = next(objects, None)
    finally:
        objects.close()
    if first is None or first[1].get("type") != "session":
        return None
    stamp = first[1].get("timestamp")
    return parse_js_date(stamp) if isinstance(stamp, str) else None
