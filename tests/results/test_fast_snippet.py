"""The bisecting snippet window chooser and its sentence starts equal the clear
`results.snippet` versions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.profiles import SEARCH_PROFILE
from engine.results.fast_snippet import (
    fast_fts5_snippet,
    fast_fts5_snippet_matches,
    fast_sentence_starts,
)
from engine.results.snippet import fts5_snippet, fts5_snippet_matches, sentence_starts

ANALYZER = SEARCH_PROFILE.analyzer()
PIECES = ["alpha", "beta", "gamma", "x", "end.", "colon:", "\n", ". ", "  ", "épée"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), max_size=160).map(" ".join),
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 170), st.integers(1, 3)), max_size=40),
    st.integers(1, 64),
)
def test_fast_snippet_equals_the_clear_version(text, hits, tokens_per_window):
    spans = [(token.start, token.end) for token in ANALYZER.tokens(text)]
    if not spans:
        return
    expected = fts5_snippet(text, spans, hits, tokens_per_window=tokens_per_window)
    assert fast_fts5_snippet(text, spans, hits, tokens_per_window=tokens_per_window) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES + ["a\x00b", "\x00", "per-session"]), max_size=60).map(" ".join),
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 70), st.integers(1, 3)), max_size=8),
    st.sampled_from([1, 3, 16, 48, 64]),
)
def test_fast_snippet_and_its_matches_equal_the_clear_version(text, hits, tokens_per_window):
    # Mostly rows no longer than their window (the whole row is the excerpt), NULs and
    # instances past the row's end or overlapping included.
    spans = [(token.start, token.end) for token in ANALYZER.tokens(text)]
    assert fast_fts5_snippet_matches(text, spans, hits, tokens_per_window=tokens_per_window) == \
        fts5_snippet_matches(text, spans, hits, tokens_per_window=tokens_per_window)


def test_a_row_with_thousands_of_hits_gets_the_same_window():
    text = "payload " * 3000 + "marker " + "bulk " * 200
    spans = [(token.start, token.end) for token in ANALYZER.tokens(text)]
    hits = [(0, position, 1) for position in range(3000)] + [(1, 3000, 1)]
    assert fast_fts5_snippet(text, spans, hits) == fts5_snippet(text, spans, hits)



SENTENCE_PIECES = ["a", "bb", ".", ":", " ", "\t", "\n", "\r", ". ", ":\n", "..", "é", "x.y", "  "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SENTENCE_PIECES), max_size=40).map("".join))
def test_fast_sentence_starts_equal_the_clear_version(text):
    spans = [(token.start, token.end) for token in ANALYZER.tokens(text)]
    assert fast_sentence_starts(text, spans) == sentence_starts(text, spans)


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from("ab.: \t\n\r-"), max_size=30),
       st.lists(st.tuples(st.integers(0, 30), st.integers(1, 3)), max_size=12))
def test_fast_sentence_starts_for_any_token_boundaries(text, cuts):
    """Spans of other tokenizers (any increasing, disjoint spans, even over spaces)."""
    spans, position = [], 0
    for gap, length in cuts:
        start = min(position + gap % 4, len(text))
        end = min(start + length, len(text))
        if start >= end:
            break
        spans.append((start, end))
        position = end
    assert fast_sentence_starts(text, spans) == sentence_starts(text, spans)
