"""A spilled append is the same record whichever way it is made: `encode_append_record`
(what a transaction spills once an event) against `encode_operation_record` of the
`JournalOperation` (the clear way, and what a journal decodes back)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.journal_file import (
    JournalOperation,
    encode_append_record,
    encode_operation_record,
)

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                               max_size=3),
    max_leaves=8)
STAMPS = st.none() | st.integers(0, 2**53) | st.floats(0, 8.64e15)


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1, max_size=6), st.text(max_size=8),
       st.dictionaries(st.text(max_size=6), JSON, max_size=4), STAMPS)
def test_an_append_record_is_the_operation_record(agent_id: str, session_id: str,
                                                   event: dict, created_at: float | None) -> None:
    operation = JournalOperation(agent_id, "append_event", (session_id, event, created_at))
    assert encode_append_record(agent_id, session_id, event, created_at) == (
        encode_operation_record(operation))
