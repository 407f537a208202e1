"""The Compare panel: the same request on the store and on its twin of the other backend.

Owns: running one request (a store search, or the `sessions_search` tool with a
requester) on both backends (`ExploredStore.comparing`: the store's own and the other,
reference and SQLite), and the differences of the two answers as JSON paths
(`hits[2].score`), each with both values, so the page can mark them. Numbers are equal
within the conformance suite's tolerance (`engine.conformance.compare.equal`: a relative
1e-9; scores are floats). Must not touch: searching (the stores' and the tool's), or how
a case file is written (`engine.explorer.case_file`), or HTTP (the application).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine import Requester, SearchRequest, ToolConfig, sessions_search
from engine.conformance.compare import equal
from engine.explorer.explored_store import ExploredStore
from engine.explorer.parameters import search_request, tool_call

#: The most differences listed (a count says how many there were).
MAX_DIFFERENCES = 200
#: How a member one answer lacks is shown.
ABSENT = "(absent)"


@dataclass(frozen=True, slots=True)
class Comparison:
    """One request run on two backends: the protocol method and params it is, and each
    backend's answer, in the order (store's backend, twin's backend)."""

    method: str
    params: dict[str, Any]
    backends: tuple[str, str]
    answers: tuple[Any, Any]

    def answer_of(self, backend: str) -> Any:
        """The answer of `backend`."""
        return self.answers[self.backends.index(backend)]

    def differences(self) -> list[dict[str, Any]]:
        """Every path where the answers differ (module docstring)."""
        return differences(self.answers[0], self.answers[1])


def run_comparison(explored: ExploredStore, values: dict[str, Any],
                   config: ToolConfig) -> Comparison:
    """The request the parameters ask for, run on the store and on its twin."""
    call = tool_call(values)
    request = search_request(values) if call is None else None
    answers, names = explored.compare(lambda store, twin: (
        tuple(_answer(backend, request, call, config) for backend in (store, twin)),
        (store.name, twin.name)))
    if call is None:
        assert request is not None
        return Comparison("sessions.search", request.to_json(), names, answers)
    requester, arguments = call
    params = {"requester": {"sessionKey": requester.session_key,
                            "sandboxed": requester.sandboxed},
              "arguments": arguments}
    return Comparison("sessions_search", params, names, answers)


def _answer(store: Any, request: SearchRequest | None,
            call: tuple[Requester, dict[str, Any]] | None, config: ToolConfig) -> Any:
    if call is None:
        assert request is not None
        return store.search(request).to_json()
    return sessions_search(store, call[0], call[1], config=config)


def compare(explored: ExploredStore, values: dict[str, Any], config: ToolConfig) -> dict[str, Any]:
    """The Compare panel's data: both answers and where they differ."""
    comparison = run_comparison(explored, values, config)
    found = comparison.differences()
    return {
        "method": comparison.method,
        "params": comparison.params,
        "backends": list(comparison.backends),
        "answers": list(comparison.answers),
        "same": not found,
        "differenceCount": len(found),
        "differences": found[:MAX_DIFFERENCES],
    }


def differences(first: Any, second: Any, path: str = "") -> list[dict[str, Any]]:
    """The paths where two JSON values differ, with both values (`ABSENT` for a member
    or an item only one has).

    >>> differences({"hits": [{"score": 1.0, "id": "a"}], "truncated": False},
    ...             {"hits": [{"score": 1.0000000000001, "id": "b"}, {}], "truncated": False})
    [{'path': 'hits[0].id', 'values': ['a', 'b']}, {'path': 'hits[1]', 'values': ['(absent)', {}]}]
    """
    if isinstance(first, dict) and isinstance(second, dict):
        found = []
        for key in [*first, *(key for key in second if key not in first)]:
            child = f"{path}.{key}" if path else key
            if key not in first or key not in second:
                found.append({"path": child, "values": [first.get(key, ABSENT),
                                                        second.get(key, ABSENT)]})
            else:
                found.extend(differences(first[key], second[key], child))
        return found
    if isinstance(first, list) and isinstance(second, list):
        found = []
        for index in range(max(len(first), len(second))):
            child = f"{path}[{index}]"
            if index >= len(first) or index >= len(second):
                found.append({"path": child, "values": [
                    first[index] if index < len(first) else ABSENT,
                    second[index] if index < len(second) else ABSENT]})
            else:
                found.extend(differences(first[index], second[index], child))
        return found
    if equal(first, second):
        return []
    return [{"path": path or "(the whole answer)", "values": [first, second]}]
