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
  engine is fixed (the entry's reproducer also runs as an explicit hypothesis example, so
  "fired" never depends on luck).

Entries removed once the engine was fixed (their reproducers stay as regression tests in
`test_backend_differential.py`): `sqlite-query-lone-surrogate` (d9ea26e),
`snippet-text-with-nul` and `recent-ties-after-reconcile` (324c07f).
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
    """The inputs of one compared request.

    `reconciled`: the request runs right after a `reconcile()` (False before the first one,
    and after appends that follow a reconcile)."""

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


def single_message_case(text: str, query: str) -> DivergenceCase:
    """One window `w` of `agent:main:main` holding one user message `m1`; one request."""
    from engine.model import SessionWindow
    from tests.parity.strategies import AppendEvent, PutWindow, corpus_of

    corpus = corpus_of([[
        PutWindow(SessionWindow("w", "agent:main:main")),
        AppendEvent("w", {"type": "message", "id": "m1", "parentId": None, "timestamp": 1,
                          "message": {"role": "user", "content": text}}, 1.0),
    ]])
    return DivergenceCase(corpus, SearchRequest(query, agent_id="main"), reconciled=False)


#: Empty: every difference the differential tests found so far was fixed in the engine
#: (lone-surrogate queries, NUL excerpts, reconcile order, lone-surrogate CJK needles);
#: their reproducers stand as regression tests in the test modules.
KNOWN_DIVERGENCES: tuple[Divergence, ...] = ()


def recognised(test: str, case: DivergenceCase) -> list[Divergence]:
    """The entries applying to `test` whose predicate recognises `case`."""
    return [entry for entry in KNOWN_DIVERGENCES if test in entry.applies_to and entry.recognises(case)]
