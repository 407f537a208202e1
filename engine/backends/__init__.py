"""Backends: the reference engine, SQLite FTS5 and PostgreSQL behind one protocol, each a
folder of its own (`reference/`, `sqlite/`, `postgres/`), with its verification beside it.

* `protocol`: the capabilities a backend offers (writing, reading transcripts, searching,
  maintenance), as `typing.Protocol`s;
* `forward_indexing`, `replacement`: rules both backends share (which appends index
  forward, when a transcript replacement defers its rebuild);
* `reconcile_loop`: reconcile in transactions of bounded size, the loops the database
  backends (SQLite, PostgreSQL) share;
* `verify_report`: the report both backends' verifications fill.

Owns: every import of `sqlite3` and `psycopg` (but one: the benchmark's bare upstream
comparator, `engine.bench.sqlite_kernel` and `engine.bench.bare_write`, runs its own SQL
on the SQLite backend's files, since it is what the backend is measured against). Must
not touch: the rules themselves (query policy, bm25, snippet) beyond calling the shared
implementations or the real database's own functions, nor the store of partitions that
wraps one backend per agent (`engine.store`, a layer above).
"""
