"""The query policy of behaviour.md §4 and tokenizers.md §2.3/§2.4, example by example."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.unicode61 import Unicode61Tokenizer
from engine.errors import QueryError
from engine.query.ast import Phrase, QueryPlan
from engine.query.user_query import (
    JS_WHITESPACE,
    clamp_limit,
    fts5_match_expression,
    plan_query,
    split_terms,
    validate_query,
)

ANALYZER = Unicode61Tokenizer(remove_diacritics=2)

#: Every member of JavaScript's `\s`, listed independently of the module's constant.
JAVASCRIPT_SPACES = [
    "\t", "\n", "\v", "\f", "\r", " ", "\u00a0", "\u1680", *[chr(code) for code in range(0x2000, 0x200B)],
    "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff",
]
#: Characters Python's `str.split()`/`strip()` treat as space but JavaScript does not.
PYTHON_ONLY_SPACES = ["\x1c", "\x1d", "\x1e", "\x1f", "\x85"]


def query_error(raw: str) -> str:
    with pytest.raises(QueryError) as raised:
        validate_query(raw)
    return str(raised.value)


@pytest.mark.parametrize("space", JAVASCRIPT_SPACES, ids=lambda space: f"U+{ord(space):04X}")
def test_every_javascript_space_splits_and_trims(space: str) -> None:
    assert split_terms(f"alpha{space}{space}beta") == ["alpha", "beta"]
    assert validate_query(f"{space}alpha{space}") == "alpha"
    assert query_error(space * 3) == "query must not be empty"


@pytest.mark.parametrize("character", PYTHON_ONLY_SPACES, ids=lambda c: f"U+{ord(c):04X}")
def test_python_only_spaces_neither_split_nor_trim(character: str) -> None:
    assert split_terms(f"alpha{character}beta") == [f"alpha{character}beta"]
    assert validate_query(f"{character}alpha{character}") == f"{character}alpha{character}"


def test_the_whitespace_constant_is_exactly_the_javascript_class() -> None:
    assert sorted(JS_WHITESPACE) == sorted(JAVASCRIPT_SPACES)


@pytest.mark.parametrize(("raw", "trimmed"), [("loan", "loan"), ("  loan  ", "loan"), (" text ", "text")])
def test_valid_queries_are_trimmed(raw: str, trimmed: str) -> None:
    assert validate_query(raw) == trimmed


@pytest.mark.parametrize("raw", ["", "   ", " ", "\u3000\ufeff\t\n"])
def test_blank_queries_are_rejected(raw: str) -> None:
    assert query_error(raw) == "query must not be empty"


def test_the_length_limit_counts_utf16_units_after_the_trim() -> None:
    assert validate_query("x" * 4096) == "x" * 4096
    assert validate_query("  " + "x" * 4096 + "\u3000") == "x" * 4096
    assert query_error("x" * 4097) == "query must not exceed 4096 characters"
    assert query_error("a" * 4097) == "query must not exceed 4096 characters"
    astral = "\U00010400"
    assert validate_query(astral * 2048) == astral * 2048  # 4096 units, 2048 code points
    assert query_error(astral * 2048 + "a") == "query must not exceed 4096 characters"
    assert query_error("a" * 4095 + astral) == "query must not exceed 4096 characters"


@pytest.mark.parametrize(
    ("terms", "prefix", "expression"),
    [
        (["per", "session", "communi"], True, '"per" AND "session" AND "communi"*'),
        (["per-session", "communi"], True, '"per-session" AND "communi"*'),
        (["literal", '"OR"', "key"], True, '"literal" AND """OR""" AND "key"*'),
        (["literal", "OR", "missing"], False, '"literal" AND "OR" AND "missing"'),
        (['"'], False, '""""'),
        (["deploy", "-", "fix"], False, '"deploy" AND "-" AND "fix"'),
        (["NEAR(a", "b)"], False, '"NEAR(a" AND "b)"'),
        (["*one"], False, '"*one"'),
        (["nul\x00byte"], False, '"nul byte"'),
    ],
)
def test_match_expressions(terms: list[str], prefix: bool, expression: str) -> None:
    assert fts5_match_expression(terms, prefix=prefix) == expression


