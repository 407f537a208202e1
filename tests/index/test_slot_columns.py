"""A flushed segment's term dictionary keeps a read term record's slots as three columns
of ints instead of the codec's tuple per term (issue 33, item 5): the same lookups, and a
kept record holds no object per term but its text.

Oracle: the same dictionary keeping the codec's entries (`slot_columns = False`, the
clear version) and the in-memory `TermDictionary`'s answers.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.terms_file import TERMS_PER_RECORD, encode_terms_file, open_terms_file
from engine.index.stored_terms import PostingsSlot, SlotColumns, StoredTermDictionary

ROWS = [(0, "w", "m", "user", 1.0, 1, 0, "x")]


def dictionary(entries: list[tuple], columns: bool) -> StoredTermDictionary:
    data = encode_terms_file(ROWS, entries)
    reader = open_terms_file(lambda offset, length: data[offset: offset + length], len(data), "t")
    terms = StoredTermDictionary(reader)
    terms.slot_columns = columns
    return terms


terms = st.lists(st.text(alphabet="abcé会", min_size=1, max_size=4), unique=True,
                 min_size=1, max_size=3 * TERMS_PER_RECORD // 256).map(sorted)


@settings(max_examples=60, deadline=None)
@given(terms, st.lists(st.text(alphabet="abcé会", max_size=4), max_size=10),
       st.integers(0, 2**40))
def test_lookups_agree_with_the_entries(words, probes, base):
    entries = [(word, number + 1, base + 7 * number, 5 + number) for number, word in
               enumerate(words)]
    with_columns, clear = dictionary(entries, True), dictionary(entries, False)
    for probe in [*words, *probes]:
        assert with_columns.get(probe) == clear.get(probe)
        assert list(with_columns.with_prefix(probe)) == list(clear.with_prefix(probe))
    assert with_columns.get(words[0]) == PostingsSlot(1, base, 5)
    assert list(with_columns.terms()) == list(clear.terms()) == words


def test_a_kept_record_holds_columns():
    terms = dictionary([("a", 1, 16, 9), ("b", 2, 25, 4)], True)
    assert terms.get("b") == PostingsSlot(2, 25, 4)
    kept = terms._records.get(0, None)
    assert isinstance(kept[1], SlotColumns)
    assert [list(column) for column in kept[1]] == [[1, 2], [16, 25], [9, 4]]


@pytest.mark.parametrize("odd", [2.5, 2**64 - 1, "9"])
def test_a_value_no_column_holds_stays_as_written(odd):
    entries = [("a", 1, 16, 9), ("b", 2, odd, 4)]
    assert dictionary(entries, True).get("b") == dictionary(entries, False).get("b") == \
        PostingsSlot(2, odd, 4)
