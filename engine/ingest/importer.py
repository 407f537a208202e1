"""`import_sources`: detect each source's form and load them all in ONE transaction.

Owns: the list of input forms, how a path is recognised as one of them, and the
all-or-nothing import. Must not touch: any format's details (`corpus.py`, `flat.py`) or
how a store keeps data.

Atomicity: the sources are detected first (a path that is no known form fails before
anything is opened), then every source is read inside one `target.transaction()`. The
first problem raises (`MalformedInput` with file and line, `DuplicateImport`, ...) out of
the `with` block, and the transaction discards everything written so far: nothing of the
import becomes visible. A second import of the same corpus fails with `DuplicateImport`
on its first window, so it can never create duplicates; with `replace=True` it replaces
the transcripts of the windows the store holds instead (`ImportBatch`).

The target is an `ImportTarget`: a `TranscriptWriter` (whose transaction has `put_window`
and `append_event`, see `engine.backends.protocol.BackendTransaction`) that can list its
windows: a `TranscriptStore`, the reference backend or the SQLite backend. Writing
through a backend indexes at commit (and is checked by `engine.transcript.validation`).

Progress (`progress(phase, done, total)`, optional): phase `"read"` counts the lines of
the sources read so far against `source_lines` (every form keeps a record per line), then
phase `"commit"` (total unknown) runs while the transaction commits (a reference
store indexes a large import as it reads it, and names its index files at the commit)
and reports `(1, 1)` when it has.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Protocol, runtime_checkable

from engine.backends.protocol import TranscriptWriter, require_capability
from engine.errors import MalformedInput, UsageError
from engine.ingest.batch import WHOLE_WINDOW_EVENTS, ImportBatch, ImportReport
from engine.ingest.corpus import SESSIONS_FILE, import_corpus, is_corpus_directory
from engine.ingest.flat import import_flat, is_flat_file
from engine.ingest.openclaw_state import import_openclaw_state, is_openclaw_state
from engine.model import SessionWindow
from engine.progress import PhasedProgress, StepProgress


@runtime_checkable
class ImportTarget(TranscriptWriter, Protocol):
    """Where an import writes: one transaction, after reading the windows already held
    (every backend, and a bare `TranscriptStore`, is one)."""

    def windows(self) -> list[SessionWindow]:
        """The session windows the target already holds."""
        ...


def stored_windows(target: object) -> list[SessionWindow]:
    """The windows `target` already holds, to refuse duplicates.

    A target that cannot list its windows or open a transaction is a `UsageError` naming
    what it lacks, since an import that cannot see the store could create duplicates.
    """
    return list(require_capability(target, ImportTarget, "import").windows())


#: Where the current OpenClaw keeps an agent's state, under `agents/<agentId>/` (read by
#: the live import, `live_state.py`, not by a SOURCE form).
DATABASE_IN_AGENT = "agent/openclaw-agent.sqlite"

#: form name -> (recogniser, reader), probed in this order.
FORMS: dict[str, tuple[Callable[[Path], bool], Callable[[Path, ImportBatch], None]]] = {
    "corpus": (is_corpus_directory, import_corpus),
    "flat": (is_flat_file, import_flat),
    "openclaw-state": (is_openclaw_state, import_openclaw_state),
}


def detect_form(path: Path) -> str:
    """The input form of `path`, or `MalformedInput` saying what was expected."""
    if not path.exists():
        raise MalformedInput(str(path), None, "no such file or directory")
    for name, (recognises, _) in FORMS.items():
        if recognises(path):
            return name
    if path.is_dir():
        hint = ("; its agents' openclaw-agent.sqlite databases are imported with "
                "--openclaw-state PATH" if any(path.glob(f"agents/*/{DATABASE_IN_AGENT}"))
                else "")
        raise MalformedInput(str(path), None,
                             f"not a corpus directory (no {SESSIONS_FILE} in it) nor an "
                             f"OpenClaw state directory (no agents/<agentId>/sessions/){hint}")
    raise MalformedInput(str(path), None,
                         "not an importable file (a flat messages file is named *.jsonl)")


def import_sources(
    target: ImportTarget,
    sources: Sequence[str | os.PathLike[str]],
    *,
    received_at: float | None = None,
    progress: PhasedProgress | None = None,
    replace: bool = False,
    whole_windows: bool = False,
    held_events: int = WHOLE_WINDOW_EVENTS,
) -> ImportReport:
    """Import every source into `target` in one transaction; return what was added.

    `received_at` (epoch ms) is recorded as every event's `created_at`; None lets the
    store use its clock. `progress` is described in the module docstring. With
    `replace`, a window the store holds gets the transcript the sources give it
    (`ImportBatch`) instead of being refused as a duplicate. `whole_windows`: each new
    window's transcript file is handed to the transaction whole, for an import that
    reconciles after it (`ImportBatch.whole_transcript`: a rewound window is then indexed
    once, not left dirty for that reconcile: by the SQLite backend as it reads it, by a
    reference store whose import streams with its commit); a window longer
    than `held_events` events is appended event by event from there on.
    """
    if not sources:
        raise UsageError("nothing to import: give at least one SOURCE")
    plan = [(Path(source), detect_form(Path(source))) for source in sources]
    existing = stored_windows(target)
    reading: StepProgress | None = None
    expected = 0
    if progress is not None:
        expected = source_lines(path for path, _ in plan)
        progress("read", 0, expected)
        reading = partial(progress, "read")
    with target.transaction() as transaction:
        batch = ImportBatch(transaction, existing, received_at, reading, expected,
                            replace=replace, read_events=getattr(target, "events", None),
                            whole_windows=whole_windows, held_events=held_events)
        for path, form in plan:
            FORMS[form][1](path, batch)
        batch.finish()
        batch.report_progress()
        if progress is not None:
            progress("commit", 0, None)
    if progress is not None:
        progress("commit", 1, 1)
    return ImportReport(
        sources=tuple((str(path), form) for path, form in plan),
        windows=batch.window_count,
        events=batch.event_count,
        notes=tuple(batch.notes),
        unindexed_roles=tuple(sorted(batch.unindexed_roles.items())),
        replaced=batch.replaced_count,
        extended=len(batch.extended_ids),
    )


def source_lines(paths: Iterable[Path]) -> int:
    """The lines of every `*.jsonl` file among `paths` or under them: what the readers
    read, one record per line (an OpenClaw `sessions.json` index is not counted). For a
    progress bar, not a check."""
    total = 0
    for path in paths:
        files = [path] if path.is_file() else sorted(path.rglob("*.jsonl"))
        for file in files:
            total += _line_count(file)
    return total


def _line_count(path: Path) -> int:
    """The lines of a file, a last line without a newline included."""
    count = 0
    last = b"\n"
    with open(path, "rb") as file:
        while chunk := file.read(1 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")
