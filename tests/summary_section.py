"""A section of lines the tests add to pytest's terminal summary, so that a CI log shows
the figures a run stands for (oracle counts, kills, damages), not only that it passed.

Owns: where a section's lines are kept during the run (the config's stash) and how they
are written at the end. Must not touch: what any test counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest


@dataclass(frozen=True, slots=True)
class SummarySection:
    """One titled section; a conftest writes it from `pytest_terminal_summary`."""

    title: str
    key: pytest.StashKey[list[str]] = field(default_factory=pytest.StashKey)

    def lines(self, config: pytest.Config) -> list[str]:
        """The section's lines in this run (a test appends one per figure)."""
        return config.stash.setdefault(self.key, [])

    def write(self, terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
        """Write the section, when a test added a line to it."""
        lines = config.stash.get(self.key, [])
        if lines:
            terminalreporter.section(self.title)
            for line in lines:
                terminalreporter.write_line(line)
