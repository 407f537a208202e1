"""A search's scope read from the store's scope rows against the clear version, the
scope selected from the store's real windows.

The reference backend hands a search its windows as `ScopedWindows`, whose scope rows a
store opened from a checkpoint reads from the checkpoint's columns without building a
window (`TranscriptStore.scope_rows`, `WindowColumns`). Over stores with a checkpoint,
a tail replayed after it, archived windows, deleted and re-put windows and a writer's
own changes, the rows must be those of `windows()`, the scope `select_scope` over the
windows, and each search's answer the one a search handed the real windows gives.
"""

from __future__ import annotations

from engine.backends.reference.backend import ReferenceBackend
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.model import SearchRequest, SessionWindow
from engine.query.checked_request import check_request
from engine.search.kernel import search_index
from engine.search.scope import ScopedWindows, rebuild_pending, select_scope, select_scope_rows
from engine.transcript.catalog import scope_rows_of
from engine.transcript.checkpoint import WindowColumns

CONFIG = EngineConfig(checkpoint_windows_per_record=2)
KEYS = ("agent:main:a", "agent:main:b", "agent:work:c", "global", "unknown")


def message(text: str) -> dict[str, object]:
    return {"type": "message", "id": text, "message": {"role": "user", "content": text}}


def requests(session_ids: list[str]) -> list[SearchRequest]:
    """Every request shape a scope depends on, over the windows `session_ids`."""
    shapes = [SearchRequest("amber"), SearchRequest("amber", agent_id="work"),
              SearchRequest("amber", session_keys=()),
              SearchRequest("amber", session_keys=("agent:main:a", "global")),
              SearchRequest("amber", session_keys=("agent:work:c",), agent_id="main")]
    for session_id in session_ids[:5] + ["absent"]:
        shapes.append(SearchRequest("amber", session_id=session_id, session_keys=()))
    return shapes


def write_windows(backend: ReferenceBackend, first: int, count: int) -> None:
    """Windows `first` .. over the keys, every third archived, each with two messages."""
    with backend.transaction() as transaction:
        for number in range(first, first + count):
            session_id = f"w{number}"
            transaction.put_window(SessionWindow(session_id, KEYS[number % len(KEYS)],
                                                 archived=number % 3 == 0))
            transaction.append_event(session_id, message(f"amber {number}"))
            transaction.append_event(session_id, message(f"amber again {number}"))


def assert_both_ways_agree(backend: ReferenceBackend) -> None:
    """The scope rows, scopes and answers from the rows equal those from the windows."""
    store = backend.store
    windows = store.windows()
    assert store.scope_rows() == scope_rows_of(windows)
    pending = rebuild_pending(backend.index.view())
    for request in requests([window.session_id for window in windows]):
        expected = select_scope(windows, request, pending)
        assert select_scope_rows(store.scope_rows(), request, pending) == expected, request
        assert backend.search_scope(request) == expected, request
        clear = search_index(backend.index.view(), iter(store.windows()),
                             check_request(request), backend.analyzer,
                             indexing=backend.index_status(), config=backend.config)
        assert backend.search(request) == clear, request


def reopened(directory: MemoryDirectory, *, writer: bool = False) -> ReferenceBackend:
    return ReferenceBackend.open_in(directory, writer=writer, config=CONFIG)


def checkpointed(count: int) -> MemoryDirectory:
    """A store of `count` windows (`write_windows`), closed: its checkpoint covers all."""
    directory = MemoryDirectory()
    with ReferenceBackend.create_in(directory, config=CONFIG) as backend:
        write_windows(backend, 0, count)
    return directory


def test_a_store_opened_from_its_checkpoint_reads_its_rows_without_building_windows():
    with reopened(checkpointed(7)) as reader:
        catalog = reader.store._catalog
        assert isinstance(catalog._unbuilt.windows, WindowColumns)
        rows = reader.store.scope_rows()
        assert reader.search(SearchRequest("amber", session_keys=())).hits
        assert catalog._unbuilt is not None and catalog._unbuilt.windows._built is None
        assert rows == scope_rows_of(reader.store.windows())
        assert [row[2] for row in rows] == [number % 3 == 0 for number in range(7)]
        assert_both_ways_agree(reader)


def test_a_tail_replayed_after_the_checkpoint():
    directory = checkpointed(5)
    with reopened(directory, writer=True) as writer:
        write_windows(writer, 5, 3)  # the writer stays open: no checkpoint covers these
        with writer.transaction() as transaction:
            transaction.put_window(SessionWindow("w1", KEYS[1], archived=True))
        with reopened(directory) as reader:
            assert reader.store.checkpoint_generation is not None
            assert len(reader.store.windows()) == 8
            assert_both_ways_agree(reader)
        assert_both_ways_agree(writer)


def test_deleted_and_put_again_windows_and_the_writers_own_changes():
    directory = checkpointed(10)
    with reopened(directory, writer=True) as writer:
        assert_both_ways_agree(writer)  # before any change: from the checkpoint's columns
        with writer.transaction() as transaction:
            transaction.delete_session(KEYS[0])
        assert_both_ways_agree(writer)
        with writer.transaction() as transaction:
            transaction.put_window(SessionWindow("w0", KEYS[2]))
            transaction.append_event("w0", message("amber back"))
            transaction.put_window(SessionWindow("w4", KEYS[4], archived=False))
        assert_both_ways_agree(writer)
        assert [row[0] for row in writer.store.scope_rows()][-1] == "w0"
    with reopened(directory) as reader:
        assert isinstance(reader.store._catalog._unbuilt.windows, WindowColumns)
        assert_both_ways_agree(reader)
        reader.store.window("w3")  # one window read builds them: the rows follow them
        assert reader.store._catalog._unbuilt.windows._built is not None
        assert_both_ways_agree(reader)


def test_scoped_windows_iterate_as_the_windows():
    with reopened(checkpointed(4)) as reader:
        scoped = reader._lazy_windows()
        assert isinstance(scoped, ScopedWindows)
        assert list(scoped) == reader.store.windows()
        assert scoped.rows() == scope_rows_of(reader.store.windows())
