"""The `unicode61` tokenizer's caches are bounded: whatever their size, the terms are those
of the clear walk, and neither cache holds more than the size it was given.

Owns: the property that `Unicode61Tokenizer(cache_entries=...)` changes no answer, only
how many pieces (`PieceTerms`) and raw tokens (`CompiledTokenizer.fold_all`) are kept.
The size is passed as an argument (never by patching a module constant). Must not touch:
the rules of the tokenizer (tests/analysis/test_unicode61.py) or SQLite (the parity tests).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.unicode61 import PieceTerms, Unicode61Tokenizer
from engine.analysis.unicode61_patterns import compile_options

#: Words that repeat (so the caches hit, fill and empty) with non-ASCII and long ones.
WORDS = st.sampled_from([
    "word", "Word", "café", "CAFÉ", "naïve", "Σίσυφος", "ς", "😀", "🤯x", "x\u0301y", "東京",
    "snake_case", "a-b", "e\u0308", "\ud800", "y" * 70 + "é", "user@example.com",
])
TEXT = st.lists(
    st.one_of(WORDS, st.text(max_size=8)), max_size=12
).map(" ".join)


def fresh_tokenizer(cache_entries: int, remove_diacritics: int) -> Unicode61Tokenizer:
    """A tokenizer with caches of `cache_entries` and its own compiled patterns (so its
    fold cache starts empty and is shared with no other test)."""
    tokenizer = Unicode61Tokenizer(remove_diacritics=remove_diacritics, cache_entries=cache_entries)
    tokenizer._compiled = compile_options.__wrapped__(tokenizer.options)
    tokenizer._compiled.clear_budget = 0  # the compiled patterns from the first text
    return tokenizer


@settings(max_examples=150, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=10), st.integers(1, 4), st.sampled_from([0, 1, 2]))
def test_any_cache_size_gives_the_terms_of_the_clear_walk(
        texts: list[str], cache_entries: int, remove_diacritics: int) -> None:
    tokenizer = fresh_tokenizer(cache_entries, remove_diacritics)
    for text in texts + texts:  # the second time round meets what the caches kept
        clear = tokenizer.tokens(text)
        assert tokenizer.terms(text) == [token.text for token in clear]
        assert tokenizer.token_spans(text) == [
            (token.text, token.start, token.end) for token in clear]
        assert len(tokenizer._piece_terms) <= cache_entries
        assert len(tokenizer._compiled.fold_cache) <= cache_entries


def test_a_tiny_cache_and_the_default_give_the_same_terms_of_many_distinct_words() -> None:
    words = [f"mot{number}é Wörd{number % 7} {number}" for number in range(300)]
    tiny, default = fresh_tokenizer(3, 2), fresh_tokenizer(Unicode61Tokenizer().cache_entries, 2)
    for text in words:
        assert tiny.terms(text) == default.terms(text) == [t.text for t in tiny.tokens(text)]
        assert len(tiny._piece_terms) <= 3 and len(tiny._compiled.fold_cache) <= 3
    assert len(default._piece_terms) > 3  # the default kept what the tiny one could not


def test_piece_terms_past_its_entries_are_made_and_not_kept() -> None:
    pieces = PieceTerms(str.split, entries=2)
    assert [pieces[piece] for piece in ("a", "b", "c", "a")] == [("a",), ("b",), ("c",), ("a",)]
    assert sorted(pieces) == ["a", "b"]
