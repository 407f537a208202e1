"""session-search: a pure-Python reference engine for session transcript search.

This package re-exports nothing heavy at import time; see README.md for the map of
sub-packages (analysis, codec, transcript, index, query, score, results, backends,
ingest, diagnostics, cli) and the direction in which they may import each other.
"""

__version__ = "0.1.0"
