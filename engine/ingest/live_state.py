"""The live import of an OpenClaw state: bring a store up to date with the state folder.

Owns: deciding, per source, what a re-import must do (add a window, append the new
events, nothing, or replace the transcript), and doing it in ONE transaction through
the `BackendTransaction` methods. Must not touch: the marks file's shape
(`live_marks.py`), what the file layout means (`openclaw_state.py`, whose plan of windows
this reuses), how a store keeps data, and never the source: transcript files are only
read, and an OpenClaw database is opened read-only (`SqliteBackend.open_file`, a
`mode=ro` or `immutable` URI), so not a byte of the state changes.

Sources of a state folder (spec `openclaw-state-format.md`, behaviour.md §2.2):

* `agents/<agentId>/sessions/*.jsonl` (and reset archives): the file layout, planned by
  `openclaw_state.plan_agent_sessions` (keys, current windows, chains, metadata);
* `agents/<agentId>/agent/openclaw-agent.sqlite`: the SQLite state the current OpenClaw
  writes; its windows and transcript events (their `seq` order) are imported as they are.
  When an agent has both, a file whose window the database holds is the copy OpenClaw
  migrated, and is skipped (a note says so).

Deciding, per source (the store is the authority; a mark from `live_marks.py` is a
shortcut that is trusted only when its event count equals what the store holds):

* a window the store lacks is **added** with all its events;
* a file with a trusted mark that is at least as long as the mark says, whose last
  consumed line still hashes the same, is **appended to** from the mark's byte offset
  (nothing to read past it: **unchanged**, after one `stat` and one read of that line);
* otherwise the file is read whole and compared with the store's events: when they are
  its first events, the rest is appended; when not (the file shrank, or changed before
  its known end) the transcript is **replaced**;
* a database window whose source events begin with the store's events (the last one
  compared when the mark is trusted, all of them otherwise) gets the events past them;
  otherwise it is replaced. With a trusted mark and as many events as the store holds,
  it is unchanged without reading its events (OpenClaw only appends transcript rows;
  a rewrite to exactly as many events is seen once the marks file is deleted);
* changed metadata (a new current window of a key, a changed `sessions.json` entry) is
  written again; a key's old current window is retired first.

Replacing is `replace_transcript` (one call per replaced source): the window keeps its
place and its key's other windows are untouched; its metadata is written again (as any
window's, after the key's old current window is retired) when the source's changed, and
its transcript is replaced through `BackendTransaction.replace_transcript` when the
import's sources are all written (`ImportBatch.finish`), every event with its own
receipt time (a database event's `created_at`, else the import's `received_at`). As
for `import --replace`, behaviour.md §8.2 decides whether the window's index is rebuilt
in the import's transaction (at most `EngineConfig.sync_rebuild_max_events` events and
`sync_rebuild_max_bytes` bytes) or the window is marked dirty (its old rows hidden,
`indexing` true) until reconcile rebuilds it.

Lines: a last line without a newline is imported when it is a whole JSON object; when
it is not (a writer is still writing it) it is left for the next import, with a note.
Any other bad line is `MalformedInput` naming its file and line. Such a source (or a
database that cannot be read, or an agent's `sessions.json` that is not JSON) is **set
aside**: the import runs again without it, so everything else is written, in one
transaction; the report names it once (`LiveReport.newly_set_aside`), and the marks
keep it aside until its files change (`set_aside.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import MalformedInput, StoreError
from engine.ingest.batch import ImportBatch
from engine.ingest.corpus import append_events
from engine.ingest.importer import DATABASE_IN_AGENT, ImportTarget, stored_windows
from engine.ingest.jsonl import iter_lines, line_object, parse_line
from engine.ingest.live_marks import FileMark, SetAside, StateMarks, WindowMark
from engine.ingest.live_report import LiveReport
from engine.ingest.openclaw_state import (
    AGENTS_FOLDER,
    ARCHIVE_ID_MARKER,
    INDEX_FILE,
    SESSIONS_FOLDER,
    plan_agent_sessions,
)
from engine.ingest.set_aside import set_aside_now, source_of_error, still_aside
from engine.model import SessionWindow, StoredEvent
from engine.transcript import events as kinds

if TYPE_CHECKING:
    from engine.backends.sqlite.backend import SqliteBackend

UNKNOWN_KEY = "unknown"

#: Where an agent's SQLite state is, under its agent folder (upstream's path).
DATABASE_PATH = tuple(DATABASE_IN_AGENT.split("/"))

NOT_A_STATE = ("not an OpenClaw state directory (no agents/<agentId>/sessions/ nor "
               "agents/<agentId>/agent/openclaw-agent.sqlite)")


def is_live_state(path: Path) -> bool:
    """True for a folder with `agents/<agentId>/` holding a `sessions/` folder or an
    `agent/openclaw-agent.sqlite` database."""
    agents = path / AGENTS_FOLDER
    return path.is_dir() and agents.is_dir() and any(
        (child / SESSIONS_FOLDER).is_dir() or child.joinpath(*DATABASE_PATH).is_file()
        for child in agents.iterdir())


# --------------------------------------------------------------------------------------
# Plans and decisions
# --------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Source:
    """One source of a window (a transcript file, or a window of a database) and what
    this import does with it (`action`: new, append, unchanged, replace)."""

    window: SessionWindow
    name: str  # relative to the state folder, for the marks
    state: Path  # the state folder, one object for every source (`path`)
    from_database: bool = False
    action: str = "new"
    stored: SessionWindow | None = None
    held: int = 0
    # a file: where reading starts, and the mark of what precedes it (None: a new or
    # replaced window's file, read from its start; its mark is made after the read)
    offset: int = 0
    first_line: int = 1
    base: FileMark | None = None
    seen: dict[str, int] | None = None
    # a database window: the database, and its events (read when they are needed)
    database: SqliteBackend | None = None
    database_events: list[StoredEvent] = field(default_factory=list)
    appended: int = 0
    mark: FileMark | WindowMark | None = None

    @property
    def path(self) -> Path:
        """The source's file, made when asked: not a path kept for each source until the
        marks are written (the state folder's windows are many)."""
        return self.state / self.name


def _sha256(data: bytes) -> str:
    import hashlib  # here: OpenSSL's library is loaded only by an import that hashes
    return hashlib.sha256(data).hexdigest()


def _empty_mark(window: str) -> FileMark:
    return FileMark(window, 0, 0, 0, _sha256(b""), 0)


def _read_range(path: Path, start: int, end: int) -> bytes:
    with path.open("rb") as handle:
        handle.seek(start)
        return handle.read(end - start)


@contextmanager
def _source_errors(path: Path) -> Iterator[None]:
    """A source file the system will not read (gone since it was listed: a reset renamed
    it) is `MalformedInput` naming it, which `watch` retries on its next pass."""
    try:
        yield
    except OSError as error:
        raise MalformedInput(str(path), None,
                             f"cannot read: {error.strerror or error}") from None


def _decide_file(target: ImportTarget, source: _Source, mark: FileMark | None) -> None:
    """Set `source.action` and where to read from (the rules of the module docstring)."""
    session_id = source.window.session_id
    if source.stored is None:
        source.action, source.seen = "new", {}
        return
    source.held = held = target.event_count(session_id)
    size = source.path.stat().st_size
    if mark is not None and mark.window == session_id and mark.events == held \
            and size >= mark.size and _still_there(source.path, mark, size):
        source.action = "unchanged" if size == mark.size else "append"
        source.offset, source.first_line, source.base = mark.size, mark.lines + 1, mark
        if size > mark.size > 0 and _read_range(source.path, mark.size - 1,
                                                mark.size) != b"\n":
            source.offset += 1  # the newline that ends the last line read (_still_there)
        return
    stored = target.events(session_id)
    numbered: list[tuple[int, int, bytes, dict[str, Any]]] = []
    for line, start, raw, event in _complete_objects(source.path, 0, 1, []):
        if event is not None:
            numbered.append((line, start, raw, event))
    if len(numbered) < held or any(numbered[position][3] != stored[position].event
                                   for position in range(held)):
        source.action, source.seen = "replace", {}
        return
    source.action = "append"
    source.seen = {}
    for line, _, _, event in numbered[:held]:
        entry_id = kinds.non_blank_string(event.get("id"))
        if entry_id is not None and event.get("type") != kinds.SESSION_HEADER:
            source.seen[entry_id] = line
    if held == 0:
        source.base = _empty_mark(session_id)
        return
    line, start, raw, _ = numbered[held - 1]
    source.offset, source.first_line = start + len(raw), line + 1
    source.base = FileMark(session_id, start + len(raw), line, start, _sha256(raw), held)


def _still_there(path: Path, mark: FileMark, size: int) -> bool:
    """Whether the last line the mark consumed is still the same bytes, and (when it had
    no newline) the file did not go on writing that line."""
    last = _read_range(path, mark.last_line_start, min(size, mark.size + 1))
    consumed = last[: mark.size - mark.last_line_start]
    if _sha256(consumed) != mark.last_line_sha256:
        return False
    return consumed.endswith(b"\n") or size == mark.size or last[-1:] == b"\n" or not consumed


def _complete_objects(path: Path, offset: int, first_line: int, notes: list[str]
                      ) -> Iterator[tuple[int, int, bytes, dict[str, Any] | None]]:
    """The lines from `offset` on, each with its start, bytes and object (None: blank;
    `parse_line`'s error for a bad one), but a last line without a newline that is not
    yet a whole JSON object (a writer is still at it): that one is left, with a note.
    Each line is parsed once (`line_object`, or `parse_line` when that fails)."""
    name = str(path)
    for line, start, raw in iter_lines(path, offset, first_line):
        value = line_object(raw)
        if value is None:
            if raw.endswith(b"\n"):
                value = parse_line(raw, name, line)
            else:
                try:
                    value = parse_line(raw, name, line)
                except MalformedInput:
                    notes.append(f"{path}:{line}: the last line is incomplete (no newline "
                                 "yet); left for the next import")
                    return
        yield line, start, raw, value


def _decide_database_window(target: ImportTarget, source: _Source,
                            mark: WindowMark | None) -> None:
    """Set `source.action` for a window of an OpenClaw database (the rules of the module
    docstring); its events are read unless a trusted mark shows the count unchanged
    (OpenClaw's transcript rows are only ever appended)."""
    assert source.database is not None
    session_id = source.window.session_id
    held = source.held = target.event_count(session_id) if source.stored is not None else 0
    trusted = mark is not None and mark.events == held
    if trusted and source.stored is not None \
            and source.database.event_count(session_id) == held:
        source.action, source.mark = "unchanged", mark
        return
    if source.stored is None:
        source.action = "new"  # its events are read as they are written
        return
    events = source.database_events = source.database.events(session_id)
    if len(events) < held:
        source.action = "replace"
        return
    if held:
        stored = target.events(session_id)
        positions = [held - 1] if trusted and mark is not None and \
            events[held - 1].seq == mark.highest_seq else range(held)
        if any(events[position].event != stored[position].event for position in positions):
            source.action = "replace"
            return
    source.action = "append" if len(events) > held else "unchanged"


# --------------------------------------------------------------------------------------
# The import
# --------------------------------------------------------------------------------------


def import_live_state(
    target: ImportTarget, state: Path, marks: StateMarks, *, received_at: float | None = None,
    whole_windows: bool = False,
) -> tuple[LiveReport, StateMarks]:
    """Bring `target` up to date with the state folder `state` in one transaction;
    return what was done and the new marks (to be written after this returns). A source
    that cannot be read is set aside and the import made without it (`set_aside.py`).
    `whole_windows`: hand each new window's transcript to the transaction whole
    (`ImportBatch`; for an import that reconciles after it)."""
    if not is_live_state(state):
        raise MalformedInput(str(state), None, NOT_A_STATE)
    aside = still_aside(state, marks.set_aside)
    fresh: dict[str, SetAside] = {}
    while True:
        excluded = frozenset({*aside, *fresh})
        try:
            report, new_marks = _import_once(target, state, marks, excluded, received_at,
                                              whole_windows)
            break
        except MalformedInput as error:
            name = source_of_error(state, error)
            if name is None or name in excluded:
                raise
            fresh[name] = set_aside_now(state, name, error)
    every = {**aside, **fresh}
    kept_files = {name: mark for name, mark in marks.files.items() if name in every}
    kept_databases = {name: windows for name, windows in marks.databases.items()
                      if name in every}
    report = replace(report, set_aside=tuple((name, entry.reason)
                                             for name, entry in sorted(every.items())),
                     newly_set_aside=tuple(entry.reason for entry in fresh.values()))
    return report, StateMarks({**new_marks.files, **kept_files},
                              {**new_marks.databases, **kept_databases}, every)


def _import_once(target: ImportTarget, state: Path, marks: StateMarks,
                 excluded: frozenset[str], received_at: float | None,
                 whole_windows: bool = False) -> tuple[LiveReport, StateMarks]:
    """One try of the import, leaving out the sources named in `excluded`."""
    notes: list[str] = []
    existing = stored_windows(target)
    by_id = {window.session_id: window for window in existing}
    databases: list[SqliteBackend] = []
    try:
        sources = _plan(state, by_id, databases, notes, excluded)
        _note_vanished(state, marks, sources, by_id, notes)
        for source in sources:
            source.stored = by_id.get(source.window.session_id)
            if source.from_database:
                _decide_database_window(target, source, marks.databases.get(
                    source.name, {}).get(source.window.session_id))
            else:
                with _source_errors(source.path):
                    _decide_file(target, source, marks.files.get(source.name))
        with target.transaction() as transaction:
            batch = ImportBatch(transaction, existing, received_at,
                                whole_windows=whole_windows)
            _write(target, batch, sources, notes)
            batch.finish()  # the replacements gathered (`replace_transcript`)
    finally:
        for database in databases:
            database.close()
    report = LiveReport(
        state=str(state),
        added=sum(source.action == "new" for source in sources),
        extended=sum(source.action == "append" and source.appended > 0 for source in sources),
        replaced=sum(source.action == "replace" for source in sources),
        updated=sum(source.action == "updated" for source in sources),
        unchanged=sum(source.action in ("unchanged", "append") and source.appended == 0
                      for source in sources),
        events=sum(source.appended for source in sources),
        notes=tuple(notes),
        unindexed_roles=tuple(sorted(batch.unindexed_roles.items())),
    )
    return report, _new_marks(sources)


def _plan(state: Path, stored: dict[str, SessionWindow], databases: list[SqliteBackend],
          notes: list[str], excluded: frozenset[str] = frozenset()) -> list[_Source]:
    """Every source of the state, agent by agent: database windows, then files; those
    `excluded` names (set aside) are left out, an agent's whole `sessions/` folder when
    its `sessions.json` is."""
    sources: list[_Source] = []
    excluded_paths = frozenset(state / name for name in excluded)
    for agent_folder in sorted((state / AGENTS_FOLDER).iterdir()):
        database_path = agent_folder.joinpath(*DATABASE_PATH)
        in_database: set[str] = set()
        if database_path.is_file() and database_path not in excluded_paths:
            name = database_path.relative_to(state).as_posix()
            # here: a state without an OpenClaw database loads no part of SQLite
            from engine.backends.sqlite.backend import SqliteBackend
            try:
                database = SqliteBackend.open_file(database_path)
            except StoreError as error:
                raise MalformedInput(str(database_path), None,
                                     f"cannot read the OpenClaw database: {error}") from None
            databases.append(database)
            for window in database.windows():
                in_database.add(window.session_id)
                sources.append(_Source(window, name, state, from_database=True,
                                       database=database))
        sessions = agent_folder / SESSIONS_FOLDER
        if sessions.is_dir() and sessions / INDEX_FILE not in excluded_paths:
            files = []
            for path, window in plan_agent_sessions(agent_folder.name, sessions, notes,
                                                    excluded_paths):
                if window.session_id in in_database:
                    notes.append(f'{path}: window "{window.session_id}" is read from '
                                 f"{database_path} (the file is its copy before the migration)")
                    continue
                files.append(_Source(window, path.relative_to(state).as_posix(), state))
            sources.extend(_follow_reset_archives(files, stored, notes))
    return sources


def _follow_reset_archives(files: list[_Source], stored: dict[str, SessionWindow],
                           notes: list[str]) -> list[_Source]:
    """Keep the store's windows where they are when the state moved on.

    * A reset renames `<id>.jsonl` to `<id>.jsonl.reset.<stamp>`: when the store holds
      window `<id>` read from `<id>.jsonl` (or from this archive, on a later import),
      that file is gone, and the archive is new to the store, the archive goes on being
      window `<id>` (not a second copy of it under `<id>.reset.<stamp>`); the links of
      the other windows follow.
    * A window the store holds under a key that the state no longer names (its file
      falls under `unknown`, as archives do once `sessions.json` points at a new
      session id) keeps its key, its link and its reason, and is retained.
    """
    planned = {source.window.session_id for source in files}
    renamed: dict[str, str] = {}
    for source in files:
        session_id = source.window.session_id
        base, marker, _ = session_id.partition(ARCHIVE_ID_MARKER)
        held = stored.get(base)
        if marker and session_id not in stored and base not in planned and held is not None \
                and source.window.session_key in (held.session_key, UNKNOWN_KEY) \
                and held.extra.get("sourceFile") in (f"{base}.jsonl", source.path.name):
            renamed[session_id] = base
            if held.extra.get("sourceFile") != source.path.name:
                notes.append(f'{source.path}: the reset archive of window "{base}" (its '
                             "file was renamed); imported as that window")
    for source in files:
        window = source.window
        session_id = renamed.get(window.session_id, window.session_id)
        previous = window.previous_session_id
        window = replace(window, session_id=session_id, previous_session_id=renamed.get(
            previous, previous) if previous is not None else None)
        held = stored.get(session_id)
        if held is not None and window.session_key == UNKNOWN_KEY != held.session_key:
            window = replace(window, session_key=held.session_key, current=False,
                             previous_session_id=held.previous_session_id, reason=held.reason)
            unnamed = f"{source.path}: no {INDEX_FILE} entry names it"
            notes[:] = [note for note in notes if not note.startswith(unnamed)]
        source.window = window
    return files


def _note_vanished(state: Path, marks: StateMarks, sources: list[_Source],
                   stored: dict[str, SessionWindow], notes: list[str]) -> None:
    """A note for each window an earlier import read from a file that is gone now (the
    window stays in the store: deleting it is not an import's job)."""
    planned = {source.window.session_id for source in sources}
    for name, mark in sorted(marks.files.items()):
        if mark.window not in planned and mark.window in stored:
            notes.append(f'{state / name}: gone; window "{mark.window}" stays in the store')


def _write(target: ImportTarget, batch: ImportBatch, sources: list[_Source],
           notes: list[str]) -> None:
    """Write every decision: retire the current windows the state no longer calls
    current, then add, append, replace and update (a replacement's events are gathered
    by the batch and written by `ImportBatch.finish`)."""
    current_in_state = {source.window.session_key: source.window.session_id
                        for source in sources if source.window.current}
    by_id = {source.window.session_id: source for source in sources}
    for window in list(batch.windows.values()):
        wanted = current_in_state.get(window.session_key)
        if window.current and wanted is not None and wanted != window.session_id:
            planned = by_id.get(window.session_id)
            retired = planned.window if planned is not None else window
            batch.update_window(replace(retired, current=False), str(planned.path)
                                if planned is not None else window.session_id)
            if planned is not None and planned.action == "unchanged":
                planned.action = "updated"
    for source in sources:
        if source.action == "new":
            batch.add_window(source.window, str(source.path), None)
        elif batch.windows.get(source.window.session_id) != source.window:
            batch.update_window(source.window, str(source.path))
            if source.action == "unchanged":
                source.action = "updated"
        if source.action == "replace":
            replace_transcript(target, batch, source, notes)
        elif source.action in ("new", "append"):
            batch.extend(source.window.session_id, str(source.path))
            source.appended = _append_source(target, batch, source, notes)
        elif source.mark is None:  # unchanged: a file's base is the mark it trusted
            source.mark = source.base if source.base is not None else _window_mark(source)


def replace_transcript(target: ImportTarget, batch: ImportBatch, source: _Source,
                       notes: list[str]) -> None:
    """Replace the transcript of the stored window of a source that says `replace` by
    all the source's events (its metadata is already written, when it changed): they are
    checked and gathered now, with their receipt stamps, and written by
    `ImportBatch.finish` through `BackendTransaction.replace_transcript`."""
    batch.replace_stored(source.window.session_id, str(source.path))
    source.appended = _append_source(target, batch, source, notes)


def _append_source(target: ImportTarget, batch: ImportBatch, source: _Source,
                   notes: list[str]) -> int:
    """Append the source's events past what the store holds; set its new mark; the count."""
    fresh = source.action in ("new", "replace")
    if source.from_database:
        start = 0 if fresh else source.held
        if source.action == "new":
            assert source.database is not None
            source.database_events = source.database.events(source.window.session_id)
        window_at = f'{source.path}: window "{source.window.session_id}" seq'  # not a path an event
        for stored in source.database_events[start:]:
            where = f"{window_at} {stored.seq}"
            problem = kinds.validation_problem(stored.event)
            if problem is not None:
                raise MalformedInput(where, None, problem)
            batch.append(source.window.session_id, stored.event, where, None,
                         created_at=stored.created_at)
        source.mark = _window_mark(source)
        appended = len(source.database_events) - start
        source.database_events = []  # written: no need to hold them until the commit
        return appended
    if source.seen is None:  # appending after a trusted mark: the ids the window holds
        source.seen = {}
        for stored in target.events(source.window.session_id):
            entry_id = kinds.non_blank_string(stored.event.get("id"))
            if entry_id is not None and stored.event.get("type") != kinds.SESSION_HEADER:
                source.seen[entry_id] = 0
    consumed: dict[str, Any] = {}
    before = batch.event_count
    with _source_errors(source.path):
        append_events(source.path, _consumed_events(source, notes, consumed),
                      source.window.session_id, batch, source.seen)
    source.seen = None  # written: its ids need not live until the commit (every source's would)
    appended = batch.event_count - before
    held = (0 if fresh else source.held) + appended
    if consumed:
        source.mark = FileMark(source.window.session_id, consumed["end"], consumed["line"],
                               consumed["start"], _sha256(consumed["raw"]), held)
    else:
        base = source.base if source.base is not None and not fresh \
            else _empty_mark(source.window.session_id)
        source.mark = replace(base, events=held)
    return appended


def _consumed_events(source: _Source, notes: list[str], consumed: dict[str, Any]
                     ) -> Iterator[tuple[int, dict[str, Any]]]:
    """The events of the lines read from the source's offset; `consumed` learns the end
    of the last line read (its start, bytes, number and end offset)."""
    offset, first = (0, 1) if source.action == "replace" else (source.offset, source.first_line)
    last: tuple[int, int, bytes] | None = None
    try:
        for line, start, raw, event in _complete_objects(source.path, offset, first, notes):
            last = (line, start, raw)
            if event is not None:
                yield line, event
    finally:
        if last is not None:
            line, start, raw = last
            consumed.update(end=start + len(raw), line=line, start=start, raw=raw)


def _window_mark(source: _Source) -> WindowMark:
    events = source.database_events
    return WindowMark(events[-1].seq if events else -1, len(events))


def _new_marks(sources: Iterable[_Source]) -> StateMarks:
    """The marks of every source after the import."""
    marks = StateMarks()
    for source in sources:
        if isinstance(source.mark, FileMark):
            marks.files[source.name] = source.mark
        elif isinstance(source.mark, WindowMark):
            marks.databases.setdefault(source.name, {})[source.window.session_id] = source.mark
    return marks
