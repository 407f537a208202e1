"""`phrase_bm25` (a query of one phrase) is `bm25` of the one pair, bit for bit."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.score.bm25 import bm25, inverse_document_frequency, phrase_bm25


@settings(max_examples=500, deadline=None)
@given(st.integers(1, 10**7), st.integers(0, 10**7), st.integers(0, 5000), st.integers(1, 10**6),
       st.floats(0.01, 10**5, allow_nan=False), st.sampled_from([None, 1e-6, 0.3, 9.9]))
def test_phrase_bm25_is_bm25_of_one_pair(total_rows, matching, frequency, length, average, idf):
    if idf is None:
        idf = inverse_document_frequency(total_rows, min(matching, total_rows))
    expected = bm25([(idf, frequency)], length, average)
    found = phrase_bm25(idf, frequency, length, average)
    assert found == expected and math.copysign(1.0, found) == math.copysign(1.0, expected)
