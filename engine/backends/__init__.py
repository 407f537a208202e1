"""Backends: the reference engine, SQLite FTS5 and PostgreSQL behind one protocol, and
the partitioned store that keeps one of them per agent (`partitioned.py`).

Owns: every import of `sqlite3` and `psycopg` (but one: the benchmark's bare upstream
comparator, `engine.bench.sqlite_kernel` and `engine.bench.bare_write`, runs its own SQL
on the SQLite backend's files, since it is what the backend is measured against). Must
not touch: the rules themselves (query policy, bm25, snippet) beyond calling the shared
implementations or the real database's own functions.
"""
