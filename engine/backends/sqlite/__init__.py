"""The SQLite FTS5 backend's parts, one concept per module, below `engine.backends.sqlite_fts5`.

* `schema` — the database layout (upstream OpenClaw's agent tables plus our own), its
  pragmas, how a connection is opened, and which layout an existing file has;
* `writes` — the write path: one transaction's rows, gathered and written per table;
* `search` — the search statements of behaviour.md §5 and the hits they give.

`engine.backends.sqlite_fts5.SqliteBackend` puts them together behind the backend
protocol; nothing outside `engine.backends` imports these modules except the benchmark's
bare upstream comparator, which reads the schema so that it writes the same layout.
"""
