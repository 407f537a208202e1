"""The score stage: FTS5's `bm25()` as pure functions of numbers (`score.bm25`), and the
explanation of one row's score for `explain` (`score.bm25_explanation`).

Nothing here reads an index or a message; callers pass counts in.
"""
