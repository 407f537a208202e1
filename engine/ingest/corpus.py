"""The corpus-directory input form: `sessions.jsonl` plus `transcripts/<sessionId>.jsonl`.

Owns: reading one corpus directory into an `ImportBatch`. Must not touch: the store
itself, or the meaning of events (validated by `engine.transcript.events`).

Layout (documented for users in `corpora/README.md`):

    <corpus>/sessions.jsonl               one window record per line (see `records.py`)
    <corpus>/transcripts/<sessionId>.jsonl  that window's events, one per line, in append
                                          order (the event shapes of behaviour.md §2)

Checks, in order, each failing with the file, the line and the reason:

1. every `sessions.jsonl` line is a valid window record;
2. every window has its transcript file (an empty window has an empty file) and every
   `*.jsonl` file in `transcripts/` belongs to a window;
3. no window is already in the store or earlier in this import (`DuplicateImport`), a key
   gets at most one current window, and the `previousSessionId` links form no cycle;
4. every event passes `events.validation_problem`, its `timestamp` (when present and not
   null) is a date as the flat form's is (epoch milliseconds within ECMAScript's range,
   or an ISO-8601 string `Date.parse` reads: not `"yesterday"`, not `1e300`), and event
   ids are unique per window.

Windows are written first, then each window's events in file order, all in the caller's
transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from engine.errors import MalformedInput
from engine.ingest.batch import ImportBatch
from engine.ingest.flat import timestamp_value
from engine.ingest.jsonl import iter_objects
from engine.ingest.records import window_from_record
from engine.model import SessionWindow
from engine.transcript import events as kinds

SESSIONS_FILE = "sessions.jsonl"
TRANSCRIPTS_FOLDER = "transcripts"


def is_corpus_directory(path: Path) -> bool:
    """True when `path` is a directory holding `sessions.jsonl`."""
    return path.is_dir() and (path / SESSIONS_FILE).is_file()


def import_corpus(directory: Path, batch: ImportBatch) -> None:
    """Read the corpus at `directory` into `batch` (raises on the first problem)."""
    sessions_path = directory / SESSIONS_FILE
    windows = read_windows(sessions_path)
    transcript_paths = _transcript_files(directory, sessions_path, windows)
    for line, window in windows:
        batch.add_window(window, str(sessions_path), line)
    batch.check_chains(str(sessions_path))
    for (_, window), transcript_path in zip(windows, transcript_paths):
        import_transcript(transcript_path, window.session_id, batch, dated=True)


def read_windows(sessions_path: Path) -> list[tuple[int, SessionWindow]]:
    """Every window record of `sessions.jsonl` with its line number."""
    windows: list[tuple[int, SessionWindow]] = []
    seen: dict[str, int] = {}
    for line, record in iter_objects(sessions_path):
        try:
            window = window_from_record(record)
        except ValueError as error:
            raise MalformedInput(str(sessions_path), line, str(error)) from None
        if window.session_id in seen:
            raise MalformedInput(str(sessions_path), line,
                                 f'sessionId "{window.session_id}" is already on line '
                                 f"{seen[window.session_id]}")
        seen[window.session_id] = line
        windows.append((line, window))
    return windows


def import_transcript(path: Path, session_id: str, batch: ImportBatch, *,
                      dated: bool = False) -> None:
    """Validate and append every event of one transcript file to window `session_id`
    (`dated`: refuse an event `timestamp` that is not a date, as the corpus form does)."""
    append_events(path, iter_objects(path), session_id, batch, {}, dated=dated)


def append_events(
    path: Path, events: Iterable[tuple[int, dict[str, Any]]], session_id: str,
    batch: ImportBatch, seen: dict[str, int], *, dated: bool = False,
) -> None:
    """Validate and append `(line, event)` pairs read from `path` to window `session_id`;
    `seen` maps the event ids the window already holds to their lines (0: a line not
    read now; ids must be unique per window) and learns the new ones.

    `dated` is the corpus form's rule 4: an event `timestamp` must be a date. OpenClaw's
    own transcripts (its state folders) are read as OpenClaw reads them: a timestamp
    `Date.parse` cannot read is kept, and the row takes the event's stored time
    (behaviour.md §2.3 rule 5)."""
    name = str(path)
    with batch.whole_transcript(session_id):
        for line, event in events:
            problem = kinds.validation_problem(event)
            if problem is not None:
                raise MalformedInput(name, line, problem)
            if dated and event.get("timestamp") is not None:
                try:
                    timestamp_value(event["timestamp"])
                except ValueError as refused:
                    raise MalformedInput(name, line, str(refused)) from None
            entry_id = kinds.non_blank_string(event.get("id"))
            if entry_id is not None and event.get("type") != kinds.SESSION_HEADER:
                if entry_id in seen:
                    earlier = (f"on line {seen[entry_id]}" if seen[entry_id] else
                               "by an event the store holds")
                    raise MalformedInput(name, line,
                                         f'event id "{entry_id}" is already used {earlier}')
                seen[entry_id] = line
            batch.append(session_id, event, name, line, shaped=True)


def _transcript_files(
    directory: Path, sessions_path: Path, windows: list[tuple[int, SessionWindow]]
) -> list[Path]:
    """The transcript file of each window, after checking files and windows match."""
    folder = directory / TRANSCRIPTS_FOLDER
    expected = {f"{window.session_id}.jsonl": line for line, window in windows}
    present = {path.name for path in folder.glob("*.jsonl")} if folder.is_dir() else set()
    for name in sorted(present - set(expected)):
        raise MalformedInput(str(folder / name), None,
                             f'no window in {SESSIONS_FILE} has sessionId "{name[:-6]}"')
    paths = []
    for line, window in windows:
        name = f"{window.session_id}.jsonl"
        if name not in present:
            raise MalformedInput(str(sessions_path), line,
                                 f"transcript file {TRANSCRIPTS_FOLDER}/{name} is missing "
                                 "(an empty window needs an empty file)")
        paths.append(folder / name)
    return paths
