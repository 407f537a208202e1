"""The only place where the benchmark harness calls engine APIs beyond `Backend`.

Owns: opening a store for a backend, importing a corpus into it, and looking up the
optional capabilities some workloads need (history reads, the agent tool, the palette
search, reconcile).
Must not touch: timing, statistics, or any backend's internals.

Each lookup is lazy and returns a clear reason when the capability is not there yet, so a
workload skips with that reason instead of failing. A capability the engine does not have
at all (history reads of a backend without a transcript reader) raises `FeatureNotBuilt`: the report leaves
such rows out until the feature lands, since a row per unbuilt feature tells a reader
nothing about speed. When a helper module's API changes, this module is the one to edit.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.backends.protocol import Backend
from engine.bench.signals import CapabilityMissing, FeatureNotBuilt
from engine.errors import EngineError
from engine.store.maintenance import reconcile_when_needed

if TYPE_CHECKING:
    from engine.bench.comparators import Comparator


@dataclass(frozen=True, slots=True)
class BenchServices:
    """How the harness opens stores and imports corpora; tests pass fakes here.

    `open_store(backend_name, path, create, writer)` returns an open `Backend`;
    `import_corpus(backend, corpus_directory)` loads a corpus directory or a flat messages
    file in one transaction; `backend_names()` lists what the registry offers;
    `comparators` are measured beside the backend each names, when it runs.
    """

    open_store: Callable[[str, Path, bool, bool], Backend]
    import_corpus: Callable[[Backend, Path], None]
    backend_names: Callable[[], tuple[str, ...]]
    comparators: tuple[Comparator, ...] = ()
    #: `(backend_name, path)`: the existing store at `path` opened as the writer with
    #: background reconcile on (the stores of `open_store` never reconcile by themselves,
    #: so that every workload measures the state it set up); None: not offered.
    open_reconciling_store: Callable[[str, Path], Backend] | None = None


def _import_attribute(module_name: str, attribute: str, what: str) -> Any:
    """`module_name.attribute`; FeatureNotBuilt when the module or the attribute does not
    exist, CapabilityMissing when the module exists but fails to import."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        absent = error.name is not None and (module_name + ".").startswith(error.name + ".")
        kind = FeatureNotBuilt if absent else CapabilityMissing
        raise kind(f"{what}: {module_name} is not available ({error})") from None
    except ImportError as error:
        raise CapabilityMissing(f"{what}: {module_name} is not available ({error})") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise FeatureNotBuilt(f"{what}: {module_name}.{attribute} does not exist") from None


def remove_store(directory: Path, *, ignore_errors: bool = False) -> None:
    """Remove a store folder the harness made, with what its backend keeps outside it (a
    postgres store's schemas, `engine.store.registry.discard_server_data`)."""
    import shutil

    discard = _import_attribute("engine.store.registry", "discard_server_data", "remove a store")
    try:
        discard(directory)
    except EngineError:  # a store too damaged to read, a server gone: its folder still goes
        if not ignore_errors:
            raise
    shutil.rmtree(directory, ignore_errors=ignore_errors)


def registry_open_store(name: str, path: Path, create: bool, writer: bool) -> Backend:
    """Open (or create) a store of backend `name` through `engine.store.registry`,
    without background reconcile (`EngineConfig.background_reconcile`)."""
    open_backend = _import_attribute("engine.store.registry", "open_backend", "open a store")
    return open_backend(path, backend=name, create=create, writer=writer or create,
                        config=_engine_config(background_reconcile=False))


def registry_open_reconciling_store(name: str, path: Path) -> Backend:
    """Open the store of backend `name` at `path` as the writer, background reconcile on."""
    open_backend = _import_attribute("engine.store.registry", "open_backend", "open a store")
    return open_backend(path, backend=name, writer=True,
                        config=_engine_config(background_reconcile=True))


