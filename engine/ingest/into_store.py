"""`import_into_store`: import sources into the store in a folder, creating it if needed.

Owns: the whole `session-search import` job below the command line — which backend a
folder's store has or gets, creating the store, the one-transaction import
(`import_sources`), the reconcile after it, the counts, and removing a store this call
created when the import fails. Must not touch: formats (the readers in this package),
how a backend stores or reconciles (`engine.backends`), or printing (`engine.cli`).

Rules:
* an absent or empty folder gets a new store for `backend_name` (default
  `registry.DEFAULT_BACKEND`); an existing store keeps its own backend, and naming
  another one is a `UsageError` that names both;
* the sources' forms are checked first, so a wrong SOURCE never leaves a new store;
* on any error nothing is imported, and a store this call had just created is removed
  again (the folder itself stays when it existed before);
* then, unless `reconcile=False`, the windows the import left dirty are rebuilt
  (behaviour.md §8.1: imported history and rewinds are indexed by reconcile, as
  `openclaw doctor` imports are), through `maintenance.reconcile_when_needed`.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.backends.maintenance import reconcile_when_needed
from engine.backends.registry import DEFAULT_BACKEND, existing_backend, open_backend
from engine.errors import UsageError
from engine.ingest.batch import ImportReport
from engine.ingest.importer import detect_form, import_sources


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    """What one `import_into_store` did: the backend, the report, the reconcile, the counts."""

    backend: str
    imported: ImportReport
    reconciled: int
    stats: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        """`{"backend", "imported", "reconciled", "stats"}`, the report as its JSON."""
        return {"backend": self.backend, "imported": self.imported.to_json(),
                "reconciled": self.reconciled, "stats": self.stats}


def import_into_store(
    store_path: Path,
    backend_name: str | None,
    sources: Sequence[str | Path],
    *,
    reconcile: bool = True,
) -> ImportOutcome:
    """Open (or create) the store at `store_path`, import `sources`, maybe reconcile."""
    for source in sources:
        detect_form(Path(source))
    existing = existing_backend(store_path)
    if existing is not None and backend_name is not None and existing != backend_name:
        raise UsageError(f"{store_path}: store was created for backend {existing!r}, "
                         f"not {backend_name!r}")
    name = existing or backend_name or DEFAULT_BACKEND
    create = existing is None
    folder_existed = store_path.exists()
    backend = open_backend(store_path, backend=name, create=create, writer=True)
    try:
        report = import_sources(backend, sources)
        reconciled = reconcile_when_needed(backend) if reconcile else 0
        counts = backend.stats()
    except BaseException:
        backend.close()
        if create:
            _remove_new_store(store_path, folder_existed)
        raise
    backend.close()
    return ImportOutcome(backend=name, imported=report, reconciled=reconciled, stats=counts)


def _remove_new_store(store_path: Path, folder_existed: bool) -> None:
    """Undo the creation of a store whose first import failed (the folder was empty)."""
    if not folder_existed:
        shutil.rmtree(store_path, ignore_errors=True)
        return
    for child in store_path.iterdir():
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()
