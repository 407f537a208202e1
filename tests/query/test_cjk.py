"""The CJK retry decisions (behaviour.md §7.1) and the LIKE model checked against SQLite."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.unicode61 import Unicode61Tokenizer
from engine.query.ast import Phrase, QueryPlan
from engine.query.cjk import (
    like_pattern,
    retry_plan,
    substring_excerpt,
    substring_matches,
)
from engine.query.substring_term import SubstringTerm

ANALYZER = Unicode61Tokenizer(remove_diacritics=2)


@pytest.mark.parametrize(
    ("raw", "match", "plan"),
    [
        ("会议", "exact", QueryPlan((), (SubstringTerm("会议"),))),
        ("会议 cat", "exact", QueryPlan((Phrase(("cat",)),), (SubstringTerm("会议"),))),
        ("会议 ca", "prefix", QueryPlan((Phrase(("ca",), prefix=True),), (SubstringTerm("会议"),))),
        ("ca 会议", "prefix", QueryPlan((Phrase(("ca",)),), (SubstringTerm("会议"),))),
        ("会议-cat 评审", "exact", QueryPlan((), (SubstringTerm("会议-cat"), SubstringTerm("评审")))),
        ("テスト per-session", "exact", QueryPlan((Phrase(("per", "session")),), (SubstringTerm("テスト"),))),
        ("회의 -", "exact", QueryPlan((Phrase(()),), (SubstringTerm("회의"),))),
        ("会\x00议", "exact", QueryPlan((), (SubstringTerm("会"), SubstringTerm("议")))),
    ],
)
def test_retry_plans(raw: str, match: str, plan: QueryPlan) -> None:
    assert retry_plan(raw, ANALYZER, match=match) == plan


@pytest.mark.parametrize("raw", ["cat", "per-session communi", "Café ΟΣ", "😀 🤯"])
def test_no_retry_without_cjk(raw: str) -> None:
    assert retry_plan(raw, ANALYZER, match="exact") is None


@pytest.mark.parametrize(
    ("needle", "pattern"),
    [("会议", "%会议%"), ("50%", "%50\\%%"), ("a_b", "%a\\_b%"), ("c:\\dir", "%c:\\\\dir%")],
)
def test_like_patterns(needle: str, pattern: str) -> None:
    assert like_pattern(needle) == pattern


def sqlite_like(text: str, needle: str) -> bool:
    connection = sqlite3.connect(":memory:")
    try:
        (value,) = connection.execute(
            "SELECT ? LIKE ? ESCAPE '\\'", (text, like_pattern(needle))).fetchone()
    finally:
        connection.close()
    return bool(value)


@pytest.mark.parametrize(
    ("text", "needle", "expected"),
    [
        ("明天下午三点开项目评审会议讨论排期", "会议", True),
        ("明天下午三点开项目评审会议讨论排期", "会 议", False),
        ("CAT", "cat", True),
        ("ÉCOLE", "école", False),
        ("Straße", "STRASSE", False),
        ("İstanbul", "istanbul", False),
        ("100% sure", "0%", True),
        ("100 sure", "0%", False),
        ("a_b", "a_b", True),
        ("axb", "a_b", False),
        ("back\\slash", "k\\s", True),
        ("before\x00会议", "会议", False),
        ("会议\x00after", "会议", True),
    ],
)
def test_substring_matches_like_sqlite(text: str, needle: str, expected: bool) -> None:
    assert substring_matches(text, needle) is expected
    assert sqlite_like(text, needle) is expected


like_alphabet = st.sampled_from(list("aAbBzZ%_\\ \x00ßẞéÉ会议テスト회의𠀀İı."))


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=like_alphabet, max_size=20),
       needle=st.text(alphabet=like_alphabet.filter(lambda c: c != "\x00"), min_size=1, max_size=4))
def test_substring_matches_equals_sqlite_like_for_any_input(text: str, needle: str) -> None:
    assert substring_matches(text, needle) == sqlite_like(text, needle)


def test_excerpt_of_a_short_message_is_the_whole_message() -> None:
    assert substring_excerpt("明天会议 cat", ["会议"]) == "明天会议 cat"


def test_excerpt_keeps_32_characters_before_the_first_needle() -> None:
    text = "前" * 100 + "会议" + "后" * 300
    excerpt = substring_excerpt(text, ["会议", "后"])
    assert excerpt == " … " + "前" * 32 + "会议" + "后" * 126 + " … "


def test_excerpt_grows_to_hold_a_long_needle() -> None:
    needle = "会" * 300
    text = "x" * 50 + needle + "y" * 10
    excerpt = substring_excerpt(text, [needle])
    assert excerpt == " … " + "x" * 32 + needle + " … "


def test_excerpt_matches_ascii_case_insensitively_like_the_filter() -> None:
    text = "z" * 40 + "ABC会议" + "z" * 200
    assert substring_excerpt(text, ["abc会议"]).startswith(" … " + "z" * 32 + "ABC会议")
