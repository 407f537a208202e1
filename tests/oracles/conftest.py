"""Fixtures of the oracle tests: the installed OpenClaw, and the summary they print.

Owns: the session-wide `openclaw_installation` fixture and the "OpenClaw oracle" section
of the terminal summary. Must not touch: the skip rule (`oracle_run`), where the
software is installed (`openclaw/installation.py`) or the comparison (the test module).
"""

from __future__ import annotations

import time

import pytest

from tests.oracles.openclaw.installation import (
    CACHE_VARIABLE,
    Installation,
    InstallationError,
    cache_root,
    ensure_installed,
)
from tests.oracles.oracle_run import (
    SKIP_VARIABLE,
    SUMMARY,
    oracle_summary,
    skip_or_fail,
    skip_requested,
)


@pytest.fixture(scope="session")
def openclaw_installation(pytestconfig: pytest.Config) -> Installation:
    """Node 24 and `openclaw` from the npm registry, installed once into the cache."""
    if skip_requested():
        pytest.skip(f"{SKIP_VARIABLE}=skip")
    started = time.monotonic()
    try:
        installation = ensure_installed()
    except InstallationError as error:
        skip_or_fail(f"installing into {cache_root()} failed ({CACHE_VARIABLE} moves it): {error}")
    oracle_summary(pytestconfig).append(
        f"install ready in {time.monotonic() - started:.1f} s ({installation.package})")
    return installation


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    SUMMARY.write(terminalreporter, config)
