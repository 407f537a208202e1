"""Incognito windows are stored and never indexed, on every backend (`SessionWindow.is_incognito`).

OpenClaw keeps an incognito transcript in process memory only, so its agent database
holds no FTS row of it and its text counts in no bm25 statistic. The stores here keep
the events (they are the user's data) and index none of them: by forward indexing, by
a deferred import's reconcile, and by a rebuild. The scores of the visible hits are
therefore those of a store that never saw the incognito text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.backends.postgres.backend import PostgresBackend
from engine.backends.reference.backend import ReferenceBackend
from engine.backends.sqlite.backend import SqliteBackend
from engine.diagnostics.verify import verify_backend
from engine.directory import MemoryDirectory
from engine.errors import InputError
from engine.model import SearchRequest, SessionWindow

BackendFactory = Callable[[Path], Any]

FACTORIES: dict[str, BackendFactory] = {
    "reference": lambda folder: ReferenceBackend.create_in(MemoryDirectory()),
    "sqlite": lambda folder: SqliteBackend.create(folder / "sqlite"),
    "postgres": lambda folder: PostgresBackend.create(folder / "postgres"),
}

KEPT = SessionWindow("kept", "agent:main:main")
FLAGGED = SessionWindow("flagged", "agent:main:chat-2", incognito=True)
BY_KEY = SessionWindow("by-key", "agent:main:dashboard:incognito-private")


def message(event_id: str, parent: str | None, text: str) -> dict[str, Any]:
    return {"type": "message", "id": event_id, "parentId": parent, "timestamp": 1_000,
            "message": {"role": "user", "content": text}}


KEPT_EVENTS = [message("k1", None, "saffron harbour"), message("k2", "k1", "quiet harbour")]
SECRET_EVENTS = [message("s1", None, "saffron saffron secret"), message("s2", "s1", "harbour secret")]


@pytest.fixture(params=sorted(FACTORIES))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    opened = FACTORIES[request.param](tmp_path)
    yield opened
    opened.close()


def write(backend: Any, windows: list[SessionWindow], events: dict[str, list[dict[str, Any]]]) -> None:
    with backend.transaction() as transaction:
        for window in windows:
            transaction.put_window(window)
        for session_id, appended in events.items():
            for event in appended:
                transaction.append_event(session_id, event)


def hits(backend: Any, query: str) -> list[tuple[str, str, float]]:
    result = backend.search(SearchRequest(query, session_keys=()))
    return [(hit.session_id, hit.message_id, round(hit.score, 12)) for hit in result.hits]


def test_incognito_events_are_stored_and_never_found(backend: Any) -> None:
    write(backend, [KEPT, FLAGGED, BY_KEY],
          {"kept": KEPT_EVENTS, "flagged": SECRET_EVENTS, "by-key": SECRET_EVENTS})
    assert backend.event_count("flagged") == 2 and backend.event_count("by-key") == 2
    assert hits(backend, "secret") == []
    assert {session_id for session_id, _, _ in hits(backend, "saffron")} == {"kept"}


def test_incognito_text_changes_no_score(backend: Any, tmp_path: Path,
                                        request: pytest.FixtureRequest) -> None:
    write(backend, [KEPT, FLAGGED, BY_KEY],
          {"kept": KEPT_EVENTS, "flagged": SECRET_EVENTS, "by-key": SECRET_EVENTS})
    name = request.node.callspec.params["backend"]
    plain = FACTORIES[name](tmp_path / "plain")
    try:
        write(plain, [KEPT], {"kept": KEPT_EVENTS})
        for query in ("saffron", "harbour", "quiet harbour"):
            assert hits(backend, query) == hits(plain, query), query
            assert hits(backend, query)
    finally:
        plain.close()


def test_reconcile_and_rebuild_add_no_incognito_row(backend: Any) -> None:
    write(backend, [KEPT, FLAGGED], {"kept": KEPT_EVENTS, "flagged": SECRET_EVENTS})
    # A rewind leaves the window dirty: reconcile rebuilds it from its active path (s1).
    write(backend, [], {"flagged": [{"type": "leaf", "id": "l1", "parentId": "s2", "targetId": "s1"}]})
    assert backend.index_status() is True
    assert backend.reconcile() == 1
    assert backend.index_status() is False
    assert hits(backend, "secret") == []
    assert [session_id for session_id, _, _ in hits(backend, "quiet")] == ["kept"]
    if isinstance(backend, ReferenceBackend):
        assert backend.rebuild_index() == 2
        assert hits(backend, "secret") == []
        report = verify_backend(backend)
        assert report.ok, report


def test_a_window_cannot_change_its_privacy(backend: Any) -> None:
    write(backend, [KEPT, FLAGGED], {"kept": KEPT_EVENTS})
    for window, message_text in [
        (SessionWindow("kept", "agent:main:main", incognito=True),
         "window kept was written as a kept transcript and cannot become incognito"),
        (SessionWindow("kept", "agent:main:dashboard:incognito-x"),
         "window kept was written as a kept transcript and cannot become incognito"),
        (SessionWindow("flagged", "agent:main:chat-2"),
         "window flagged was written as an incognito transcript and cannot become a kept transcript"),
    ]:
        with pytest.raises(InputError) as raised, backend.transaction() as transaction:
            transaction.put_window(window)
        assert str(raised.value) == message_text
    assert [window.is_incognito for window in backend.windows()] == [False, True]
    # The same privacy under another title is an ordinary metadata change.
    write(backend, [SessionWindow("flagged", "agent:main:dashboard:incognito-y", title="t")], {})
    assert backend.window("flagged").title == "t"
