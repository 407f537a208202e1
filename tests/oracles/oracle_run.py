"""How an oracle test decides to skip, and where it leaves the counts it reports.

Owns: the skip rule of the OpenClaw oracle (`SESSION_SEARCH_OPENCLAW=skip` skips it, but
only outside CI; with `CI=true` a failure to install or start it fails the test, as the
PostgreSQL fixture does) and the list of summary lines printed after the run. Must not
touch: installing (`openclaw/installation.py`) or comparing (the test modules).

A plain module rather than `conftest.py`, so that the fixtures and the tests share one
copy of it (pytest imports a conftest under its own name).
"""

from __future__ import annotations

import os

import pytest

SKIP_VARIABLE = "SESSION_SEARCH_OPENCLAW"
SUMMARY_KEY = pytest.StashKey[list[str]]()


def running_in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


def skip_requested() -> bool:
    """`SESSION_SEARCH_OPENCLAW=skip`, which CI ignores."""
    return os.environ.get(SKIP_VARIABLE, "").strip().lower() == "skip" and not running_in_ci()


def skip_or_fail(reason: str) -> None:
    """Skip locally, fail in CI: an oracle that cannot run must never make CI green."""
    if running_in_ci():
        pytest.fail(f"CI=true but the OpenClaw oracle cannot run: {reason}", pytrace=False)
    pytest.skip(f"{reason} (set {SKIP_VARIABLE}=skip to skip it on purpose)")


def oracle_summary(config: pytest.Config) -> list[str]:
    """The lines printed in the "OpenClaw oracle" section after the run (tests add to it)."""
    return config.stash.setdefault(SUMMARY_KEY, [])
