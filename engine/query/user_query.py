"""The product query policy (behaviour.md §4, `session-transcript-search-policy.ts`).

Owns: query validation and its exact error wording, the JavaScript whitespace split, the
FTS5 MATCH string a query becomes, the limit clamp, and `plan_query` (raw string → phrases).
Must not touch: tokenization rules (the analyzer is passed in), SQL execution, scoring.

Rules, in the order they run:
1. `validate_query`: trim with JavaScript `String.prototype.trim` (the whitespace class
   below, *not* Python's `str.strip`, which also strips `\\x1c`–`\\x1f` and `\\x85`); empty →
   `query must not be empty`; more than 4096 UTF-16 code units → `query must not exceed 4096
   characters` (an astral character counts 2).
2. `split_terms`: split on runs of the JavaScript `\\s` class.
3. Each term is one FTS5 string, i.e. one phrase: `"` + term with `"` doubled + `"`; terms
   are joined with ` AND ` (so a term that analyzes to no tokens makes the whole query match
   nothing); in prefix mode the last term gets `*` after its closing quote.
4. `clamp_limit`: `min(max(1, limit ?? 10), 25)`.

One decision of ours: FTS5 reads a MATCH string as a C string, so a NUL would end it
(tokenizers.md §2.1) and raise `unterminated string`. `fts5_match_expression` therefore
writes a NUL as a space. Both are separators to `unicode61`, so the phrase is unchanged and
the reference (which analyzes the raw term) agrees with SQLite.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine.errors import QueryError
from engine.model import JS_WHITESPACE, ORDERS, SEARCHABLE_ROLES, SearchRequest, js_trim
from engine.query.ast import Phrase, QueryPlan

if TYPE_CHECKING:  # an annotation only: the analyzers' module loads when one is made
    from engine.analysis.token import Analyzer

MAX_QUERY_UNITS = 4096
DEFAULT_LIMIT = 10
MAX_LIMIT = 25
MATCH_MODES = ("exact", "prefix")

_WHITESPACE_RUN = re.compile("[" + re.escape(JS_WHITESPACE) + "]+")

EMPTY_QUERY_MESSAGE = "query must not be empty"
LONG_QUERY_MESSAGE = f"query must not exceed {MAX_QUERY_UNITS} characters"


def utf16_units(text: str) -> int:
    """The JavaScript `.length` of `text`: code points above U+FFFF count 2.

    >>> utf16_units("a𐐀")
    3
    """
    if text.isascii():  # every character is one unit (the common case, checked in C)
        return len(text)
    return len(text) + sum(1 for character in text if ord(character) > 0xFFFF)


def validate_query(raw: str) -> str:
    """Trim and check a query; return the trimmed text or raise `QueryError`.

    >>> validate_query("  loan  ")
    'loan'
    >>> validate_query("   ")
    Traceback (most recent call last):
    ...
    engine.errors.QueryError: query must not be empty
    """
    if not isinstance(raw, str):
        raise QueryError("query must be a string")
    query = js_trim(raw)
    if not query:
        raise QueryError(EMPTY_QUERY_MESSAGE)
    if utf16_units(query) > MAX_QUERY_UNITS:
        raise QueryError(LONG_QUERY_MESSAGE)
    return query


def split_terms(query: str) -> list[str]:
    """Split on runs of JavaScript whitespace; empty pieces are dropped.

    >>> split_terms("per-session  communi")
    ['per-session', 'communi']
    >>> split_terms("a\\x1cb\\x85c")  # Python's str.split() would give three terms
    ['a\\x1cb\\x85c']
    """
    return [term for term in _WHITESPACE_RUN.split(query) if term]


def quote_term(term: str) -> str:
    """One term as an FTS5 string: quotes doubled, NUL written as a space.

    >>> quote_term('"OR"')
    '\"\"\"OR\"\"\"'
    """
    return '"' + term.replace("\x00", " ").replace('"', '""') + '"'


def fts5_match_expression(terms: Sequence[str], *, prefix: bool) -> str:
    """The MATCH string of a term list: quoted phrases joined by ` AND `, final `*` if prefix.

    >>> fts5_match_expression(["per", "session", "communi"], prefix=True)
    '"per" AND "session" AND "communi"*'
    >>> fts5_match_expression(['literal', '"OR"'], prefix=False)
    '"literal" AND \"\"\"OR\"\"\"'
    """
    if not terms:
        raise QueryError(EMPTY_QUERY_MESSAGE)
    expression = " AND ".join(quote_term(term) for term in terms)
    return expression + "*" if prefix else expression


def clamp_limit(limit: int | None) -> int:
    """`min(max(1, limit ?? 10), 25)`.

    >>> clamp_limit(None), clamp_limit(0), clamp_limit(3), clamp_limit(99)
    (10, 1, 3, 25)
    """
    value = DEFAULT_LIMIT if limit is None else int(limit)
    return min(max(1, value), MAX_LIMIT)


def check_match_mode(match: str) -> str:
    """Return `match` if it is `exact` or `prefix`; else raise `QueryError`."""
    if match not in MATCH_MODES:
        raise QueryError(f"match must be one of: {', '.join(MATCH_MODES)} (got {match!r})")
    return match


def validate_request(request: SearchRequest) -> str:
    """Check a whole search request in one fixed order; return the trimmed query.

    The order (query, match, order, role) is part of the contract: every backend calls
    this, so a request with several problems is rejected with the same message everywhere.
    """
    query = validate_query(request.query)
    check_match_mode(request.match)
    if request.order not in ORDERS:
        raise QueryError(f"order must be one of: {', '.join(ORDERS)} (got {request.order!r})")
    if request.role is not None and request.role not in SEARCHABLE_ROLES:
        raise QueryError(
            f"role must be one of: {', '.join(SEARCHABLE_ROLES)} (got {request.role!r})"
        )
    return query


def term_phrases(terms: Sequence[str], analyzer: Analyzer, *, prefix: bool) -> tuple[Phrase, ...]:
    """One phrase per term; with `prefix`, the last phrase gets the flag if it has tokens."""
    phrases = [Phrase(tuple(analyzer.terms(term))) for term in terms]
    if prefix and phrases and not phrases[-1].is_empty:
        phrases[-1] = Phrase(phrases[-1].terms, prefix=True)
    return tuple(phrases)


def plan_query(raw: str, analyzer: Analyzer, *, match: str = "exact") -> QueryPlan:
    """Validate, split and analyze a query into its plan (one phrase per term, ANDed)."""
    check_match_mode(match)
    return plan_terms(validate_query(raw), analyzer, match=match)


def plan_terms(query: str, analyzer: Analyzer, *, match: str) -> QueryPlan:
    """The plan of a query already checked (`engine.query.checked_request`: trimmed, not
    empty, `match` one of `MATCH_MODES`): split and analyzed, nothing checked again."""
    return QueryPlan(term_phrases(split_terms(query), analyzer, prefix=match == "prefix"))
