"""Shared fixtures of the pytest-benchmark files: the corpus and one prepared store per
backend.

Owns: choosing the corpus (`--corpus-size`, default `tiny`; `10k`, `100k`, `1m` for real
measurements), generating it once into the cache (`engine.bench.corpus_generator`), and
preparing each backend's store (import + reconcile, untimed) once per session. Must not
touch: what a benchmark measures (each `bench/test_*.py` file owns its workloads).

Backends come from `engine.store.registry`; a backend whose store cannot be created
(a missing module or dependency) is skipped with the reason, never faked.

Run: `pytest bench --benchmark-only --corpus-size 10k` (plain `pytest` runs `tests/`).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.backends.protocol import Backend
from engine.bench.adapters import (
    CapabilityMissing,
    finish_indexing,
    ingest_import_corpus,
    registry_open_store,
)
from engine.bench.corpus_generator import (
    CORPUS_SIZES,
    DEFAULT_SEED,
    corpus_size,
    ensure_corpus,
    import_source,
    read_manifest,
)
from engine.errors import EngineError
from engine.gc_policy import use_bulk_work_policy

pytest.importorskip("pytest_benchmark", reason="pytest-benchmark is not installed")

#: The programs' garbage-collector policy (`engine.gc_policy`): the benchmark measures what
#: the command line runs.
use_bulk_work_policy()


def _backend_names() -> tuple[str, ...]:
    try:
        from engine.store.registry import BACKEND_NAMES
    except ImportError:
        return ("reference", "sqlite")
    return tuple(BACKEND_NAMES)


#: Parametrize values for every benchmark that runs per backend.
BACKEND_NAMES: tuple[str, ...] = _backend_names()


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--corpus-size` and `--corpus-seed` choose the generated corpus."""
    group = parser.getgroup("session-search bench")
    group.addoption("--corpus-size", default="tiny", choices=list(CORPUS_SIZES),
                    help="generated corpus size for bench/ (default tiny)")
    group.addoption("--corpus-seed", type=int, default=DEFAULT_SEED,
                    help="generated corpus seed for bench/")


@pytest.fixture(scope="session")
def corpus_root(request: pytest.FixtureRequest) -> Path:
    """The generated corpus directory (cached across runs)."""
    size = corpus_size(request.config.getoption("--corpus-size"))
    return ensure_corpus(size, request.config.getoption("--corpus-seed"))


@pytest.fixture(scope="session")
def manifest(corpus_root: Path) -> dict[str, Any]:
    """The corpus manifest: counts and the exact answer of every probe."""
    return read_manifest(corpus_root)


@pytest.fixture(scope="session")
def corpus(corpus_root: Path, manifest: dict[str, Any]) -> Path:
    """What the importer reads for this corpus."""
    return import_source(corpus_root, manifest)


def open_fresh_store(backend_name: str, directory: Path) -> Backend:
    """Create an empty store for `backend_name` at `directory`, or skip with the reason."""
    if directory.exists():
        shutil.rmtree(directory)
    try:
        return registry_open_store(backend_name, directory, True, True)
    except (CapabilityMissing, EngineError, ImportError) as error:
        pytest.skip(f"backend {backend_name!r} is not available: {error}")


@pytest.fixture
def fresh_store() -> Any:
    """`open_fresh_store` as a fixture, for benchmarks that need a new store per round."""
    return open_fresh_store


def load_corpus(backend: Backend, corpus: Path) -> None:
    """Import the corpus and reconcile what the import left dirty."""
    try:
        ingest_import_corpus(backend, corpus)
    except CapabilityMissing as missing:
        pytest.skip(str(missing))
    finish_indexing(backend)


@pytest.fixture(scope="session")
def prepared_stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Backend name -> (store directory, open writer backend); filled lazily, closed at end."""
    stores: dict[str, Any] = {"root": tmp_path_factory.mktemp("stores")}
    yield stores
    for name, value in stores.items():
        if name != "root":
            value[1].close()


@pytest.fixture(params=BACKEND_NAMES)
def backend_name(request: pytest.FixtureRequest) -> str:
    """Each backend of the registry in turn."""
    return request.param


@pytest.fixture
def prepared(backend_name: str, corpus: Path,
             prepared_stores: dict[str, Any]) -> tuple[Path, Backend]:
    """(store directory, open backend) holding the whole corpus, fully indexed."""
    if backend_name not in prepared_stores:
        directory = prepared_stores["root"] / backend_name
        backend = open_fresh_store(backend_name, directory)
        try:
            load_corpus(backend, corpus)
        except BaseException:
            backend.close()
            raise
        prepared_stores[backend_name] = (directory, backend)
    return prepared_stores[backend_name]
