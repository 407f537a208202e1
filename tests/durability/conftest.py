"""The "Durability" section of the terminal summary: what the crash tests and the
corruption sweep counted, so that a CI log shows the figures a run stands for (kills per
backend, transactions acknowledged, outcomes of every damage), not only that it passed.

Owns: the `report_figure` fixture and the section (`tests.summary_section`). Must not
touch: what the tests do or assert.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.summary_section import SummarySection

SUMMARY = SummarySection("Durability")


@pytest.fixture
def report_figure(pytestconfig: pytest.Config) -> Callable[[str], None]:
    """`report_figure(line)`: add `line` to the Durability section of the summary."""
    return SUMMARY.lines(pytestconfig).append


@pytest.fixture
def store_folder(tmp_path: Path) -> Iterator[Path]:
    """A fresh folder for the store: on `/dev/shm` when it is a tmpfs with 256 MiB free
    (a process killed with SIGKILL loses no byte it wrote, so what fsync guards
    against is not what the crash tests look at; there an fsync costs nothing), else under `tmp_path`."""
    shared = Path("/dev/shm")
    try:
        usable = os.statvfs(shared).f_bavail * os.statvfs(shared).f_frsize >= 256 << 20
    except OSError:
        usable = False
    if not usable:
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="durability-", dir=shared))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    SUMMARY.write(terminalreporter, config)
