"""Where a query's terms are in a text: spans a teaching view marks in text it shows.

Owns: finding the spans of a text that a query matches, from the analyzer's tokens
(`text_matches`), for text whose answer carries no spans of its own: the Control UI
search's excerpts (`ui-search`, OpenClaw's JSON) and, later, any text the explorer shows.
A search's hits carry the spans the engine found when it cut them
(`engine.model.SearchHit.matched`). Must not touch: matching or ranking (which hits are
found is the search's business: this only marks, in text already returned, the tokens a
query names), or printing.

Rules: the excerpt is tokenized by the analysis profile the store searches with, and
the query is planned as the search plans it (`engine.query.user_query.plan_query`), so
its terms are folded the same way (`Cafe` marks `café`). A span runs from the first
token of a phrase occurrence to the end of its last (`per-session` marks
`Per-session`, the hyphen included); in prefix mode the last term marks every token it
begins. The terms of the CJK retry (`engine.query.cjk.retry_plan`) mark where they occur
inside a token, with the retry's comparison (ASCII letters ignore case). Spans are
token offsets into the excerpt as given, which never change, so no pattern is run over
the raw text.
"""

from __future__ import annotations

from engine.analysis.token import Analyzer, Token
from engine.query.ast import QueryPlan
from engine.query.cjk import first_occurrence, retry_plan
from engine.query.phrase_match import phrase_positions
from engine.query.user_query import plan_query

Span = tuple[int, int]


def text_matches(text: str, query: str, *, match: str = "exact") -> tuple[Span, ...]:
    """The spans of `text` that `query` matches, planned and folded as the search
    profile plans and folds them.

    >>> text = "Café and per-session notes"
    >>> [text[start:end] for start, end in text_matches(text, "cafe per-session")]
    ['Café', 'per-session']
    """
    from engine.analysis.profiles import SEARCH_PROFILE  # built only when marks are shown

    analyzer = SEARCH_PROFILE.analyzer()
    return matched_spans(text, query_plans(query, analyzer, match=match), analyzer)


def query_plans(query: str, analyzer: Analyzer, *, match: str) -> tuple[QueryPlan, ...]:
    """The plans a search may run for `query`: the word plan, then the CJK retry's.

    >>> from engine.analysis.profiles import SEARCH_PROFILE
    >>> [plan.substrings for plan in query_plans("会议 Cafe", SEARCH_PROFILE.analyzer(),
    ...                                          match="exact")]
    [(), (SubstringTerm(text='会议'),)]
    """
    plan = plan_query(query, analyzer, match=match)
    retry = retry_plan(query, analyzer, match=match)
    return (plan,) if retry is None else (plan, retry)


def matched_spans(text: str, plans: tuple[QueryPlan, ...], analyzer: Analyzer) -> tuple[Span, ...]:
    """The spans of `text` that the plans' phrases and substrings match, sorted, with
    overlapping spans merged.

    >>> from engine.analysis.profiles import SEARCH_PROFILE
    >>> analyzer = SEARCH_PROFILE.analyzer()
    >>> text = "Per-session communication; per session. Café!"
    >>> spans = matched_spans(text, query_plans("per-session cafe communi", analyzer,
    ...                                         match="prefix"), analyzer)
    >>> [text[start:end] for start, end in spans]
    ['Per-session', 'communication', 'per session', 'Café']
    >>> text = "明天开项目评审会议讨论"
    >>> [text[s:e] for s, e in matched_spans(text, query_plans("会议", analyzer,
    ...                                                         match="exact"), analyzer)]
    ['会议']
    """
    tokens = analyzer.tokens(text)
    terms = [token.text for token in tokens]
    spans: list[Span] = []
    for plan in plans:
        for phrase in plan.phrases:
            if phrase.is_empty:
                continue
            for index in phrase_positions(terms, phrase):
                spans.append((tokens[index].start, tokens[index + len(phrase.terms) - 1].end))
        for substring in plan.substrings:
            for token in tokens:
                spans.extend(_occurrences(text, token, substring.text))
    return _merged(spans)


def _occurrences(text: str, token: Token, needle: str) -> list[Span]:
    """Where `needle` occurs (the retry's comparison) inside the source of `token`."""
    found: list[Span] = []
    start = token.start
    while start < token.end:
        occurrence = first_occurrence(text[start:token.end], [needle])
        if occurrence is None or occurrence[1] == 0:
            break
        offset, length = occurrence
        found.append((start + offset, start + offset + length))
        start += offset + length
    return found


def _merged(spans: list[Span]) -> tuple[Span, ...]:
    """Sorted spans, each run of overlapping or touching spans made one.

    >>> _merged([(5, 9), (0, 3), (2, 4), (9, 10)])
    ((0, 4), (5, 10))
    """
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return tuple(merged)
