"""The explorer's fixtures: the demo store, and one explore server over it per module.

Owns: `demo_store` (the demo corpus imported once into a reference store) and `explorer`
(a running server, `tests.explorer.client.Explorer`, stopped at the module's end with
Ctrl-C, which must end it with status 0 and no traceback).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import engine
from tests.explorer.client import Explorer


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A reference store of the demo corpus, shared by the tests that only read it."""
    store = tmp_path_factory.mktemp("explorer-demo") / "demo"
    engine.import_into_store(store, "reference", [engine.DEMO_CORPUS])
    return store


@pytest.fixture(scope="module")
def explorer(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Explorer]:
    """One explorer over the demo store for a module's tests; it must stop cleanly."""
    server = Explorer(demo_store, stderr=tmp_path_factory.mktemp("explorer") / "stderr.txt")
    try:
        yield server
    finally:
        status, errors = server.stop()
    assert status == 0, errors
    assert "Traceback" not in errors, errors


