"""The table of known, explained differences the parity tests tolerate (ideally empty).

Owns: `KNOWN_DIVERGENCES`, the `Divergence` entry type and `recognised`, which the
differential tests call before comparing one request. Must not touch: engine code, the
strategies, the comparisons themselves.

Rules for an entry:
* it names a REAL difference that the parity test files cannot fix (an engine issue for
  its owner, or an upstream behaviour the reference deliberately does not copy);
* `recognises(case)` is a narrow predicate over the inputs (corpus, request), never over
  the outputs, so it cannot hide an unrelated failure;
* `applies_to` names the tests that consult it; each of those tests asserts, at the end of
  its hypothesis run, that every entry applying to it fired at least once, and
  `test_every_known_divergence_still_reproduces` runs each entry's `reproducer` and
  requires the difference to still be there, so an entry goes stale loudly once the
  engine is fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.model import SearchRequest
from tests.parity.strategies import Corpus

#: The tests that read this table.
BACKEND_DIFFERENTIAL = "backend_differential"
UPSTREAM_SQL = "upstream_sql"


@dataclass(frozen=True, slots=True)
class DivergenceCase:
    """The inputs of one compared request."""

    corpus: Corpus
    request: SearchRequest
    reconciled: bool


@dataclass(frozen=True, slots=True)
class Divergence:
    """One known difference: what it is, why it is tolerated, and how to recognise it."""

    id: str
    description: str
    reason: str
    applies_to: frozenset[str]
    recognises: Callable[[DivergenceCase], bool]
    #: A minimal case that shows the difference (checked to still differ).
    reproducer: DivergenceCase


def _has_lone_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(character) <= 0xDFFF for character in text)


def _lone_surrogate_reproducer() -> DivergenceCase:
    from engine.model import SessionWindow
    from tests.parity.strategies import AppendEvent, PutWindow, corpus_of

    corpus = corpus_of([[
        PutWindow(SessionWindow("w", "agent:main:main")),
        AppendEvent("w", {"type": "message", "id": "m1", "parentId": None, "timestamp": 1,
                          "message": {"role": "user", "content": "saffron \ud800 x"}}, 1.0),
    ]])
    return DivergenceCase(corpus, SearchRequest("saffron\ud800x", agent_id="main"), reconciled=False)


KNOWN_DIVERGENCES: tuple[Divergence, ...] = (
    Divergence(
        id="sqlite-query-lone-surrogate",
        description=(
            "A query holding a lone surrogate (U+D800-U+DFFF) makes SqliteBackend.search raise "
            "UnicodeEncodeError (a traceback) when it binds the MATCH / LIKE parameters; the "
            "reference answers (here: the phrase `saffron x`, one hit)."
        ),
        reason=(
            "Engine bug in engine/backends/sqlite_fts5.py (not a parity-test file): the query "
            "text should reach SQLite as UTF-8 the way upstream's JavaScript strings do, lone "
            "surrogates becoming U+FFFD (`storable_text` already does this for message text). "
            "The reference's CJK substring needles should make the same replacement, since "
            "the stored text holds U+FFFD. Owner: SQLite backend / query policy."
        ),
        applies_to=frozenset({BACKEND_DIFFERENTIAL}),
        recognises=lambda case: _has_lone_surrogate(case.request.query),
        reproducer=_lone_surrogate_reproducer(),
    ),
)


def recognised(test: str, case: DivergenceCase) -> list[Divergence]:
    """The entries applying to `test` whose predicate recognises `case`."""
    return [entry for entry in KNOWN_DIVERGENCES if test in entry.applies_to and entry.recognises(case)]
