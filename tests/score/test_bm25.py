"""FTS5's bm25 formula: hand-computed values, the IDF floor, phrase order, explanation."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.score.bm25 import (
    IDF_FLOOR,
    K1,
    B,
    bm25,
    inverse_document_frequency,
    phrase_term,
)
from engine.score.bm25_explanation import explain_bm25


def test_constants_are_fts5s() -> None:
    assert (K1, B, IDF_FLOOR) == (1.2, 0.75, 1e-6)


@pytest.mark.parametrize(
    ("total_rows", "matching_rows", "idf"),
    [
        (3, 1, math.log(2.5 / 1.5)),
        (1000, 1, math.log(999.5 / 1.5)),
        (3, 2, 1e-6),   # ln(1.5/2.5) < 0: floored
        (2, 1, 1e-6),   # ln(1) == 0: floored too (<= 0)
        (1, 1, 1e-6),
    ],
)
def test_inverse_document_frequency(total_rows: int, matching_rows: int, idf: float) -> None:
    assert inverse_document_frequency(total_rows, matching_rows) == idf


def test_single_phrase_by_hand() -> None:
    # N=10, n=2, f=3, D=8, avgdl=5: idf = ln(8.5/2.5)
    idf = math.log(8.5 / 2.5)
    expected = -(idf * (3 * 2.2) / (3 + 1.2 * (0.25 + 0.75 * 8 / 5)))
    assert bm25([(idf, 3)], 8, 5.0) == pytest.approx(expected, rel=1e-15)
    assert bm25([(idf, 3)], 8, 5.0) < 0


def test_the_saffron_row_scores_1_375e_minus_6() -> None:
    value = bm25([(inverse_document_frequency(3, 2), 1)], 1, 9 / 3)
    assert round(-value, 14) == 1.375e-06


def test_phrases_add_up_in_order() -> None:
    first = bm25([(0.5, 1)], 4, 4.0)
    second = bm25([(2.0, 2)], 4, 4.0)
    assert bm25([(0.5, 1), (2.0, 2)], 4, 4.0) == first + second


def test_a_longer_document_scores_worse_for_the_same_frequency() -> None:
    assert bm25([(1.0, 1)], 2, 5.0) < bm25([(1.0, 1)], 20, 5.0)


def test_explanation_carries_every_input() -> None:
    explanation = explain_bm25([("saffron", 2, 1), ("ballast", 1, 0)], total_rows=3,
                               total_tokens=9, document_length=1)
    assert explanation.average_length == 3.0
    assert [item.idf_floored for item in explanation.phrases] == [True, False]
    assert explanation.phrases[1].contribution == 0.0
    assert explanation.bm25 == bm25([(1e-6, 1), (math.log(2.5 / 1.5), 0)], 1, 3.0)
    assert explanation.lines()[0] == "N=3 D=1 avgdl=3.0 k1=1.2 b=0.75"
    assert explanation.lines()[-1].startswith("bm25=-1.375e-06")


@given(st.lists(st.tuples(st.floats(1e-6, 20.0), st.integers(1, 50)), min_size=1, max_size=6),
       st.integers(1, 100_000), st.floats(1.0, 5_000.0))
def test_bm25_has_the_bits_of_the_phrase_terms_summed_in_order(
        stats: list[tuple[float, int]], document_length: int, average: float) -> None:
    clear = 0.0
    for idf, frequency in stats:
        clear += phrase_term(idf, float(frequency), document_length, average)
    assert bm25(iter(stats), document_length, average) == -1.0 * clear  # exact, not approx
