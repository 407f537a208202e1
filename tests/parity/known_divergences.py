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

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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


def _cjk_term_with_lone_surrogate(case: DivergenceCase) -> bool:
    """A query term holds both a lone surrogate and a Han/Kana/Hangul character."""
    return any(
        _has_lone_surrogate(term) and re.search("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]", term)
        for term in case.request.query.split()
    )


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


def rebuilt_windows(corpus: Corpus) -> dict[str, set[float]]:
    """Windows that a reconcile rebuilds at some point, with the timestamps of their messages.

    Replays each window's appends through the forward-indexing decision
    (`lifecycle.classify_append`); a window that ever turns dirty is rebuilt by the next
    reconcile. (A window clean at a reconcile keeps its forward state, so the replay
    without reconciles finds exactly the windows some reconcile rebuilds.)"""
    from engine.index.lifecycle import classify_append
    from engine.model import StoredEvent
    from engine.transcript.projection import extract_index_entry
    from tests.parity.strategies import AppendEvent, DeleteSession, PutWindow

    states: dict[str, Any] = {}
    counts: dict[str, int] = {}
    stamps: dict[str, set[float]] = {}
    dirty: set[str] = set()
    keys: dict[str, str] = {}
    for transaction in corpus.transactions:
        for operation in transaction:
            if isinstance(operation, PutWindow):
                keys[operation.window.session_id] = operation.window.session_key
            elif isinstance(operation, DeleteSession):
                for session_id in [sid for sid, key in keys.items() if key == operation.session_key]:
                    for table in (states, counts, stamps, keys):
                        table.pop(session_id, None)
                    dirty.discard(session_id)
            elif isinstance(operation, AppendEvent):
                session_id = operation.session_id
                seq = counts.get(session_id, 0)
                counts[session_id] = seq + 1
                stored = StoredEvent(session_id, seq, operation.event, operation.created_at)
                entry = extract_index_entry(stored)
                if entry is not None:
                    stamps.setdefault(session_id, set()).add(entry.timestamp)
                _, states[session_id] = classify_append(
                    states.get(session_id), stored, indexable=entry is not None)
                if states[session_id] is not None and states[session_id].needs_rebuild:
                    dirty.add(session_id)
    return {session_id: stamps.get(session_id, set()) for session_id in dirty}


def _recent_tie_across_rebuilt_windows(case: DivergenceCase) -> bool:
    """`recent` order after a reconcile, two rebuilt windows holding an equal timestamp."""
    if case.request.order != "recent" or not case.reconciled:
        return False
    rebuilt = list(rebuilt_windows(case.corpus).values())
    return any(first & second for index, first in enumerate(rebuilt) for second in rebuilt[index + 1:])


def _recent_tie_reproducer() -> DivergenceCase:
    from engine.model import SessionWindow
    from tests.parity.strategies import AppendEvent, PutWindow, corpus_of

    def message(message_id: str, parent: str | None, text: str) -> dict[str, Any]:
        return {"type": "message", "id": message_id, "parentId": parent, "timestamp": 5,
                "message": {"role": "user", "content": text}}

    transactions = [
        [PutWindow(SessionWindow(session_id, f"agent:main:{session_id}")),
         AppendEvent(session_id, message("m1", None, "saffron one"), 1.0),
         AppendEvent(session_id, message("m2", "m1", "saffron two"), 2.0),
         AppendEvent(session_id, {"type": "leaf", "id": "l1", "parentId": "m2", "targetId": "m1"}, 3.0)]
        for session_id in ("b", "a")  # put in this order: store order b, a; id order a, b
    ]
    return DivergenceCase(corpus_of(transactions), SearchRequest("saffron", session_keys=(), order="recent"),
                          reconciled=True)


