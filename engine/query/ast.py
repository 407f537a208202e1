"""The immutable values a query becomes before any backend sees it.

Owns: `Phrase` and `QueryPlan` (a plan's `SubstringTerm`s are `query.substring_term`'s,
made only by the CJK retry). Must not touch: tokenization (the analyzer produces a
phrase's terms), matching, scoring or storage.

Meaning (behaviour.md §4, tokenizers.md §2.3):
* a `Phrase` is one user term after analysis: its tokens must occur at adjacent positions
  of the same message; with `prefix=True` the *last* token matches any indexed term that
  starts with it (FTS5 `"…"*`). A phrase with no terms (the user typed only separators,
  e.g. `-` or `"`) matches nothing;
* a `SubstringTerm` (`query.substring_term`) is a CJK term of the zero-hit retry
  (behaviour.md §7.1): its literal text must occur in the message text, with SQLite `LIKE`
  semantics (see `query.cjk`);
* a `QueryPlan` ANDs everything it holds: a message matches when every phrase and every
  substring matches it. The phrase order is the order of the user's terms; it is also the
  phrase order of `bm25()` and `snippet()`.

Neither is a dataclass: every search imports this module, and a frozen dataclass's class
costs many times a NamedTuple's (`Phrase`) or a plain slotted class's (`QueryPlan`) to
make. Both read, compare and print as the dataclasses did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from engine.light_values import FrozenValue, same_kind_equal, same_kind_unequal

if TYPE_CHECKING:  # an annotation only: a one-word search makes no substring
    from engine.query.substring_term import SubstringTerm


class Phrase(NamedTuple):
    """Adjacent analyzed terms; `prefix` makes the last one a prefix. Empty = no match.

    >>> Phrase(("per", "session"), prefix=True).is_empty
    False
    >>> Phrase(()).is_empty, Phrase(("a",)) == ("a", False), Phrase(("a",)) == Phrase(("a",))
    (True, False, True)
    """

    terms: tuple[str, ...]
    prefix: bool = False

    @property
    def is_empty(self) -> bool:
        """True for the phrase of a term made only of separators: it matches nothing."""
        return not self.terms

    # equal only to a phrase with the same fields, never to a plain tuple or another
    # NamedTuple of the same shape (as the dataclass it was)
    __eq__, __ne__, __hash__ = same_kind_equal, same_kind_unequal, tuple.__hash__


class QueryPlan(FrozenValue):
    """All phrases and substrings of one query, ANDed.

    A frozen value with `__slots__` (`engine.light_values.FrozenValue`): it reads, compares,
    hashes and prints as the frozen dataclass it was (`phrases` and `substrings`,
    keywords, a class pattern), and `matches_nothing` is set once, when the plan is made
    (every search of every partition asks).

    >>> QueryPlan((Phrase(("deploy",)), Phrase(()), Phrase(("fix",)))).matches_nothing
    True
    >>> from engine.query.substring_term import SubstringTerm
    >>> QueryPlan((), (SubstringTerm("会议"),)).matches_nothing
    False
    >>> QueryPlan((Phrase(("a",)),))
    QueryPlan(phrases=(Phrase(terms=('a',), prefix=False),), substrings=())
    """

    __slots__ = ("matches_nothing", "phrases", "substrings")
    __match_args__ = _compared = ("phrases", "substrings")

    phrases: tuple[Phrase, ...]
    substrings: tuple[SubstringTerm, ...]
    #: True when the plan cannot match any message (no parts, or an empty phrase).
    matches_nothing: bool

    def __init__(self, phrases: tuple[Phrase, ...],
                 substrings: tuple[SubstringTerm, ...] = ()) -> None:
        nothing = (not phrases and not substrings) or any(phrase.is_empty for phrase in phrases)
        object.__setattr__(self, "phrases", phrases)
        object.__setattr__(self, "substrings", substrings)
        object.__setattr__(self, "matches_nothing", nothing)
