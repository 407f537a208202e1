"""The results stage: excerpts and their bounds.

Modules: `snippet` (FTS5's `snippet()` window, the clear version), `snippet_explanation`
(how a window was chosen, for `explain`), `fast_snippet` (the same window found by
bisection, for rows with many hits; `snippet` is its test oracle) and `bounds` (the 500
UTF-16 unit cut). Nothing here scores or matches; callers pass token spans and phrase
instances in.
"""
