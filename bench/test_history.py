"""History paging benchmarks: the tail and an anchored window of the long session.

Owns: timing history reads of `agent:main:main`, the corpus's long window (100k messages
in the `1m` corpus). Must not touch: the prepared stores (read only here).

History reads the transcript store, never the index (behaviour.md §9). The benchmarks
call the backend's `history(session_key=…, limit=…, message_id=…, session_id=…)`; until a
backend offers it they skip with that reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.backends.protocol import Backend
from engine.bench.adapters import CapabilityMissing, backend_method

LIMIT = 20


def _history(backend: Backend) -> Any:
    try:
        return backend_method(backend, "history", "history reads")
    except CapabilityMissing as missing:
        pytest.skip(str(missing))


def _messages(page: Any) -> list[Any]:
    return list(page["messages"] if isinstance(page, dict) else page.messages)


def test_history_tail(benchmark: Any, manifest: dict[str, Any],
                      prepared: tuple[Path, Backend]) -> None:
    history = _history(prepared[1])
    long_session = manifest["longSession"]
    page = benchmark(history, session_key=long_session["sessionKey"], limit=LIMIT)
    assert 1 <= len(_messages(page)) <= LIMIT


def test_history_anchored(benchmark: Any, manifest: dict[str, Any],
                          prepared: tuple[Path, Backend]) -> None:
    history = _history(prepared[1])
    long_session = manifest["longSession"]
    page = benchmark(
        history, session_key=long_session["sessionKey"], limit=LIMIT,
        message_id=long_session["anchorMessageId"], session_id=long_session["sessionId"],
    )
    assert 1 <= len(_messages(page)) <= LIMIT
