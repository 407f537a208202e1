"""Snapshots of the readable output of `search`, `explain`, `stats`, `history` and
`ui-search` on the demo corpus.

Each case runs `python -m engine` in a fresh process on a store imported from
`engine/demo_corpus`, twice: with standard output in a pipe (plain text) and on a
pseudo-terminal 100 columns wide with `NO_COLOR=1` (rich's layout, colour off). The
output is compared exactly with `tests/cli/snapshots/<case>.<mode>.txt`, after one
normalisation: the store's temporary path is written `<store>`. Nothing else varies
between runs (the outputs hold no timings).

To write the snapshots again after a deliberate change of the output, run
`SESSION_SEARCH_UPDATE_SNAPSHOTS=1 python -m pytest tests/cli/test_snapshots.py` and
review the diff; without that variable a snapshot is only ever read.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import CHECKOUT, Outcome, output_on_terminal

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
UPDATE_VARIABLE = "SESSION_SEARCH_UPDATE_SNAPSHOTS"
TERMINAL_COLUMNS = 100

#: case name -> the command line after `session-search` (`<store>` is the demo store).
CASES: dict[str, tuple[str, ...]] = {
    "search-cafe": ("search", "--store", "<store>", "cafe"),
    "search-prefix-agent": ("search", "--store", "<store>", "--agent", "main", "--match",
                            "prefix", "per", "session", "communi"),
    "search-cjk-retry": ("search", "--store", "<store>", "会议"),
    "search-no-hits": ("search", "--store", "<store>", "--agent", "main", "deployment", "-",
                       "failed"),
    "explain-cafe": ("explain", "--store", "<store>", "--limit", "2", "cafe"),
    "explain-cjk-retry": ("explain", "--store", "<store>", "会议"),
    "stats": ("stats", "--store", "<store>"),
    "history-logical-reset": ("history", "--store", "<store>", "agent:main:logical-reset"),
    "history-retained-interval": ("history", "--store", "<store>", "agent:main:logical-reset",
                                  "--message-id", "reset-m1", "--limit", "4"),
    "history-retained-window": ("history", "--store", "<store>", "agent:work:recall",
                                "--session-id", "archived-session", "--message-id",
                                "archived-answer"),
    "history-tail-page": ("history", "--store", "<store>", "agent:work:recall", "--limit", "1"),
    "history-missing-anchor": ("history", "--store", "<store>", "agent:work:recall",
                               "--message-id", "nope"),
    "ui-search-notes": ("ui-search", "--store", "<store>", "notes"),
    "ui-search-prefix": ("ui-search", "--store", "<store>", "per", "session", "communi"),
    "ui-search-cafe": ("ui-search", "--store", "<store>", "cafe"),
}
MODES = ("plain", "terminal")


def run_case(argv: tuple[str, ...], mode: str, store: Path) -> Outcome:
    arguments = tuple(str(store) if word == "<store>" else word for word in argv)
    if mode == "terminal":
        return output_on_terminal(*arguments, columns=TERMINAL_COLUMNS,
                                  environment={"NO_COLOR": "1"})
    environment = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    completed = subprocess.run([sys.executable, "-m", "engine", *arguments], cwd=CHECKOUT,
                               capture_output=True, text=True, timeout=120, check=False,
                               env=environment)
    return Outcome(completed.returncode, completed.stdout, completed.stderr)


def normalised(text: str, store: Path) -> str:
    """`text` with the store's temporary path written `<store>`.

    >>> normalised("store /tmp/x/demo (backend reference)", Path("/tmp/x/demo"))
    'store <store> (backend reference)'
    """
    return text.replace(str(store), "<store>")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_readable_output_matches_its_snapshot(case: str, mode: str, demo_store: Path) -> None:
    outcome = run_case(CASES[case], mode, demo_store)
    assert (outcome.status, outcome.err) == (0, "")
    shown = normalised(outcome.out, demo_store)
    assert "\x1b" not in shown  # colour off: no escape sequence at all
    snapshot = SNAPSHOTS / f"{case}.{mode}.txt"
    if os.environ.get(UPDATE_VARIABLE):
        SNAPSHOTS.mkdir(exist_ok=True)
        snapshot.write_text(shown, encoding="utf-8")
    assert snapshot.exists(), f"no snapshot {snapshot.name}; write it with {UPDATE_VARIABLE}=1"
    assert shown == snapshot.read_text(encoding="utf-8")


def test_every_snapshot_file_belongs_to_a_case() -> None:
    expected = {f"{case}.{mode}.txt" for case in CASES for mode in MODES}
    assert {path.name for path in SNAPSHOTS.iterdir()} == expected


def test_terminal_snapshots_fit_their_width() -> None:
    from rich.cells import cell_len

    for path in SNAPSHOTS.glob("*.terminal.txt"):
        widest = max(cell_len(line) for line in path.read_text(encoding="utf-8").splitlines())
        assert widest <= TERMINAL_COLUMNS, path.name
