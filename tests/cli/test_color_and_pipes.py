"""`--color auto|always|never` beside `NO_COLOR`, and a closed pipe ends quietly (issue 32,
item 3).

Every case runs `python -m engine` in a fresh process on the demo store. Colour cases put
standard output on a pseudo-terminal or in a pipe; pipe cases give the command a pipe
whose reader has already gone, so that its first write fails as it does under
`session-search ... | head -1` once `head` has its line (deterministically: no race
with the reader).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli.commands import COMMANDS
from tests.cli.conftest import CHECKOUT, output_on_terminal

STYLED_RUN = re.compile(r"\x1b\[1;33m(.*?)\x1b\[0m")
ESCAPE = "\x1b"


@pytest.fixture
def demo(demo_store: Path) -> str:
    return str(demo_store)


@pytest.mark.parametrize("no_color", [None, "1"])
def test_always_colours_a_pipe_whatever_no_color_says(session_search, demo: str,
                                                      no_color: str | None,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    coloured = session_search("search", "--store", demo, "--color", "always", "cafe")
    plain = session_search("search", "--store", demo, "cafe")
    assert coloured.status == 0 and ESCAPE not in plain.out
    assert STYLED_RUN.findall(coloured.out) == ["Café", "café"]
    # the same plain layout: the escapes wrap the words and move no column
    assert STYLED_RUN.sub(r"\1", coloured.out) == plain.out


def test_never_turns_colour_off_on_a_terminal(demo: str) -> None:
    shown = output_on_terminal("search", "--store", demo, "--color", "never", "cafe",
                               columns=120, environment={})
    assert shown.status == 0 and "Café meeting notes" in shown.out
    assert ESCAPE not in shown.out


def test_always_beats_no_color_on_a_terminal_and_auto_obeys_it(demo: str) -> None:
    forced = output_on_terminal("search", "--store", demo, "--color", "always", "cafe",
                                columns=120, environment={"NO_COLOR": "1"})
    assert STYLED_RUN.findall(forced.out) == ["Café", "café"]
    auto = output_on_terminal("search", "--store", demo, "--color", "auto", "cafe",
                              columns=120, environment={"NO_COLOR": "1"})
    assert auto.status == 0 and ESCAPE not in auto.out


def test_every_command_takes_color(session_search) -> None:
    for entry in COMMANDS:
        outcome = session_search(entry.name, "--help")
        assert "--color {auto,always,never}" in outcome.out, entry.name
    refused = session_search("search", "--color", "sometimes", "cafe")
    assert refused.status == 2 and "invalid choice: 'sometimes'" in refused.err


def run_into_closed_pipe(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m engine ARGV` with standard output a pipe nobody reads any more."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run([sys.executable, "-m", "engine", *argv], cwd=CHECKOUT,
                              stdout=writer, stderr=subprocess.PIPE, text=True,
                              timeout=120, check=False)
    finally:
        os.close(writer)


@pytest.mark.parametrize("argv", [
    ("search", "--store", "<store>", "cafe"),
    ("search", "--store", "<store>", "--json", "cafe"),
    ("dump", "--store", "<store>"),
    ("history", "--store", "<store>", "agent:main:logical-reset"),
    ("stats", "--store", "<store>"),
    ("tokenize", "--profile", "unicode61", "Café crème"),
    ("--help",),
    ("search", "--help"),
], ids=lambda argv: " ".join(argv))
def test_a_closed_pipe_ends_quietly_with_status_0(demo: str, argv: tuple[str, ...]) -> None:
    completed = run_into_closed_pipe(*(demo if word == "<store>" else word for word in argv))
    assert (completed.returncode, completed.stderr) == (0, "")


def test_the_shell_pipe_into_head(demo: str) -> None:
    """The case users type: a pipe into `head -1`, through a shell."""
    completed = subprocess.run(
        ["sh", "-c", (f'"{sys.executable}" -m engine dump --store "{demo}" '
                     f'agents/main/transcripts/segment-000001.log | head -1')],
        cwd=CHECKOUT, capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0
    assert completed.stdout.startswith("file")
    assert completed.stderr == ""
