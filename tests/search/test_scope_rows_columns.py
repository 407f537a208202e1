"""`select_scope_rows`, which selects a column at a time (the key rule once per distinct
key, every key when `sessionKeys` is empty), against its oracle `select_scope` over the
same windows, for random windows, states and requests; and `pending_windows`, the set
whose `__contains__` the scope cache hands it, against `rebuild_pending`.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.index.inverted_index import InvertedIndex
from engine.index.lifecycle import WindowIndexState
from engine.model import SearchRequest, SessionWindow
from engine.search.scope import pending_windows, rebuild_pending, select_scope, select_scope_rows
from engine.transcript.catalog import scope_rows_of

KEYS = ("agent:main:a", "agent:main:b", "agent:work:c", "agent:work_x:d", "agent:workxx:e",
        "global", "unknown", "agent:main", "main")
SESSION_IDS = tuple(f"w{number}" for number in range(8))

windows = st.lists(st.builds(SessionWindow, st.sampled_from(SESSION_IDS),
                             st.sampled_from(KEYS), archived=st.booleans()),
                   max_size=12, unique_by=lambda window: window.session_id)
requests = st.builds(
    SearchRequest, st.just("q"),
    session_keys=st.one_of(st.none(), st.just(()),
                           st.lists(st.sampled_from(KEYS), min_size=1, max_size=3).map(tuple)),
    agent_id=st.one_of(st.none(), st.sampled_from(("main", "work", "work_x", "other"))),
    session_id=st.one_of(st.none(), st.sampled_from(SESSION_IDS)))
states = st.dictionaries(st.sampled_from(SESSION_IDS),
                         st.builds(WindowIndexState, needs_rebuild=st.booleans()))


@settings(max_examples=300, deadline=None)
@given(windows, requests, states)
def test_the_scope_from_rows_is_the_scope_from_the_windows(windows, request, states):
    view = InvertedIndex(window_states=states).view()
    pending = pending_windows(view)
    assert pending == {session_id for session_id in SESSION_IDS
                       if rebuild_pending(view)(session_id)}
    expected = select_scope(windows, request, rebuild_pending(view))
    found = select_scope_rows(scope_rows_of(windows), request, pending.__contains__)
    assert found == expected
    assert list(found.session_keys.items()) == list(expected.session_keys.items())
    assert select_scope_rows(iter(scope_rows_of(windows)), request,
                             rebuild_pending(view)) == expected
