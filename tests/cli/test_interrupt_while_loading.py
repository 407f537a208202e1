"""A Ctrl-C while the command line is still loading its modules ends the program the way
one during a command does: `session-search: interrupted`, exit status 1, no traceback.

The interrupt is made to land at a known point, deterministically: a finder placed first
on `sys.meta_path` raises `KeyboardInterrupt` when the named module is imported (which
is what Python does when SIGINT arrives during that import).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

INTERRUPTING_RUN = r"""
import sys

class InterruptOnImport:
    def find_spec(self, name, path=None, target=None):
        if name == sys.argv[1]:
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, InterruptOnImport())
from engine.cli import main
raise SystemExit(main(["--version"]))
"""


@pytest.mark.parametrize("module", ["argparse", "engine.cli.commands", "engine.gc_policy"])
def test_a_ctrl_c_while_the_command_line_loads_is_one_line(module: str) -> None:
    completed = subprocess.run([sys.executable, "-c", INTERRUPTING_RUN, module], cwd=ROOT,
                               capture_output=True, text=True, timeout=60, check=False)
    assert (completed.returncode, completed.stderr) == (1, "session-search: interrupted\n")


def test_the_same_run_without_an_interrupt_prints_the_version() -> None:
    completed = subprocess.run([sys.executable, "-c", INTERRUPTING_RUN, "no.such.module"],
                               cwd=ROOT, capture_output=True, text=True, timeout=60,
                               check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip()


#: The program's entry, then a Ctrl-C once it has returned (what a user's late Ctrl-C, or
#: a signal racing the end of an import, does while the interpreter shuts down).
LATE_INTERRUPT_RUN = r"""
import os, signal, sys
from engine.cli import program
sys.argv = ["session-search", "search", "--store", sys.argv[1], "anything"]
status = program()
os.kill(os.getpid(), signal.SIGINT)
raise SystemExit(status)
"""


def test_a_ctrl_c_after_the_command_has_ended_prints_nothing(tmp_path: Path) -> None:
    """The command's own status and error line, and nothing of the interrupt (before
    `program` stopped listening, it ended as a `KeyboardInterrupt` traceback)."""
    missing = tmp_path / "no-store-here"
    completed = subprocess.run([sys.executable, "-c", LATE_INTERRUPT_RUN, str(missing)],
                               cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 2, completed.stderr
    assert completed.stderr.startswith("session-search: error: "), completed.stderr
    assert "KeyboardInterrupt" not in completed.stderr and "Traceback" not in completed.stderr
