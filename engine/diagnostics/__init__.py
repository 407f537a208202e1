"""Diagnostics: readable views and checks of engine files; they never repair anything.

* `dump.py`   — any store file in readable form (`session-search dump`), through `codec` only.
"""
