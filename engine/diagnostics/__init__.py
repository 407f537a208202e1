"""Diagnostics: readable views and checks of engine files; they never repair anything.

* `dump.py`   — any store file in readable form (`session-search dump`), through `codec` only;
* `verify.py` — rebuilds the index from the transcripts and compares it with the committed
  one, for every partition of a store (a SQLite partition's check is
  `engine.backends.sqlite.verify`, beside its backend).
"""
