"""The "Durability" section of the terminal summary: what the crash tests and the
corruption sweep counted, so that a CI log shows the figures a run stands for (kills per
backend, transactions acknowledged, outcomes of every damage), not only that it passed.

Owns: the `report_figure` fixture and the section (`tests.summary_section`). Must not
touch: what the tests do or assert.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.summary_section import SummarySection

SUMMARY = SummarySection("Durability")


@pytest.fixture
def report_figure(pytestconfig: pytest.Config) -> Callable[[str], None]:
    """`report_figure(line)`: add `line` to the Durability section of the summary."""
    return SUMMARY.lines(pytestconfig).append


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    SUMMARY.write(terminalreporter, config)
