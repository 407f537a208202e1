"""The results stage: excerpts (`results.snippet`) and UTF-16 bounds (`results.bounds`).

Nothing here scores or matches; callers pass token spans and phrase instances in.
"""
