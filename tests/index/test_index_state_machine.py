"""A hypothesis state machine over the reference backend: appends (linear, branching,
side), leaf controls, new windows, deletes, reconcile, flush, merge and crash-reopen.

After every step: `index.check` holds with a row source (no row points at a missing
message), `verify` finds no difference, and a search for each word returns exactly the
active-path user/assistant messages holding it, in every window that does not need a
rebuild (dirty windows return nothing and make `indexing` true).

The machine first found that side appends (`appendMode: "side"`) were indexed although
they are not on the active path; `test_side_append_marks_the_window_dirty` pins the fix.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis.stateful import invariant, rule

from engine.backends.reference.backend import ReferenceBackend
from engine.config import EngineConfig
from engine.diagnostics.verify import verify_backend
from engine.directory import MemoryDirectory
from engine.errors import UnknownSession
from engine.index.check import check_index
from engine.model import SearchRequest, SessionWindow
from engine.transcript.projection import extract_index_entry, index_entries
from tests.index.window_write_rules import WindowWriteRules

TINY = EngineConfig(index_flush_documents=4, index_merge_segments=2)


class ReferenceBackendMachine(WindowWriteRules):
    def __init__(self) -> None:
        super().__init__()
        self.directory = MemoryDirectory()
        self.backend = ReferenceBackend.create_in(self.directory, config=TINY)

    @rule()
    def crash_and_reopen(self):
        crashed = self.directory.crash_copy()
        self.backend.store.close()  # the crashed process's lock dies with it
        self.directory = crashed
        self.backend = ReferenceBackend.open_in(crashed, writer=True, config=TINY)

    def row_source(self, session_id: str, seq: int):
        try:
            stored = self.backend.store.event(session_id, seq)
        except UnknownSession:
            return False, None
        return True, extract_index_entry(stored)

    @invariant()
    def index_is_consistent(self):
        assert check_index(self.backend.index, self.row_source) == []
        assert verify_backend(self.backend).problems == []

    @invariant()
    def search_finds_exactly_the_active_path(self):
        states = self.backend.index.window_states
        for word in self.WORDS:
            expected = set()
            dirty = False
            for session_id in self.windows:
                state = states.get(session_id)
                if state is not None and state.needs_rebuild:
                    dirty = True
                    continue
                for entry in index_entries(self.backend.store.events(session_id)):
                    if word in entry.text.split():
                        expected.add((session_id, entry.message_id))
            result = self.backend.search(SearchRequest(word, session_keys=(), limit=25))
            found = {(hit.session_id, hit.message_id) for hit in result.hits}
            if not result.truncated:
                assert found == expected
            else:
                assert found < expected
            assert result.indexing == dirty

    def teardown(self):
        self.backend.close()


ReferenceBackendMachine.TestCase.settings = settings(max_examples=50, stateful_step_count=30, deadline=None)
test_reference_backend_state_machine = ReferenceBackendMachine.TestCase


def test_side_append_marks_the_window_dirty():
    backend = ReferenceBackend.create_in(MemoryDirectory())
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("s", "agent:main:a"))
        transaction.append_event("s", {"type": "message", "id": "m1", "parentId": None,
                                       "message": {"role": "user", "content": "amber"}})
        transaction.append_event("s", {"type": "message", "id": "m2", "parentId": "m1", "appendMode": "side",
                                       "message": {"role": "user", "content": "basil"}})
    assert [entry.message_id for entry in index_entries(backend.store.events("s"))] == ["m1"]
    assert backend.search(SearchRequest("basil", session_keys=())).hits == ()
    assert verify_backend(backend).problems == []
