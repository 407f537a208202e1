"""The README's Python example runs as written (a doctest over README.md)."""

from __future__ import annotations

import doctest
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_examples_run() -> None:
    result = doctest.testfile(str(README), module_relative=False, verbose=False)
    assert (result.failed, result.attempted > 5) == (0, True)
