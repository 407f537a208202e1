"""Importers: load transcripts from files into a store, all or nothing.

Map of the package:

* `into_store.py` — `import_into_store(folder, backend, paths)`: the `import` command's job
  on a store folder (create the store if needed, import, reconcile, count; undo a new
  store on failure);
* `importer.py` — `import_sources(target, paths)`: detects each path's form and loads every
  source in ONE transaction (any error: nothing is visible);
* `corpus.py`   — the corpus directory: `sessions.jsonl` + `transcripts/<sessionId>.jsonl`;
* `flat.py`     — the flat messages file (one message per line), for any chat log;
* `openclaw_state.py` — an OpenClaw state directory (`agents/<id>/sessions/` files);
* `live_state.py` — the live import of an OpenClaw state (files and its agents'
                  `openclaw-agent.sqlite`, read-only): what is new since the last run,
                  `live_import_into_store` in `into_store.py` runs it on a store folder;
* `live_report.py` — what one live import did (`LiveReport`);
* `live_marks.py` — how far each source was imported (`live-import.json` in the store);
* `records.py`  — the `sessions.jsonl` window record <-> `SessionWindow`;
* `batch.py`    — rules shared by every form (no duplicate windows, one current window per
                  key) and the import report;
* `jsonl.py`    — strict JSON Lines reading with file and line in every error.

The formats are documented for users in `corpora/README.md`. Importers depend on
`engine.transcript` (validation) and write through the `BackendTransaction` methods only,
so they load a bare `TranscriptStore` and any backend that offers the same methods.
"""

from engine.ingest.batch import ImportReport
from engine.ingest.importer import (
    FORMS,
    ImportTarget,
    detect_form,
    import_sources,
    stored_windows,
)
from engine.ingest.into_store import (
    ImportOutcome,
    import_into_store,
    live_import_into_store,
)
from engine.ingest.live_report import LiveReport

__all__ = ["FORMS", "ImportOutcome", "ImportReport", "ImportTarget", "LiveReport",
           "detect_form", "import_into_store", "import_sources", "live_import_into_store",
           "stored_windows"]
