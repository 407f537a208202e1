"""Options for the analysis tests: `--update-goldens`.

Owns: the `--update-goldens` command-line option and the `update_goldens` fixture that
golden-file tests read. Must not touch: fixtures of other test packages (the root
`tests/conftest.py` owns the shared PostgreSQL fixtures).

pytest registers an option only from a conftest it loads at start-up, so name this
directory or one of its files on the command line when regenerating, e.g.
`pytest tests/analysis/test_icu_golden.py --update-goldens`, then review `git diff`.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="rewrite golden files from the current implementation (review the diff!)",
    )


@pytest.fixture(scope="session")
def update_goldens(request: pytest.FixtureRequest) -> bool:
    """True when the run was started with `--update-goldens`."""
    return bool(request.config.getoption("--update-goldens", default=False))
