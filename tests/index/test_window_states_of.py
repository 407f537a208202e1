"""The window states a loaded index starts with (`engine.index.loading.window_states_of`,
each state made in C) against the clear version, one `WindowIndexState(...)` a window."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.index.lifecycle import WindowIndexState
from engine.index.loading import window_states_of

manifest_windows = st.lists(st.tuples(st.text(max_size=3), st.integers(-1, 10**12),
                                      st.one_of(st.none(), st.text(max_size=3)),
                                      st.booleans()), max_size=20)


@given(manifest_windows)
def test_states_made_in_c_are_the_states_made_one_by_one(windows):
    clear = {session_id: WindowIndexState(seq, leaf, rebuild)
             for session_id, seq, leaf, rebuild in windows}
    found = window_states_of(windows)
    assert found == clear
    assert list(found) == list(clear)
    assert all(type(state) is WindowIndexState for state in found.values())
    assert all(found[key].needs_rebuild is clear[key].needs_rebuild for key in clear)
