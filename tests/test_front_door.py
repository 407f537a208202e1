"""The front door (`engine/__init__.py`): the public names, each loaded on first use.

A reader starts from `import engine`; a program needs no module path below it. The list
is pinned here so that a name is added or removed on purpose, and importing the package
must load nothing else of the engine (a command loads only what it runs).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import engine

PUBLIC = [
    "__version__", "open_backend", "import_into_store", "DEMO_CORPUS", "SearchRequest",
    "SearchResult", "SearchHit", "SessionWindow", "StoredEvent", "HistoryRequest",
    "HistoryPage", "read_history", "ToolHistoryRequest", "sessions_history",
    "sessions_search", "gateway_search", "Requester", "ToolConfig", "load_tool_config",
    "RequesterHistoryAccess", "EngineError", "InputError", "UsageError", "StoreError",
    "CorruptFile", "UnknownSession", "DEFAULT_LIMIT", "MAX_LIMIT", "HistoryRequestError",
    "Backend", "SearchBackend", "TranscriptReader", "Refreshable", "Explainable",
    "Compactable", "require_capability", "has_capability",
]


def test_the_public_names_are_pinned_and_each_resolves() -> None:
    assert sorted(engine.__all__) == sorted(PUBLIC)
    assert sorted(engine._EXPORTS) == sorted(PUBLIC[1:])  # every public name has its module
    for name in PUBLIC:
        value = getattr(engine, name)
        assert value is not None, name
        if name not in ("__version__", "DEMO_CORPUS", "DEFAULT_LIMIT", "MAX_LIMIT"):
            assert getattr(value, "__name__", name) == name
    assert (engine.DEMO_CORPUS / "sessions.jsonl").is_file()
    assert issubclass(engine.StoreError, engine.EngineError)
    assert (engine.DEFAULT_LIMIT, engine.MAX_LIMIT) == (10, 25)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'engine' has no attribute 'nothing'"):
        engine.nothing  # noqa: B018


def test_importing_the_package_loads_nothing_else_of_the_engine() -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", ("import sys, engine; print(sorted(name for name in "
                                "sys.modules if name.startswith('engine')))")],
        capture_output=True, text=True, check=True, timeout=60)
    assert loaded.stdout.strip() == "['engine']"
