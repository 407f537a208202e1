"""Allow `python -m engine ...` as a synonym for the `session-search` console script."""

from engine.cli import program

raise SystemExit(program())
