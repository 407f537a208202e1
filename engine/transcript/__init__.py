"""The transcript: the source of truth from which every index is derived.

Map of the package (each module owns one concept; the index never lives here):

* `events.py`     — event kinds (message, leaf control, reset, compaction, custom_message,
                    the session header, anything else kept as it came) and their validation;
* `tree.py`       — the `id`/`parentId` tree of a window, the leaf rule and the active path
                    (computed from the events, never stored twice);
* `windows.py`    — session keys, session windows, their reasons and the chain of windows
                    under a key (current versus retained);
* `projection.py` — what is searchable: index entries from the active path (§2.3);
* `validation.py` — what a store accepts: the checks every backend runs before a write;
* `store.py`      — the durable `TranscriptStore` (windows and events, append order `seq`).

Import direction: `events` ← `tree` ← `projection`; `windows` stands alone; nothing here
imports `engine.index`, `engine.query` or a backend. This `__init__` re-exports nothing,
so importing one module does not load the others.
"""
