"""The reference backend's cached scopes against `select_scope` walking every window.

A hypothesis state machine writes at random (the shared `WindowWriteRules`: new windows,
appends on and off the active path, tool results, rewinds, deletes, reconcile, flush,
merge; and here: archived windows, archive and restore) through a writer, and refreshes a reader of the same store; after every step,
for every request shape (agent, key lists, `sessionId` filters, the archived window's
key), both handles' `search_scope` must equal `select_scope` over their windows and
their index's states, which reads nothing cached. The fixed tests below pin the writes
that change a scope without changing the index's version.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import invariant, precondition, rule

from engine.backends.reference.backend import ReferenceBackend
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.model import SearchRequest, SessionWindow
from engine.search.scope import rebuild_pending, select_scope
from tests.index.window_write_rules import WindowWriteRules

TINY = EngineConfig(index_flush_documents=3, index_merge_segments=2)


def requests(session_ids: list[str]) -> list[SearchRequest]:
    """Every request shape a scope depends on, over the windows `session_ids`."""
    shapes = [SearchRequest("amber"), SearchRequest("amber", agent_id="work"),
              SearchRequest("amber", agent_id="nobody"), SearchRequest("amber", session_keys=()),
              SearchRequest("amber", session_keys=("agent:main:a", "global")),
              SearchRequest("amber", session_keys=("agent:work:c",), agent_id="main")]
    for session_id in session_ids[:4] + ["absent"]:
        shapes.append(SearchRequest("amber", session_id=session_id))
        shapes.append(SearchRequest("amber", session_id=session_id, session_keys=()))
    return shapes


def assert_cached_scopes_are_selected_scopes(backend: ReferenceBackend) -> None:
    session_ids = [window.session_id for window in backend.windows()]
    for request in requests(session_ids):
        expected = select_scope(backend.windows(), request, rebuild_pending(backend.index.view()))
        cached = backend.search_scope(request)
        assert dict(cached.session_keys) == dict(expected.session_keys), request
        assert cached.archived_excluded == expected.archived_excluded, request


class ScopeCacheMachine(WindowWriteRules):
    KEYS = ("agent:main:a", "agent:main:b", "agent:work:c", "global", "unknown")
    WORDS = ("amber",)

    def __init__(self) -> None:
        super().__init__()
        self.directory = MemoryDirectory()
        self.backend = ReferenceBackend.create_in(self.directory, config=TINY)
        self.reader = ReferenceBackend.open_in(self.directory, writer=False, config=TINY)

    @rule(data=st.data())
    def new_archived_window(self, data):
        self.put_new_window(data.draw(st.sampled_from(self.KEYS)), archived=True)

    @precondition(lambda self: self.windows)
    @rule(data=st.data(), archived=st.booleans())
    def archive_or_restore(self, data, archived):
        session_id = data.draw(st.sampled_from(sorted(self.windows)))
        with self.backend.transaction() as transaction:
            transaction.put_window(SessionWindow(session_id, self.windows[session_id],
                                                 archived=archived))

    @rule()
    def refresh_reader(self):
        self.reader.refresh()

    @invariant()
    def cached_scopes_are_selected_scopes(self):
        assert_cached_scopes_are_selected_scopes(self.backend)
        assert_cached_scopes_are_selected_scopes(self.reader)

    def teardown(self):
        self.reader.close()
        self.backend.close()


ScopeCacheMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=25,
                                               deadline=None)
test_scope_cache_state_machine = ScopeCacheMachine.TestCase


def dirty_window_without_rows() -> ReferenceBackend:
    """A store whose one window holds a tool result only (no row) and a rewind (dirty)."""
    backend = ReferenceBackend.create_in(MemoryDirectory())
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("s", "agent:main:a"))
        transaction.append_event("s", {"type": "message", "id": "m1", "parentId": None,
                                       "message": {"role": "toolResult", "content": "amber"}})
        transaction.append_event("s", {"type": "message", "id": "m2", "parentId": "m1",
                                       "message": {"role": "toolResult", "content": "amber"}})
        transaction.append_event("s", {"type": "leaf", "id": "l1", "parentId": "m2",
                                       "targetId": "m1"})
    return backend


def test_a_reconcile_that_changes_no_row_still_changes_the_scope():
    backend = dirty_window_without_rows()
    request = SearchRequest("amber", session_keys=())
    assert dict(backend.search_scope(request).session_keys) == {}
    version = backend.index.view().version
    generation = backend.store.generation
    backend.reconcile()
    # Neither the rows nor the store moved: only the window's state did.
    assert backend.index.view().version[1:] == version[1:]
    assert backend.store.generation == generation
    assert dict(backend.search_scope(request).session_keys) == {"s": "agent:main:a"}


def test_archiving_a_window_takes_it_out_of_the_cached_scope():
    backend = dirty_window_without_rows()
    backend.reconcile()
    request = SearchRequest("amber")
    assert backend.search_scope(request).archived_excluded == 0
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("s", "agent:main:a", archived=True))
    scope = backend.search_scope(request)
    assert dict(scope.session_keys) == {} and scope.archived_excluded == 1
    assert backend.search(request).archived_transcripts_excluded == 1
