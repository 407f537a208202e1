"""The suite's one rule for a missing server, browser or tool: skip locally, fail in CI.

Owns: `running_in_ci` (`CI=true`) and `skip_or_fail`, which every test that needs
something outside Python (PostgreSQL, extra clusters, Chromium) calls when it is not
there, so that a CI run can never turn green by skipping what it could not run.
"""

from __future__ import annotations

import os

import pytest


def running_in_ci() -> bool:
    """Whether the suite runs under CI (`CI=true`)."""
    return os.environ.get("CI", "").strip().lower() == "true"


def skip_or_fail(reason: str, what: str) -> None:
    """Skip with `reason` locally; under CI fail, saying that `what` cannot run."""
    if running_in_ci():
        pytest.fail(f"CI=true but {what}: {reason}", pytrace=False)
    pytest.skip(reason)
