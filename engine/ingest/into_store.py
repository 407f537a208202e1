"""`import_into_store`: import sources into the store in a folder, creating it if needed.

Owns: the whole `session-search import` job below the command line — the
one-transaction import (`import_sources`), the reconcile after it, the counts, and
removing a store this call created when the import fails. Must not touch: formats (the
readers in this package), which paths can hold a store and how one is opened or created
(`engine.store.registry.open_or_create_store`, shared by every command), how a
backend stores or reconciles (`engine.backends`), or printing (`engine.cli`).

Rules:
* an absent or empty folder gets a new store for `backend_name` (default
  `registry.DEFAULT_BACKEND`); an existing store keeps its own backend, and naming
  another one is a `StorePathError` that names both. A new store's parent folder must
  exist unless `create_parents=True` (`MissingParentFolder`);
* the sources' forms are checked first, so a wrong SOURCE never leaves a new store;
* on any error nothing is imported, and a store this call had just created is removed
  again, with the parent folders it made (a folder that existed before stays); the
  error reported is the import's own (a failed close after it is a note). A close that
  fails after the import committed (a full disk refusing the index files) is an error
  that says the import was committed;
* then, unless `reconcile=False`, the windows the import left dirty are rebuilt
  (behaviour.md §8.1: imported history and rewinds are indexed by reconcile, as
  `openclaw doctor` imports are), through `maintenance.reconcile_when_needed`;
* an import that replaced a large share of the store's windows (`--replace`,
  `COMPACT_AFTER_REPLACING`) then compacts the store (`compact_after_replacing`), so
  the old transcripts do not stay beside the new ones until `compact`;
* `live_import_into_store(folder, backend, state)` is the same job for the live import
  of an OpenClaw state (`live_state.py`): it also reads the store's marks before and
  writes them after the commit (`live_marks.py`), and a store it made is kept once the
  import committed; a source it sets aside (`set_aside.py`) is one `warn` line, given
  by the import that set it aside only. A Ctrl-C (or SIGTERM) that comes once its
  commit has returned (while the marks are written, the store reconciled or closed)
  is raised as `InterruptedAfterCommit`, a `KeyboardInterrupt` that carries the
  committed report, so that a caller that sums its imports (`watch`) counts what the
  store now holds;
* `progress(phase, done, total)` sees the phases of `import_sources` ("read", "commit"),
  then "reconcile" (windows rebuilt of those needing it).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from engine.errors import MalformedInput, StoreError
from engine.ingest.batch import ImportReport
from engine.ingest.importer import detect_form, import_sources
from engine.ingest.live_marks import StateMarks, read_marks, state_name, write_marks
from engine.ingest.live_report import LiveReport
from engine.ingest.live_state import NOT_A_STATE, import_live_state, is_live_state
from engine.progress import PhasedProgress
from engine.store.maintenance import reconcile_when_needed
from engine.store.partitioned import PartitionedStore
from engine.store.registry import open_or_create_store


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    """What one `import_into_store` (an `ImportReport`) or `live_import_into_store` (a
    `LiveReport`) did: the backend, whether the store is new, the report, the
    reconcile, the counts."""

    backend: str
    imported: ImportReport | LiveReport
    reconciled: int
    stats: dict[str, int]
    created: bool = False

    def to_json(self) -> dict[str, Any]:
        """`{"backend", "created", "imported", "reconciled", "stats"}`, the report as its JSON."""
        return {"backend": self.backend, "created": self.created,
                "imported": self.imported.to_json(), "reconciled": self.reconciled,
                "stats": self.stats}


def import_into_store(
    store_path: Path,
    backend_name: str | None,
    sources: Sequence[str | Path],
    *,
    reconcile: bool = True,
    create_parents: bool = False,
    progress: PhasedProgress | None = None,
    replace: bool = False,
    warn: Callable[[str], None] | None = None,
) -> ImportOutcome:
    """Open (or create) the store at `store_path`, import `sources` (with `replace`,
    replacing the transcripts of the windows it holds), maybe reconcile; `warn` is told
    of the folders the store ignores (`open_or_create_store`)."""
    for source in sources:
        detect_form(Path(source))

    def job(backend: PartitionedStore, committed: list[object]) -> tuple[ImportReport, int]:
        report = import_sources(backend, sources, progress=progress, replace=replace,
                                whole_windows=reconcile)
        reconciling = partial(progress, "reconcile") if progress is not None else None
        reconciled = reconcile_when_needed(backend, reconciling) if reconcile else 0
        return compact_after_replacing(backend, report), reconciled

    return _on_store(store_path, backend_name, create_parents, job, warn)


#: The share of a store's windows an import must replace before it compacts the store.
COMPACT_AFTER_REPLACING = 0.25


def compact_after_replacing(backend: PartitionedStore, report: ImportReport) -> ImportReport:
    """After an import that replaced at least `COMPACT_AFTER_REPLACING` of the store's
    windows (`--replace` of a whole corpus), compact the store, so that it does not keep
    the old transcripts beside the new ones until `compact` is run; the report says what
    was reclaimed. A failure to compact is a note: the import is committed either way."""
    windows = backend.stats().get("windows", 0)
    if not report.replaced or report.replaced < COMPACT_AFTER_REPLACING * windows:
        return report
    try:
        outcome = backend.compact()
    except StoreError as error:
        note = f"the store was not compacted after the replacement ({error}); run compact"
        return replace(report, notes=(*report.notes, note))
    return replace(report, reclaimed=outcome.bytes_reclaimed)


def live_import_into_store(
    store_path: Path,
    backend_name: str | None,
    state: Path,
    *,
    reconcile: bool = True,
    create_parents: bool = False,
    warn: Callable[[str], None] | None = None,
) -> ImportOutcome:
    """Bring the store at `store_path` (made when absent) up to date with the OpenClaw
    state folder `state` (`engine.ingest.live_state`), write the marks, maybe reconcile
    (`warn`: as for `import_into_store`).

    On an error nothing of this import is written, and a store made here is removed
    again unless the import had committed. The marks are written after the commit; a
    failure to write them is a note (the next import compares the sources with the
    store instead)."""
    if not is_live_state(state):
        raise MalformedInput(str(state), None, NOT_A_STATE)

    def job(backend: PartitionedStore, committed: list[object]) -> tuple[LiveReport, int]:
        notes: list[str] = []
        marks = read_marks(store_path, notes)
        name = state_name(state)
        report, state_marks = import_live_state(backend, state, marks.get(name, StateMarks()),
                                                whole_windows=reconcile)
        committed.append(report)
        for reason in report.newly_set_aside:
            if warn is not None:
                warn(f"{reason}; this source is set aside (the rest was imported) until "
                     "it changes")
        try:
            write_marks(store_path, {**marks, name: state_marks})
        except StoreError as error:
            notes.append(f"the import's marks could not be written ({error}); the next "
                         "import compares every source with the store")
        if notes:
            report = replace(report, notes=(*notes, *report.notes))
        return report, reconcile_when_needed(backend) if reconcile else 0

    return _on_store(store_path, backend_name, create_parents, job, warn)


def _on_store(
    store_path: Path, backend_name: str | None, create_parents: bool,
    job: Callable[[PartitionedStore, list[object]], tuple[ImportReport | LiveReport, int]],
    warn: Callable[[str], None] | None = None,
) -> ImportOutcome:
    """Open (or create) the store, run `job(backend, committed)` (the report and the
    windows reconciled), count, close. On an error the store is closed and, when this
    call made it and `job` did not say it committed (by appending its report to
    `committed`), removed again; an interrupt after `job` said so is raised as
    `InterruptedAfterCommit` with that report."""
    outermost_new = _outermost_missing(store_path)
    opened = open_or_create_store(store_path, "import", backend=backend_name,
                                  create_parents=create_parents, warn=warn)
    backend = opened.backend
    committed: list[object] = []
    try:
        report, reconciled = job(backend, committed)
        counts = backend.stats()
    except BaseException as error:
        try:
            backend.close()
        except StoreError as secondary:  # the import's own error is the one to report
            error.add_note(f"closing the store also failed: {secondary}")
        if opened.created and not committed:
            _remove_new_store(store_path, outermost_new)
        if isinstance(error, KeyboardInterrupt) and committed:
            raise InterruptedAfterCommit(committed[-1]) from error
        raise
    try:
        backend.close()
    except StoreError as error:
        raise StoreError(f"{error} (the import was committed before this failure; what "
                         "the store could not save at close is rebuilt from its "
                         "transcripts when it is next opened)") from None
    except KeyboardInterrupt as error:  # what close did not save is rebuilt at next open
        raise InterruptedAfterCommit(report) from error
    return ImportOutcome(backend=opened.name, imported=report, reconciled=reconciled,
                         stats=counts, created=opened.created)


class InterruptedAfterCommit(KeyboardInterrupt):
    """A Ctrl-C (or SIGTERM) that came after an import had committed: `report` (what it
    committed) is in the store, whatever of the steps after the commit it cut."""

    def __init__(self, report: object) -> None:
        super().__init__()
        self.report = report


def _outermost_missing(store_path: Path) -> Path | None:
    """The outermost of `store_path` and its parents that does not exist yet (None when
    the store folder itself exists): what undoing a new store removes."""
    missing = None
    folder = store_path
    while folder != folder.parent and not _exists(folder):
        missing = folder
        folder = folder.parent
    return missing


def _exists(path: Path) -> bool:
    """Whether `path` exists; one that cannot be looked at counts as existing (opening
    the store then says why it cannot be used)."""
    try:
        return path.exists()
    except OSError:
        return True


def _remove_new_store(store_path: Path, outermost_new: Path | None) -> None:
    """Undo the creation of a store whose first import failed: remove the folders this
    import made, or empty the folder that was there (and empty) before."""
    if outermost_new is not None:
        shutil.rmtree(outermost_new, ignore_errors=True)
        return
    for child in store_path.iterdir():
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()


