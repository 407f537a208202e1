"""The "Durability" section of the terminal summary: what the crash tests and the
corruption sweep counted, so that a CI log shows the figures a run stands for (kills per
backend, transactions acknowledged, outcomes of every damage), not only that it passed.

Owns: the summary lines (`durability_summary`) and their section. Must not touch: what
the tests do or assert.
"""

from __future__ import annotations

import pytest

SUMMARY_KEY = pytest.StashKey[list[str]]()


def durability_summary(config: pytest.Config) -> list[str]:
    """The summary lines of this run (a test appends one line per figure it stands for)."""
    return config.stash.setdefault(SUMMARY_KEY, [])


@pytest.fixture
def report_figure(pytestconfig: pytest.Config):
    """`report_figure(line)`: add `line` to the Durability section of the summary."""
    return durability_summary(pytestconfig).append


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    lines = config.stash.get(SUMMARY_KEY, [])
    if lines:
        terminalreporter.section("Durability")
        for line in lines:
            terminalreporter.write_line(line)
