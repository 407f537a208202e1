"""An OpenClaw state folder made from a benchmark corpus, and read back by the bare path.

Owns: writing the windows and events of a corpus (a corpus directory or a flat messages
file, as `bare_write.read_corpus` reads them) as the file layout real OpenClaw
installations hold (`openclaw-state-format.md`: `agents/<agentId>/sessions/sessions.json`
and one transcript file per window), so that the benchmark can time `import
--openclaw-state` (`process_ingest`); and reading such a folder the bare way
(`read_state_folder`: the upstream write path's reader, no validation). Must not touch:
the engine's importer of state folders (`engine.ingest.openclaw_state`, which is what is
measured), timing, statistics.

The mapping, each a choice that keeps every probe's answer of the corpus manifest:

* each key's windows go under the folder of the key's agent (`global` and `unknown`,
  which have none, under the default agent's, where the importer keeps them as they are);
* the key's current window is the live transcript `<sessionId>.jsonl` its
  `sessions.json` entry names (`sessionId`, `sessionStartedAt` from the window's
  `createdAt`, `spawnedBy` when it has one); the key's other windows, in corpus order,
  are its reset archives `<current sessionId>.jsonl.reset.<n>` (`n` = 1, 2, ...), which the
  importer files under the same key in that order;
* each transcript starts with the `session` header line OpenClaw writes (`id` the
  window's id, `timestamp` its creation), then the corpus's events as they are;
* incognito windows are left out: the state format has no such flag, and their messages
  are never searchable in the corpus either, so no probe counts them.

`write_state_folder` writes into a temporary folder beside the target and renames it
when whole, so a folder that exists is complete (`ensure_state_folder` reuses it).
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.bench.bare_write import (
    AGENTS_FOLDER,
    INDEX_FILE,
    RESET_MARKER,
    SESSIONS_FOLDER,
    read_corpus,
)
from engine.model import DEFAULT_AGENT_ID, SessionWindow, agent_id_of



def iso_time(milliseconds: float | None) -> str:
    """Epoch milliseconds as the ISO-8601 time OpenClaw writes (UTC, milliseconds, `Z`);
    the epoch itself for a window without a creation time.

    >>> iso_time(1767573461960)
    '2026-01-05T00:37:41.960Z'
    >>> iso_time(None)
    '1970-01-01T00:00:00.000Z'
    """
    moment = datetime.fromtimestamp((milliseconds or 0) / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def window_agent(session_key: str) -> str:
    """The agent folder a key's windows go to.

    >>> window_agent("agent:work_team:main"), window_agent("global")
    ('work_team', 'main')
    """
    return agent_id_of(session_key) or DEFAULT_AGENT_ID


def header_line(window: SessionWindow) -> dict[str, Any]:
    """The `session` header OpenClaw writes as a transcript's first line."""
    return {"type": "session", "version": 3, "id": window.session_id,
            "timestamp": iso_time(window.created_at), "cwd": "/"}


def session_entry(window: SessionWindow) -> dict[str, Any]:
    """The `sessions.json` entry of a key whose current window is `window`."""
    entry: dict[str, Any] = {"sessionId": window.session_id, "chatType": "direct"}
    if window.created_at is not None:
        started = int(window.created_at) if window.created_at.is_integer() else window.created_at
        entry["sessionStartedAt"] = entry["updatedAt"] = started
    if window.spawned_by is not None:
        entry["spawnedBy"] = window.spawned_by
    return entry


def write_state_folder(source: Path, folder: Path) -> dict[str, int]:
    """Write the corpus at `source` as an OpenClaw state folder at `folder` (which must
    not exist); return the counts `windows` and `events` written."""
    if folder.exists():
        raise FileExistsError(f"{folder} already exists")
    partial = folder.with_name(f".{folder.name}.partial")
    if partial.exists():
        shutil.rmtree(partial)
    current: dict[str, SessionWindow] = {}
    archives: dict[str, list[tuple[SessionWindow, Path]]] = {}
    counts = {"windows": 0, "events": 0}
    for window, events in read_corpus(source):
        if window.is_incognito:
            continue
        sessions = partial / AGENTS_FOLDER / window_agent(window.session_key) / SESSIONS_FOLDER
        sessions.mkdir(parents=True, exist_ok=True)
        # Written under its own id first; archives are renamed once the key's current
        # window is known (a corpus may list it after them).
        path = sessions / f"{window.session_id}.jsonl"
        with open(path, "w", encoding="utf-8", newline="\n") as transcript:
            for event in (header_line(window), *events):
                transcript.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")))
                transcript.write("\n")
        archives.setdefault(window.session_key, []).append((window, path))
        if window.current or window.session_key not in current:
            current[window.session_key] = window
        counts["windows"] += 1
        counts["events"] += len(events) + 1
    indexes: dict[Path, dict[str, Any]] = {}
    for key, windows in archives.items():
        live = current[key]
        number = 0
        for window, path in windows:
            if window is live:
                indexes.setdefault(path.parent, {})[key] = session_entry(window)
                continue
            number += 1
            path.rename(path.with_name(f"{live.session_id}{RESET_MARKER}{number}"))
    for sessions, index in indexes.items():
        (sessions / INDEX_FILE).write_text(json.dumps(index, ensure_ascii=False, indent=1),
                                           encoding="utf-8")
    partial.rename(folder)
    return counts


def ensure_state_folder(source: Path, folder: Path) -> Path:
    """The state folder of the corpus at `source`, written at `folder` unless a whole
    one is there already."""
    if not folder.is_dir():
        write_state_folder(source, folder)
    return folder