def _engine_config(**fields: Any) -> Any:
    return _import_attribute("engine.config", "EngineConfig", "configure a store")(**fields)


def registry_backend_names() -> tuple[str, ...]:
    """The registry's backend names (CapabilityMissing without a registry)."""
    return tuple(_import_attribute("engine.store.registry", "BACKEND_NAMES", "list backends"))


def ingest_import_corpus(backend: Backend, corpus: Path) -> None:
    """Import a corpus directory or a flat messages JSONL file through `engine.ingest`."""
    import_sources = _import_attribute("engine.ingest", "import_sources", "import a corpus")
    import_sources(backend, [Path(corpus)])


def finish_indexing(backend: Backend) -> int:
    """Reconcile once if the backend's index can lag (`Maintenance`); the windows rebuilt.

    An import leaves windows with rewinds (leaf events) dirty, as upstream does
    (behaviour.md §8.1); the product reconciles them in the background, and a benchmark
    must query the fully indexed state, so the harness reconciles after every import.
    """
    return reconcile_when_needed(backend)


def default_services() -> BenchServices:
    """The real engine: the backend registry and the importers, and upstream's bare SQL
    beside the SQLite backend (`engine.bench.sqlite_kernel`)."""
    from engine.bench.sqlite_kernel import SqliteKernel  # SQLite, loaded when benchmarking

    return BenchServices(registry_open_store, ingest_import_corpus, registry_backend_names,
                         (SqliteKernel(),), registry_open_reconciling_store)


def agent_sessions_search(backend: Backend, query: str, limit: int,
                          visibility: str = "all") -> dict[str, Any]:
    """Run the `sessions_search` agent tool as `agent:main:main` under `visibility`
    (`all`: every agent's sessions; `agent`: the main agent's only)."""
    from engine.agent_tools.sessions_search import sessions_search
    from engine.agent_tools.tool_config import ToolConfig
    from engine.agent_tools.visibility import Requester
    from engine.backends.protocol import TranscriptReader

    if not isinstance(backend, TranscriptReader):
        raise CapabilityMissing(f"the agent tool: backend {backend.name!r} cannot list "
                                "its sessions (no TranscriptReader)")
    return sessions_search(backend, Requester("agent:main:main"),
                           {"query": query, "limit": limit},
                           config=ToolConfig(visibility=visibility))


def history_page(backend: Backend, session_key: str, limit: int,
                 message_id: str | None = None, session_id: str | None = None) -> Any:
    """One `chat.history` page (`engine.history.pages.read_history`) read from the
    backend's transcripts; FeatureNotBuilt for a backend that cannot read them."""
    from engine.backends.protocol import TranscriptReader
    from engine.history.pages import read_history
    from engine.history.request import HistoryRequest

    if not isinstance(backend, TranscriptReader):
        raise FeatureNotBuilt(f"history reads: backend {backend.name!r} has no transcript "
                              "reader")
    return read_history(backend, HistoryRequest(session_key, message_id=message_id,
                                                session_id=session_id, limit=limit))


def palette_ui_search(backend: Backend, query: str) -> dict[str, Any]:
    """Run the Control UI's command palette search (`ui_search`) for `query`, with the
    default configuration (no agents listed: every agent's sessions are in scope)."""
    from engine.agent_tools.ui_search import ui_search
    from engine.backends.protocol import TranscriptReader

    if not isinstance(backend, TranscriptReader):
        raise CapabilityMissing(f"the palette search: backend {backend.name!r} cannot list "
                                "its sessions (no TranscriptReader)")
    return ui_search(backend, query)


def backend_method(backend: Backend, name: str, what: str) -> Callable[..., Any]:
    """A method a workload needs beyond the `Backend` protocol (FeatureNotBuilt if absent)."""
    method = getattr(backend, name, None)
    if not callable(method):
        raise FeatureNotBuilt(f"{what}: backend {backend.name!r} has no {name}() yet")
    return method