def _folded(text: str) -> str:
    """Case- and diacritic-folded text, to guess (generously) whether a query can hit it."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _message_texts(corpus: Corpus) -> list[str]:
    """The searchable text of every message event in the corpus (blocks joined, §2.3)."""
    from engine.transcript.projection import message_text
    from tests.parity.strategies import AppendEvent

    texts = []
    for transaction in corpus.transactions:
        for operation in transaction:
            if isinstance(operation, AppendEvent) and isinstance(operation.event.get("message"), dict):
                text = message_text(operation.event["message"])
                if text is not None:
                    texts.append(text)
    return texts


def _may_hit_text_with_nul(case: DivergenceCase) -> bool:
    """Some message text holds a NUL and contains every word of the query (folded)."""
    words = [_folded(word) for word in re.findall(r"\w+", case.request.query)]
    if not words:
        return False
    return any(
        "\x00" in text and all(word in _folded(text) for word in words)
        for text in _message_texts(case.corpus)
    )


KNOWN_DIVERGENCES: tuple[Divergence, ...] = (
    Divergence(
        id="cjk-needle-with-lone-surrogate",
        description=(
            "The CJK substring retry with a query term holding a lone surrogate: for the text "
            "'会议\\ud800讨论' and the query '议\\ud800讨', the SQLite backend finds the message "
            "(its LIKE parameter binds the surrogate as U+FFFD, like the stored text), the "
            "reference finds nothing."
        ),
        reason=(
            "Engine difference in the reference kernel (engine/query/cjk.py substring needles "
            "or engine/index/kernel.py, not parity-test files): the stored row text holds U+FFFD "
            "where the message had a lone surrogate, but the needle keeps the surrogate, so "
            "`substring_matches` never sees it. Upstream binds a JavaScript string as UTF-8 "
            "(U+FFFD), so the SQLite backend is right; the needles should get the same "
            "replacement."
        ),
        applies_to=frozenset({BACKEND_DIFFERENTIAL, UPSTREAM_SQL}),
        recognises=_cjk_term_with_lone_surrogate,
        reproducer=single_message_case("会议\ud800讨论", "议\ud800讨"),
    ),
    Divergence(
        id="snippet-text-with-nul",
        description=(
            "An excerpt of a message whose text holds a NUL (U+0000): SQLite's snippet() "
            "returns 'a c' for the text 'a \\x00 b c' and the query 'c'; the reference returns "
            "'a \\x00 b c'."
        ),
        reason=(
            "SQLite quirk the reference does not emulate (engine/results/snippet.py and "
            "engine/index/fast_snippet.py, not parity-test files): FTS5's highlight code "
            "appends the excerpt in pieces with sqlite3_mprintf('%.*s'), which stops at a NUL, "
            "so each piece (the text up to a phrase hit, the hit, the text after it up to the "
            "window end) is cut at its first NUL. Upstream shows the same cut text; the "
            "reference should cut each piece the same way."
        ),
        applies_to=frozenset({BACKEND_DIFFERENTIAL, UPSTREAM_SQL}),
        recognises=_may_hit_text_with_nul,
        reproducer=single_message_case("a \x00 b c", "c"),
    ),
    Divergence(
        id="recent-ties-after-reconcile",
        description=(
            "`order: recent` breaks timestamp ties by insertion order (FTS rowid / doc id, "
            "DESC). A reconcile re-inserts the rows of the windows it rebuilds, and the two "
            "backends rebuild them in different orders: the reference in store order (first "
            "insertion of the window), the SQLite backend in session_id order (`ORDER BY "
            "w.session_id` in `_windows_needing_reconcile`). Windows put as b, a, both rewound, "
            "same timestamps, reconciled: reference [a/m1, b/m1], SQLite [b/m1, a/m1]."
        ),
        reason=(
            "Engine inconsistency between engine/backends/sqlite_fts5.py and "
            "engine/backends/reference.py (not parity-test files); upstream leaves the "
            "reconcile order open. One fix: the SQLite backend lists windows needing work "
            "`ORDER BY w.rowid` (the insertion order of session_windows, the reference's store "
            "order)."
        ),
        applies_to=frozenset({BACKEND_DIFFERENTIAL}),
        recognises=_recent_tie_across_rebuilt_windows,
        reproducer=_recent_tie_reproducer(),
    ),
)


def recognised(test: str, case: DivergenceCase) -> list[Divergence]:
    """The entries applying to `test` whose predicate recognises `case`."""
    return [entry for entry in KNOWN_DIVERGENCES if test in entry.applies_to and entry.recognises(case)]
