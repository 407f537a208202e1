"""session-search: a pure-Python reference engine for searching and paging AI-agent session
transcripts, with a SQLite FTS5 backend beside it. Start reading here.

The front door. Everything a program needs is a name of this package:

* **A store.** `open_backend(path, backend="reference" | "sqlite", create=..., writer=...)`
  opens (or makes) a store folder laid out as an OpenClaw state, one partition per agent;
  `import_into_store(path, backend, sources)` loads corpus folders, flat chat logs or an
  OpenClaw state into one, as `session-search import` does; `DEMO_CORPUS` is the bundled
  corpus. A store's `transaction()` writes `SessionWindow`s and events; its `search`
  answers a `SearchRequest` (limit `DEFAULT_LIMIT`, at most `MAX_LIMIT`) with a
  `SearchResult` of `SearchHit`s. What a store can do is typed by the protocols of its
  capabilities (`Backend`, `SearchBackend`, `TranscriptReader`, `Refreshable`,
  `Explainable`, `Compactable`; `require_capability` asks for one by name, `has_capability`
  tells whether a store has one, once per class).
* **History.** `read_history(store, HistoryRequest(...))` is the Gateway's
  `chat.history` page (a `HistoryPage`); bad params raise `HistoryRequestError`.
* **The agent tools.** `sessions_search(store, Requester(key), arguments, config=...)` and
  `sessions_history(store, ToolHistoryRequest(...), access)` answer as the product's tools
  do, under a `ToolConfig` (read from an OpenClaw configuration file by
  `load_tool_config`); `gateway_search` is the Gateway's `sessions.search` handler.
* **Errors.** Every refusal is an `EngineError`: `InputError` (bad input, with the
  product's wording), `UsageError`, `StoreError`, `CorruptFile` (naming the file and
  the byte), `UnknownSession`.

The names load on first use (PEP 562), so `import engine` costs nothing and a command
loads only what it runs. Below the door the stages are folders, each importing only the
layers beneath it (`tests/test_layers.py` holds the table): analysis, codec, transcript,
index, query, score, results, history, search, backends, then the wings a program meets:
`engine.store` (the store every command opens), `engine.agent_tools` (the tools and who
may see what), `engine.inspection` (what the teaching views read of the stages), beside
ingest and diagnostics; then rpc, bench, cli, which import only this door and the wings.

>>> import engine
>>> engine.SearchRequest("cafe", agent_id="main").limit
10
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each public name and the module that defines it.
_EXPORTS = {
    "open_backend": "engine.store.registry",
    "import_into_store": "engine.ingest.into_store",
    "DEMO_CORPUS": "engine.demo_corpus",
    "SearchRequest": "engine.model",
    "DEFAULT_LIMIT": "engine.query.user_query",
    "MAX_LIMIT": "engine.query.user_query",
    "SearchResult": "engine.model",
    "SearchHit": "engine.model",
    "SessionWindow": "engine.model",
    "StoredEvent": "engine.model",
    "HistoryRequest": "engine.history.request",
    "HistoryPage": "engine.history.pages",
    "read_history": "engine.history.pages",
    "ToolHistoryRequest": "engine.history.request",
    "HistoryRequestError": "engine.history.request",
    "sessions_history": "engine.agent_tools.sessions_history",
    "sessions_search": "engine.agent_tools.sessions_search",
    "gateway_search": "engine.agent_tools.gateway_search",
    "Requester": "engine.agent_tools.visibility",
    "ToolConfig": "engine.agent_tools.tool_config",
    "load_tool_config": "engine.agent_tools.tool_config",
    "RequesterHistoryAccess": "engine.agent_tools.history_access",
    "Backend": "engine.backends.protocol",
    "SearchBackend": "engine.backends.protocol",
    "TranscriptReader": "engine.backends.protocol",
    "Refreshable": "engine.backends.protocol",
    "Explainable": "engine.backends.protocol",
    "Compactable": "engine.backends.protocol",
    "require_capability": "engine.backends.protocol",
    "has_capability": "engine.backends.protocol",
    "EngineError": "engine.errors",
    "InputError": "engine.errors",
    "UsageError": "engine.errors",
    "StoreError": "engine.errors",
    "CorruptFile": "engine.errors",
    "UnknownSession": "engine.errors",
}

__all__ = [
    "DEFAULT_LIMIT",
    "DEMO_CORPUS",
    "MAX_LIMIT",
    "Backend",
    "Compactable",
    "CorruptFile",
    "EngineError",
    "Explainable",
    "HistoryPage",
    "HistoryRequest",
    "HistoryRequestError",
    "InputError",
    "Refreshable",
    "Requester",
    "RequesterHistoryAccess",
    "SearchBackend",
    "SearchHit",
    "SearchRequest",
    "SearchResult",
    "SessionWindow",
    "StoreError",
    "StoredEvent",
    "ToolConfig",
    "ToolHistoryRequest",
    "TranscriptReader",
    "UnknownSession",
    "UsageError",
    "__version__",
    "gateway_search",
    "has_capability",
    "import_into_store",
    "load_tool_config",
    "open_backend",
    "read_history",
    "require_capability",
    "sessions_history",
    "sessions_search",
]


def __getattr__(name: str) -> Any:
    """Load a public name on first use (the module docstring's front door)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # what the names are, for type checkers and readers
    from engine.agent_tools.gateway_search import gateway_search
    from engine.agent_tools.history_access import RequesterHistoryAccess
    from engine.agent_tools.sessions_history import sessions_history
    from engine.agent_tools.sessions_search import sessions_search
    from engine.agent_tools.tool_config import ToolConfig, load_tool_config
    from engine.agent_tools.visibility import Requester
    from engine.backends.protocol import (
        Backend,
        Compactable,
        Explainable,
        Refreshable,
        SearchBackend,
        TranscriptReader,
        has_capability,
        require_capability,
    )
    from engine.demo_corpus import DEMO_CORPUS
    from engine.errors import (
        CorruptFile,
        EngineError,
        InputError,
        StoreError,
        UnknownSession,
        UsageError,
    )
    from engine.history.pages import HistoryPage, read_history
    from engine.history.request import HistoryRequest, HistoryRequestError, ToolHistoryRequest
    from engine.ingest.into_store import import_into_store
    from engine.model import SearchHit, SearchRequest, SearchResult, SessionWindow, StoredEvent
    from engine.query.user_query import DEFAULT_LIMIT, MAX_LIMIT
    from engine.store.registry import open_backend
