"""The SQLite FTS5 backend, one concept per module.

* `schema` — the database layout (upstream OpenClaw's agent tables plus our own) and
  which layout an existing file has;
* `connection` — the pragmas, and how a connection is opened (a new file made whole, the
  writer, a reader that never writes a byte of the database's folder);
* `refusals` — what an error SQLite raised means: damage to the file, or the system
  refusing a read;
* `storable` — which text SQLite can store (no lone surrogate);
* `writes` — the write path: one transaction's rows, gathered and written per table;
* `search` — the search statements of behaviour.md §5 and the hits they give;
* `backend` — `SqliteBackend`, which puts them together behind the backend protocol;
* `verify` — the verification of a SQLite partition against its own transcripts.

Nothing outside `engine.backends` imports the parts but `backend` except the benchmark's
bare upstream comparator, which reads the schema (and `storable`) so that it writes the
same layout.
"""
