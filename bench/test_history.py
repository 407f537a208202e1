"""History paging benchmarks: the tail and an anchored window of the long session.

Owns: timing history reads of `agent:main:main`, the corpus's long window (100k messages
in the `1m` corpus). Must not touch: the prepared stores (read only here).

History reads the transcript store, never the index (behaviour.md §9): each benchmark
times one `chat.history` page (`engine.history.pages.read_history`, through the bench
adapter `history_page`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.backends.protocol import Backend
from engine.bench.adapters import CapabilityMissing, history_page

LIMIT = 20


def _page(backend: Backend, **arguments: Any) -> Any:
    try:
        return history_page(backend, limit=LIMIT, **arguments)
    except CapabilityMissing as missing:
        pytest.skip(str(missing))


def test_history_tail(benchmark: Any, manifest: dict[str, Any],
                      prepared: tuple[Path, Backend]) -> None:
    long_session = manifest["longSession"]
    _page(prepared[1], session_key=long_session["sessionKey"])
    page = benchmark(history_page, prepared[1], long_session["sessionKey"], LIMIT)
    assert 1 <= len(page.messages) <= LIMIT


def test_history_anchored(benchmark: Any, manifest: dict[str, Any],
                          prepared: tuple[Path, Backend]) -> None:
    long_session = manifest["longSession"]
    arguments = {"message_id": long_session["anchorMessageId"],
                 "session_id": long_session["sessionId"]}
    _page(prepared[1], session_key=long_session["sessionKey"], **arguments)
    page = benchmark(history_page, prepared[1], long_session["sessionKey"], LIMIT,
                     **arguments)
    assert 1 <= len(page.messages) <= LIMIT
