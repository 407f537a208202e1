"""Which sources of an OpenClaw state a live import sets aside, and when it tries them again.

Owns: the rule that one bad source (a transcript file with a malformed line, a
`sessions.json` that is not JSON, a database that cannot be read) does not stop the
live import of the rest: which source an import error names (`source_of_error`), a
source's signature (the size and modification time of its files), and which earlier
set-aside sources stay aside (`still_aside`: those whose files have not changed since).
Must not touch: deciding and writing what a source holds (`live_state`), the marks
file's shape (`live_marks`, where `SetAside` is kept between imports), printing (the
caller gets each new warning once, through its `warn`).

Why. `watch` runs the live import every few seconds over a folder that another program
writes. If one file of one agent could stop the import, every pass would fail on it,
files of other agents would never be imported, and the same warning would come back at
every pass. So a source that fails is left out of this import (and only it: everything
else is written, in one transaction as always), its warning is given once, and it is
tried again as soon as its files change (OpenClaw appends the rest of a line, or a user
fixes it).

What is set aside is a whole source: a transcript file (its window is not added, or not
extended, until the file reads), a database (every window of it), or an agent's
`sessions.json` (then the agent's whole `sessions/` folder, since its keys come from
that file: importing its transcripts under `unknown` would file them under the wrong
key).
"""

from __future__ import annotations

from pathlib import Path

from engine.errors import MalformedInput
from engine.ingest.live_marks import SetAside

#: The suffix SQLite gives a database's write-ahead log (its newest changes).
WAL_SUFFIX = "-wal"


def signature(path: Path) -> tuple[tuple[int, int], ...]:
    """The size and modification time (ns) of `path` and, when there is one, of its
    write-ahead log: what changes when anyone writes to the source. A missing file has
    none."""
    pairs = []
    for candidate in (path, path.with_name(path.name + WAL_SUFFIX)):
        try:
            status = candidate.stat()
        except OSError:
            continue
        pairs.append((status.st_size, status.st_mtime_ns))
    return tuple(pairs)


def source_of_error(state: Path, error: MalformedInput) -> str | None:
    """The source (its path relative to `state`, with `/`) that `error` names, or None
    when it names nothing inside the state folder (then it is not one source's fault).

    >>> source_of_error(Path("/s"), MalformedInput("/s/agents/a/sessions/x.jsonl", 3, "bad"))
    'agents/a/sessions/x.jsonl'
    >>> source_of_error(Path("/s"), MalformedInput('/s/agents/a/agent/db.sqlite: window "w"', None, "bad"))
    'agents/a/agent/db.sqlite'
    >>> source_of_error(Path("/s"), MalformedInput("/elsewhere/x.jsonl", 1, "bad")) is None
    True
    """
    named = Path(error.path.split(": ", 1)[0])
    try:
        relative = named.relative_to(state)
    except ValueError:
        return None
    return relative.as_posix() if relative.parts else None


def still_aside(state: Path, earlier: dict[str, SetAside]) -> dict[str, SetAside]:
    """The sources set aside before whose files have not changed since (the others are
    tried again)."""
    return {name: entry for name, entry in earlier.items()
            if signature(state / name) == entry.signature}


def set_aside_now(state: Path, name: str, error: MalformedInput) -> SetAside:
    """The entry of a source set aside by this import because of `error`."""
    return SetAside(signature(state / name), str(error))
