"""The transcript: the source of truth from which every index is derived.

Map of the package (each module owns one concept; the index never lives here):

* `events.py`     — event kinds (message, leaf control, reset, compaction, custom_message,
                    the session header, anything else kept as it came) and their validation;
* `tree.py`       — the `id`/`parentId` tree of a window, the leaf rule and the active path
                    (computed from the events, never stored twice);
* `windows.py`    — session keys, session windows, their reasons and the chain of windows
                    under a key (current versus retained);
* `projection.py` — what is searchable: index entries from the active path (§2.3);
* `store.py`      — the durable `TranscriptStore` (windows and events, append order `seq`).
* `log.py`        — the transcript log: its append-only files, `LogReader`, `LogWriter`.

"Segment" means an index segment (`engine/index/segment*.py`) only; the transcript's files
are the log's *log files*, still named `transcripts/segment-NNNNNN.log` on disk.

Import direction: `events` ← `tree` ← `projection`; `windows` stands alone; nothing here
imports `engine.index`, `engine.query` or a backend. This `__init__` re-exports nothing,
so importing one module does not load the others.
"""
