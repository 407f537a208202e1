"""The answers of two `sessions.search` implementations, and how they may differ.

Owns: `Outcome` (a result object or an error's code and message), `our_outcome` (our
server's answer, in-process through its own envelope handling) and the comparisons:
`exact_differences` (hits, order, every field, snippets, flags, scores to 1e-9 relative)
and `statistics_free_differences` (only what bm25 statistics cannot change). Must not
touch: how the other side is reached (the test modules) or which differences are
tolerated (`tests.parity.known_divergences`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from engine.backends.protocol import Backend
from engine.rpc.methods import RpcContext
from engine.rpc.search_method import SEARCH_METHOD
from engine.rpc.server import handle_message

SCORE_RELATIVE_TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class Outcome:
    """A `sessions.search` answer: the result object, or the error's (code, message)."""

    result: dict[str, Any] | None = None
    error: tuple[int, str] | None = None


def our_outcome(backend: Backend, params: dict[str, Any]) -> Outcome:
    """Our server's answer to `params` on `backend` (its own envelope handling, in-process)."""
    response = handle_message(RpcContext(backend), {"jsonrpc": "2.0", "id": 1,
                                                    "method": SEARCH_METHOD, "params": params})
    assert response is not None
    if "error" in response:
        return Outcome(error=(response["error"]["code"], response["error"]["message"]))
    return Outcome(result=response["result"])



HIT_FIELDS = ("sessionKey", "sessionId", "messageId", "role", "timestamp", "snippet")
RESULT_FLAGS = ("truncated", "indexing", "archivedTranscriptsExcluded")


def _outcome_problems(expected: Outcome, actual: Outcome) -> list[str] | None:
    """The difference when either side is an error (None when both are results)."""
    if expected.error is None and actual.error is None:
        return None
    return [] if expected.error == actual.error else [
        f"outcome: openclaw {expected.error or 'a result'!r} vs ours {actual.error or 'a result'!r}"]


def result_differences(expected: Outcome, actual: Outcome, *, ranking: bool) -> list[str]:
    """Every way our answer differs from OpenClaw's (empty when they agree): the error, the
    flags and the number of hits; with `ranking`, then each position's fields, snippet and
    score (1e-9 relative); without, only when nothing was cut, the set of hits with each
    one's fields and snippet (what bm25 statistics cannot change)."""
    problems = _outcome_problems(expected, actual)
    if problems is not None:
        return problems
    assert expected.result is not None and actual.result is not None
    problems = [f"{name}: openclaw {expected.result.get(name)!r} vs ours {actual.result.get(name)!r}"
                for name in RESULT_FLAGS if expected.result.get(name) != actual.result.get(name)]
    theirs, ours = expected.result["hits"], actual.result["hits"]
    if len(theirs) != len(ours):
        problems.append(f"hit count: openclaw {len(theirs)} vs ours {len(ours)}")
    if ranking:
        for position, (want, got) in enumerate(zip(theirs, ours)):
            problems += [f"hit {position} {name}: openclaw {want[name]!r} vs ours {got[name]!r}"
                         for name in HIT_FIELDS if want[name] != got[name]]
            if not math.isclose(want["score"], got["score"], rel_tol=SCORE_RELATIVE_TOLERANCE,
                                abs_tol=0.0):
                problems.append(f"hit {position} score: openclaw {want['score']!r} vs ours {got['score']!r}")
    elif not expected.result["truncated"]:
        def by_identity(hits: list[dict[str, Any]]) -> dict[tuple, tuple]:
            return {tuple(hit[name] for name in HIT_FIELDS[:3]): tuple(hit[name] for name in HIT_FIELDS)
                    for hit in hits}
        if by_identity(theirs) != by_identity(ours):
            problems.append(f"hit set: openclaw {sorted(by_identity(theirs).values())!r} "
                            f"vs ours {sorted(by_identity(ours).values())!r}")
    return problems


def exact_differences(expected: Outcome, actual: Outcome) -> list[str]:
    """`result_differences` with ranking: the answers must agree exactly."""
    return result_differences(expected, actual, ranking=True)


def statistics_free_differences(expected: Outcome, actual: Outcome) -> list[str]:
    """`result_differences` without ranking: scores and order may differ."""
    return result_differences(expected, actual, ranking=False)
