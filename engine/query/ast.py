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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # an annotation only: a one-word search makes no substring
    from engine.query.substring_term import SubstringTerm


@dataclass(frozen=True, slots=True)
class Phrase:
    """Adjacent analyzed terms; `prefix` makes the last one a prefix. Empty = no match.

    >>> Phrase(("per", "session"), prefix=True).is_empty
    False
    >>> Phrase(()).is_empty
    True
    """

    terms: tuple[str, ...]
    prefix: bool = False

    @property
    def is_empty(self) -> bool:
        """True for the phrase of a term made only of separators: it matches nothing."""
        return not self.terms


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """All phrases and substrings of one query, ANDed."""

    phrases: tuple[Phrase, ...]
    substrings: tuple[SubstringTerm, ...] = ()
    #: True when the plan cannot match any message (no parts, or an empty phrase); set
    #: once, when the plan is made (every search of every partition asks).
    matches_nothing: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Compute `matches_nothing`.

        >>> QueryPlan((Phrase(("deploy",)), Phrase(()), Phrase(("fix",)))).matches_nothing
        True
        >>> from engine.query.substring_term import SubstringTerm
        >>> QueryPlan((), (SubstringTerm("会议"),)).matches_nothing
        False
        """
        nothing = (not self.phrases and not self.substrings) or any(
            phrase.is_empty for phrase in self.phrases)
        object.__setattr__(self, "matches_nothing", nothing)