@pytest.mark.parametrize(
    ("limit", "clamped"), [(None, 10), (0, 1), (-5, 1), (1, 1), (24, 24), (25, 25), (26, 25), (1000, 25)]
)
def test_limit_clamp(limit: int | None, clamped: int) -> None:
    assert clamp_limit(limit) == clamped


@pytest.mark.parametrize(
    ("raw", "match", "plan"),
    [
        ("per-session communi", "prefix",
         QueryPlan((Phrase(("per", "session")), Phrase(("communi",), prefix=True)))),
        ("per session communi", "exact",
         QueryPlan((Phrase(("per",)), Phrase(("session",)), Phrase(("communi",))))),
        ('literal "OR" key', "prefix",
         QueryPlan((Phrase(("literal",)), Phrase(("or",)), Phrase(("key",), prefix=True)))),
        ("CAFE communication", "exact", QueryPlan((Phrase(("cafe",)), Phrase(("communication",))))),
        ("deploy - fix", "exact", QueryPlan((Phrase(("deploy",)), Phrase(()), Phrase(("fix",))))),
        ("per -", "prefix", QueryPlan((Phrase(("per",)), Phrase(())))),
        ('"', "prefix", QueryPlan((Phrase(()),))),
        ("état-major", "exact", QueryPlan((Phrase(("etat", "major")),))),
        ("明天下午三点开项目评审会议讨论排期", "exact", QueryPlan((Phrase(("明天下午三点开项目评审会议讨论排期",)),))),
    ],
)
def test_plans(raw: str, match: str, plan: QueryPlan) -> None:
    assert plan_query(raw, ANALYZER, match=match) == plan


def test_an_empty_phrase_empties_the_plan() -> None:
    assert plan_query("deploy - fix", ANALYZER).matches_nothing is True
    assert plan_query("deploy fix", ANALYZER).matches_nothing is False


def test_unknown_match_mode_is_a_query_error() -> None:
    with pytest.raises(QueryError, match="match must be one of: exact, prefix"):
        plan_query("x", ANALYZER, match="fuzzy")


# ---- the quoting never produces FTS5 syntax, whatever the user types ----------------

hostile_text = st.text(
    alphabet=st.sampled_from(list('abc AND OR NOT NEAR(),:*^-+"{}\'.@/\\\x00\x1c\x85\u3000éΣ会😀')),
    min_size=1, max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(raw=hostile_text, prefix=st.booleans())
def test_any_query_is_a_valid_match_string_with_the_planned_meaning(raw: str, prefix: bool) -> None:
    try:
        terms = split_terms(validate_query(raw))
    except QueryError:
        return
    expression = fts5_match_expression(terms, prefix=prefix)
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'unicode61 remove_diacritics 2')")
        connection.execute("INSERT INTO t VALUES (?)", (" ".join(terms),))
        (count,) = connection.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expression,)).fetchone()
    finally:
        connection.close()
    plan = plan_query(raw, ANALYZER, match="prefix" if prefix else "exact")
    # The row holds every term once, so it matches exactly when no phrase is empty.
    assert count == (0 if plan.matches_nothing else 1)


def test_validate_request_checks_query_match_order_role_in_that_order() -> None:
    from engine.model import SearchRequest
    from engine.query.user_query import validate_request

    assert validate_request(SearchRequest("  saffron ")) == "saffron"
    cases = [
        (SearchRequest(" ", match="fuzzy", order="x", role="tool"), "query must not be empty"),
        (SearchRequest("a", match="fuzzy", order="x", role="tool"), "match must be one of"),
        (SearchRequest("a", order="x", role="tool"), "order must be one of"),
        (SearchRequest("a", role="tool"), "role must be one of"),
    ]
    for request, message in cases:
        with pytest.raises(QueryError, match=message):
            validate_request(request)
