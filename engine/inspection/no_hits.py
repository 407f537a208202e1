"""Why a search found nothing, when the query itself says why: the teaching view of a miss.

Owns: the reasons a query's own words give for finding nothing (`no_hit_reasons`), for
the command line to print under "no hits". The query is split and analyzed as the search
splits and analyzes it (`engine.query.user_query`, the search profile's analyzer), so
a reason names the phrase the search really ran, as `explain` shows it. Must not touch:
matching, splitting or tokenizing (the stages' own; nothing here runs a pattern over the
query text but the test for a literal operator word), or printing.

The reasons, one per word of the query that has one:

* a word with no tokens (an emoji, punctuation only) is an empty phrase, which matches
  nothing, so the whole query (its words are ANDed) matches nothing;
* a word holding `*` is searched as its literal words: `*` is no wildcard (FTS5's prefix
  marker is not read from the query); prefix matching is the Control UI palette's
  (`ui-search`) or `--match prefix`'s, for the last word. In prefix mode the last word's
  `*` costs nothing (it was a prefix already), so it has no reason;
* an upper-case `AND`, `OR`, `NOT` or `NEAR` is a literal word, not an operator: every
  word must occur.

Any other miss (no message holds the words) has no reason to give: the answer is simply
that nothing matched.
"""

from __future__ import annotations

from engine.query.ast import Phrase
from engine.query.user_query import split_terms, term_phrases

#: FTS5's operator words, which the query policy quotes into literal words.
OPERATOR_WORDS = frozenset({"AND", "OR", "NOT", "NEAR"})


def no_hit_reasons(query: str, match: str = "exact") -> tuple[str, ...]:
    """What the words of `query` (searched with `match`) say about finding nothing.

    >>> for reason in no_hit_reasons("caf* 🎉 OR"):
    ...     print(reason)
    `caf*` is searched as the literal word "caf": `*` is no wildcard here; prefix matching is the Control UI palette's (try `session-search ui-search caf`) or `--match prefix`'s, for the last word
    `🎉` has no tokens (emoji and punctuation only separate words), so it matches nothing, and neither does the query: leave it out
    `OR` is a literal word here, not an operator: every word of the query must occur in the message
    >>> no_hit_reasons("caf*", "prefix"), no_hit_reasons("cafe crème")
    ((), ())
    """
    from engine.analysis.profiles import SEARCH_PROFILE  # loaded only for a miss

    terms = split_terms(query)
    phrases = term_phrases(terms, SEARCH_PROFILE.analyzer(), prefix=match == "prefix")
    reasons = []
    for term, phrase in zip(terms, phrases, strict=True):
        reason = _reason(term, phrase)
        if reason is not None:
            reasons.append(reason)
    return tuple(reasons)


def _reason(term: str, phrase: Phrase) -> str | None:
    """The reason one word gives, or None."""
    if phrase.is_empty:
        return (f"`{term}` has no tokens (emoji and punctuation only separate words), so "
                "it matches nothing, and neither does the query: leave it out")
    if "*" in term and not phrase.prefix:
        words = " ".join(phrase.terms)
        plural = "s" if len(phrase.terms) > 1 else ""
        return (f'`{term}` is searched as the literal word{plural} "{words}": `*` is no '
                "wildcard here; prefix matching is the Control UI palette's (try "
                f"`session-search ui-search {words}`) or `--match prefix`'s, for the last "
                "word")
    if term in OPERATOR_WORDS:
        return (f"`{term}` is a literal word here, not an operator: every word of the "
                "query must occur in the message")
    return None
