"""`engine.search.phrases.shortest` is `heapq.nsmallest` over row lengths, whether it
sorts the list whole (short lists) or walks it with the heap (long ones)."""

from __future__ import annotations

import heapq

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.search.phrases import SORTED_SHARE, shortest


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 70), max_size=SORTED_SHARE * 8), st.integers(1, 12))
def test_shortest_is_nsmallest(lengths, count):
    assert shortest(count, lengths) == heapq.nsmallest(count, lengths)
