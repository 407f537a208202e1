"""The naive phrase matcher: exact, prefix (UTF-8 byte prefix) and the 32,768-byte cut."""

from __future__ import annotations

import pytest

from engine.query.ast import Phrase
from engine.query.phrase_match import phrase_positions, term_matches


@pytest.mark.parametrize(
    ("document", "phrase", "positions"),
    [
        (["per", "session", "communication"], Phrase(("per", "session")), [0]),
        (["per", "sessions"], Phrase(("per", "session")), []),
        (["per", "sessions"], Phrase(("per", "session"), prefix=True), [0]),
        (["periodic", "session"], Phrase(("per", "session"), prefix=True), []),
        (["a", "a", "a", "a"], Phrase(("a", "a", "a")), [0, 1]),
        (["x", "communication", "communi"], Phrase(("communi",), prefix=True), [1, 2]),
        (["x"], Phrase(()), []),
        ([], Phrase(("x",)), []),
        (["会议"], Phrase(("会",), prefix=True), [0]),
        (["明天会议"], Phrase(("会议",), prefix=True), []),
    ],
)
def test_positions(document: list[str], phrase: Phrase, positions: list[int]) -> None:
    assert phrase_positions(document, phrase) == positions


def test_terms_equal_on_their_first_32768_bytes_compare_equal() -> None:
    base = "é" * 16384  # exactly 32,768 bytes
    assert term_matches(base + "a", base + "b", prefix=False) is True
    assert term_matches(base[:-1] + "a", base[:-1] + "b", prefix=False) is False
    assert term_matches(base + "tail", base, prefix=True) is True


def test_prefix_compares_bytes_not_folded_text() -> None:
    assert term_matches("straße", "stras", prefix=True) is False
    assert term_matches("straße", "stra", prefix=True) is True
