"""What the query policy makes of a query, in the words a teaching view shows.

Owns: `describe_query`, one query's plan as the policy makes it (its JavaScript-trimmed
text and UTF-16 length, the whitespace-split terms, each term's phrase, the prefix term,
the FTS5 MATCH string the SQLite backend sends, the CJK retry plan) with plain-language
warnings about what changes its results, for the explorer's Query panel. Must not touch:
any rule: the split, the trim, the limit of 4,096 units, the phrases and the retry are
the query stage's own (`engine.query.user_query`, `engine.query.cjk`), run here on the
search profile's analyzer exactly as a search runs them; the reasons a word gives for
finding nothing are `engine.inspection.no_hits`'.

Warnings, one per fact that changes what the query finds:

* every reason of `no_hit_reasons` (an empty phrase, a `*` that is no wildcard, an
  operator word that is literal);
* a term that is several tokens is a phrase: its tokens must be adjacent, in order;
* in prefix mode only the last term completes (and of a phrase, its last token);
* a term holding CJK is one `unicode61` token: when the words find nothing in scope,
  the CJK terms are searched again as literal substrings (the retry plan).

A query the policy refuses (empty, too long) raises its `QueryError`, with the product's
wording, as a search would.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.inspection.no_hits import no_hit_reasons
from engine.inspection.text_matches import query_plans
from engine.query.ast import Phrase, QueryPlan
from engine.query.user_query import (
    MAX_QUERY_UNITS,
    check_match_mode,
    fts5_match_expression,
    split_terms,
    utf16_units,
    validate_query,
)


@dataclass(frozen=True, slots=True)
class TermPlan:
    """One whitespace-separated term of a query and the phrase it became."""

    term: str
    phrase: Phrase


@dataclass(frozen=True, slots=True)
class QueryDescription:
    """A query as the policy planned it (module docstring); `to_json` is the panel's data."""

    raw: str
    trimmed: str
    match: str
    terms: tuple[TermPlan, ...]
    plan: QueryPlan
    retry: QueryPlan | None
    match_expression: str
    warnings: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: numbers as numbers, a phrase as its terms and prefix flag."""
        return {
            "query": self.raw,
            "trimmed": self.trimmed,
            "units": utf16_units(self.trimmed),
            "maxUnits": MAX_QUERY_UNITS,
            "match": self.match,
            "terms": [{"term": item.term, "tokens": list(item.phrase.terms),
                       "prefix": item.phrase.prefix, "empty": item.phrase.is_empty}
                      for item in self.terms],
            "phrases": [phrase_json(phrase) for phrase in self.plan.phrases],
            "matchesNothing": self.plan.matches_nothing,
            "fts5Match": self.match_expression,
            "cjkRetry": None if self.retry is None else {
                "phrases": [phrase_json(phrase) for phrase in self.retry.phrases],
                "substrings": [term.text for term in self.retry.substrings]},
            "warnings": list(self.warnings),
        }


def phrase_json(phrase: Phrase) -> dict[str, Any]:
    """A phrase as JSON: `{"terms": [...], "prefix": bool}` (what `explain --json` writes).

    >>> phrase_json(Phrase(("per", "session"), True))
    {'terms': ['per', 'session'], 'prefix': True}
    """
    return {"terms": list(phrase.terms), "prefix": phrase.prefix}


def describe_query(raw: str, match: str = "exact") -> QueryDescription:
    """The plan of `raw` searched with `match`, and its warnings (module docstring).

    >>> description = describe_query("per-session OR 会议", "exact")
    >>> [list(item.phrase.terms) for item in description.terms]
    [['per', 'session'], ['or'], ['会议']]
    >>> description.match_expression
    '"per-session" AND "OR" AND "会议"'
    >>> for warning in description.warnings:
    ...     print(warning)
    `OR` is a literal word here, not an operator: every word of the query must occur in the message
    `per-session` is the phrase "per session": its words must be adjacent and in this order
    `会议` holds CJK characters, which unicode61 keeps in one token with their neighbours: when the words find nothing in scope, the search runs again with `会议` as a literal substring of the message text
    """
    from engine.analysis.profiles import SEARCH_PROFILE  # built when a plan is shown

    check_match_mode(match)
    trimmed = validate_query(raw)
    plans = query_plans(trimmed, SEARCH_PROFILE.analyzer(), match=match)
    plan, retry = plans[0], (plans[1] if len(plans) > 1 else None)
    terms = tuple(TermPlan(term, phrase)
                  for term, phrase in zip(split_terms(trimmed), plan.phrases, strict=True))
    warnings = [*no_hit_reasons(trimmed, match), *_phrase_warnings(terms, match)]
    if retry is not None:
        warnings.extend(_retry_warnings(retry))
    return QueryDescription(
        raw=raw, trimmed=trimmed, match=match, terms=terms, plan=plan, retry=retry,
        match_expression=fts5_match_expression([item.term for item in terms],
                                               prefix=match == "prefix"),
        warnings=tuple(warnings))


def _phrase_warnings(terms: tuple[TermPlan, ...], match: str) -> list[str]:
    """What a phrase of several tokens, and the prefix term, change."""
    warnings = []
    for item in terms:
        if len(item.phrase.terms) > 1:
            words = " ".join(item.phrase.terms)
            warnings.append(f'`{item.term}` is the phrase "{words}": its words must be '
                            "adjacent and in this order")
    if match == "prefix" and terms and not terms[-1].phrase.is_empty:
        last = terms[-1]
        token = last.phrase.terms[-1]
        warnings.append(f"prefix mode: only the last word completes; `{last.term}` matches "
                        f"any word that starts with \"{token}\""
                        + (" (its last token)" if len(last.phrase.terms) > 1 else "")
                        + (", the other words must occur whole" if len(terms) > 1 else ""))
    return warnings


def _retry_warnings(retry: QueryPlan) -> list[str]:
    """What the CJK retry does, one warning per substring."""
    return [f"`{term.text}` holds CJK characters, which unicode61 keeps in one token with "
            "their neighbours: when the words find nothing in scope, the search runs again "
            f"with `{term.text}` as a literal substring of the message text"
            for term in retry.substrings]
