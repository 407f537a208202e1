"""The FTS5 snippet window rules on hand-made spans (the real-SQLite parity is in tests/parity)."""

from __future__ import annotations

import pytest

from engine.results.snippet import (
    c_division,
    fts5_snippet,
    render_window,
    score_window,
    sentence_starts,
)
from engine.results.snippet_explanation import explain_snippet


def spans_of(text: str) -> list[tuple[int, int]]:
    """Spans of space-separated ASCII words (enough for these hand-made texts)."""
    spans = []
    position = 0
    for word in text.split(" "):
        stripped = word.strip(".:,!")
        if stripped:
            start = position + word.index(stripped)
            spans.append((start, start + len(stripped)))
        position += len(word) + 1
    return spans


@pytest.mark.parametrize(("numerator", "quotient"), [(47, 23), (-1, 0), (-3, -1), (0, 0), (48, 24)])
def test_c_division_truncates_toward_zero(numerator: int, quotient: int) -> None:
    assert c_division(numerator, 2) == quotient


@pytest.mark.parametrize(
    ("text", "starts"),
    [
        ("a. b c", [0, 1]),
        ("a.b c", [0]),              # no space after the full stop: not a sentence start
        ("a: b c", [0, 1]),
        ("a ! b", [0]),
        ("a.\n\t b", [0, 1]),
        ("a, b. c", [0, 2]),
    ],
)
def test_sentence_starts(text: str, starts: list[int]) -> None:
    assert sentence_starts(text, spans_of(text)) == starts


def test_a_long_phrase_centres_with_c_division() -> None:
    # phrase of 60 tokens at 10 in a 100-token document: iAdj = 10 - (48 - 60) / 2 = 10 - (-6) = 16
    assert score_window([(0, 10, 60)], 10, 48, 100) == (1000, 16)


def test_repeats_score_one_and_new_phrases_a_thousand() -> None:
    hits = [(0, 5, 1), (1, 6, 1), (0, 7, 1)]
    assert score_window(hits, 5, 48, 200)[0] == 2001


def test_no_hits_gives_the_head_of_the_text() -> None:
    text = " ".join(f"w{index}" for index in range(60))
    assert fts5_snippet(text, spans_of(text), []) == " ".join(f"w{index}" for index in range(48)) + " … "


def test_a_window_past_the_end_returns_the_tail_with_punctuation() -> None:
    text = "a b c d!!"
    assert render_window(text, spans_of(text), 2, 48) == " … c d!!"


def test_explanation_records_the_sentence_candidate_that_wins() -> None:
    text = "alpha " * 30 + "end. " + "middle " * 30 + "lantern " + "tail " * 30
    spans = spans_of(text.strip())
    explanation = explain_snippet(text, spans, [(0, 61, 1)])
    assert [(c.kind, c.start, c.score, c.chosen) for c in explanation.candidates] == [
        ("hit", 38, 1000, True), ("sentence", 31, 1100, True)]
    assert explanation.start == 31
    assert explanation.lines()[-1] == "chosen start 31 (score 1100)"


def test_the_window_size_is_limited_to_fts5s_range() -> None:
    with pytest.raises(ValueError, match="1..64"):
        fts5_snippet("a", [(0, 1)], [], tokens_per_window=0)
