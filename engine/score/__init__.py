"""The score stage: FTS5's `bm25()` as pure functions of numbers (`score.bm25`).

Nothing here reads an index or a message; callers pass counts in.
"""
