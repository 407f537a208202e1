"""Fixtures of the agent-tool tests: each test that touches a store runs on both backends.

Owns: `backend_name` (reference, then SQLite) and `make_store` (builds a store of that
backend from `tests.tools.stores.Session` values and closes it after the test). Must not
touch: what a test asserts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from engine.backends.partitioned import PartitionedStore
from tests.tools.stores import BACKENDS, Session, build_store

StoreMaker = Callable[[Sequence[Session]], PartitionedStore]


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_store(tmp_path: Path, backend_name: str) -> Iterator[StoreMaker]:
    opened: list[PartitionedStore] = []

    def make(sessions: Sequence[Session]) -> PartitionedStore:
        store = build_store(tmp_path / f"store-{len(opened)}", backend_name, sessions)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
