"""The Hits and Why-this-hit panels: a search's answer, and why one hit is where it is.

Owns: the data of the two panels. `hits`: the store search's answer as `search --json`
gives it (each hit with the spans the engine matched), or, with a `requester`, the
`sessions_search` tool's answer as `call` gives it; with the scope it searched and the
flags (`truncated`, `indexing`, archived windows) said in words. `why`: one hit of the
store search as `explain --json` explains it (bm25 per phrase: N, n, idf and its floor,
f, D, avgdl; the excerpt's candidate windows), the tie-break against the hits above and
below it, and its excerpt against the bounds (500 units in the kernel, 300 in the tool,
the tool's 32 KiB answer). Must not touch: searching, scoring or explaining (the store's
`search` and `explain`, the tool's function; the inspection wing names their values),
or HTTP (the application).
"""

from __future__ import annotations

from typing import Any

from engine import (
    DEFAULT_LIMIT,
    Explainable,
    SearchRequest,
    SearchResult,
    ToolConfig,
    sessions_search,
)
from engine.agent_tools.sessions_search import (
    MAX_RESULT_BYTES,
    SNIPPET_MAX_UNITS,
    bound_excerpt,
    hit_order_key,
)
from engine.explorer.explored_store import ExploredStore
from engine.explorer.parameters import (
    SEARCH_PARAMETERS,
    Parameter,
    ParameterError,
    search_request,
    tool_call,
)
from engine.inspection.excerpt_bounds import excerpt_bounds, json_bytes, utf16_length
from engine.inspection.explanations import IDF_FLOOR
from engine.inspection.hit_order import ordered_pairs, tie_breaks
from engine.inspection.no_hits import no_hit_reasons

#: The agent tool's order (step 5 of `sessions_search`), component by component.
TOOL_CRITERIA = ("score (higher first)", "timestamp (newer first)",
                 "sessionKey (localeCompare)", "messageId (localeCompare)")

WHY_PARAMETERS = {**SEARCH_PARAMETERS, "hit": Parameter("int", low=0, high=24)}

#: bm25 as `engine.score.bm25` computes it, in the words the panel shows beside the numbers.
FORMULA = {
    "idf": f"idf = ln((N − n + 0.5) / (n + 0.5)), replaced by {IDF_FLOOR:g} when ≤ 0",
    "contribution": "contribution = idf × f × (k1 + 1) / (f + k1 × (1 − b + b × D / avgdl))",
    "score": "bm25 = −Σ contributions (FTS5's rank: lower is better); score = −bm25",
}


def hits(explored: ExploredStore, values: dict[str, Any], config: ToolConfig) -> dict[str, Any]:
    """The Hits panel's data: the store search, or the tool's answer with a requester."""
    call = tool_call(values)
    if call is not None:
        return _tool_hits(explored, call[0], call[1], config)
    request = search_request(values)
    result = explored.read(lambda store: store.search(request))
    return {
        "mode": "store",
        "backend": explored.backend,
        "request": request.to_json(),
        "scope": scope_lines(request),
        "result": result.to_json(),
        "matched": [[list(span) for span in hit.matched] for hit in result.hits],
        "tieBreaks": tie_breaks(result.hits, request.order),
        "flags": flag_lines(result, request),
        "noHitReasons": [] if result.hits else list(no_hit_reasons(request.query,
                                                                   request.match)),
    }


def _tool_hits(explored: ExploredStore, requester: Any, arguments: dict[str, Any],
               config: ToolConfig) -> dict[str, Any]:
    answer = explored.read(lambda store: sessions_search(store, requester, arguments,
                                                         config=config))
    results = answer.get("results", [])
    flags = []
    if answer.get("truncated"):
        flags.append("truncated: the tool kept fewer hits than it found (a store call "
                     "truncated, the visible hits exceeded the limit, or the 32 KiB budget "
                     "cut the list)")
    if answer.get("indexing"):
        flags.append("indexing: some windows wait for reconcile; their messages are not "
                     "searched yet")
    if answer.get("archivedTranscriptsExcluded"):
        flags.append(f"{answer['archivedTranscriptsExcluded']} archived transcript(s) were "
                     "left out; restore one to search it")
    if "status" in answer:
        flags.append(f"refused ({answer['status']}): {answer.get('error')}")
    return {
        "mode": "tool",
        "backend": explored.backend,
        "requester": {"sessionKey": requester.session_key, "sandboxed": requester.sandboxed},
        "arguments": arguments,
        "scope": [f"requester {requester.session_key}"
                  + (" (sandboxed: sees only the sessions it spawned)" if requester.sandboxed
                     else ""),
                  f"visibility {config.visibility}: which sessions the requester may see",
                  "agent-to-agent "
                  + ("on" if config.agent_to_agent_enabled else "off")
                  + (f" (allowed: {', '.join(config.agent_to_agent_allow)})"
                     if config.agent_to_agent_allow else ""),
                  (f"only session {arguments['sessionKey']}" if "sessionKey" in arguments
                   else "every session the requester may see"),
                  (f"limit {arguments.get('limit', DEFAULT_LIMIT)} (the tool asks each "
                   "store for 25, then merges)")],
        "answer": answer,
        "tieBreaks": ordered_pairs(results, hit_order_key, TOOL_CRITERIA, _tool_values),
        "bytes": {"bytes": json_bytes(results), "budget": MAX_RESULT_BYTES,
                  "perHit": [json_bytes(hit) for hit in results]},
        "flags": flags,
    }


def scope_lines(request: SearchRequest) -> list[str]:
    """The scope of a store search in words, one fact a line.

    >>> scope_lines(SearchRequest("x", agent_id="work", role="user"))
    ["agent work's namespace: keys agent:work:*", 'only user messages', 'order: relevance (bm25 score, then newer, then messageId)', 'match: exact (whole words)', 'limit 10 (the default; at most 25)']
    """
    if request.session_keys is None:
        agent = request.agent_id or "main"
        lines = [f"agent {agent}'s namespace: keys agent:{agent}:*"
                 + (", plus global and unknown" if agent == "main" else "")]
    elif request.session_keys:
        lines = [f"{len(request.session_keys)} session key(s): "
                 + ", ".join(request.session_keys[:5])
                 + (" ..." if len(request.session_keys) > 5 else "")]
    else:
        lines = ["every session in the store (sessionKeys: [])"]
    if request.session_id is not None:
        lines.append(f"only window {request.session_id}")
    lines.append(f"only {request.role} messages" if request.role else
                 "user and assistant messages")
    lines.append("order: newest first" if request.order == "recent" else
                 "order: relevance (bm25 score, then newer, then messageId)")
    lines.append("match: prefix (the last word completes)" if request.match == "prefix"
                 else "match: exact (whole words)")
    lines.append(f"limit {request.limit}" if request.limit is not None else
                 f"limit {DEFAULT_LIMIT} (the default; at most 25)")
    return lines


def flag_lines(result: SearchResult, request: SearchRequest) -> list[str]:
    """The answer's flags in words (each said whether set or not)."""
    limit = request.limit or DEFAULT_LIMIT
    lines = [("truncated: more rows matched than the limit "
              f"({limit}); raise the limit (at most 25) or narrow the scope")
             if result.truncated else
             "truncated: no, every row in scope that matched is shown",
             ("indexing: some windows wait for reconcile; their rows are left out until "
              "`session-search reconcile` (or a writer's background reconcile)")
             if result.indexing else "indexing: no, the index is up to date"]
    if result.archived_transcripts_excluded:
        lines.append(f"{result.archived_transcripts_excluded} archived window(s) in scope "
                     "were left out (`session-search restore` brings one back)")
    return lines


def why(explored: ExploredStore, values: dict[str, Any]) -> dict[str, Any]:
    """The Why-this-hit panel's data for hit `hit` (default 0) of the store search."""
    if "requester" in values:
        raise ParameterError("Why this hit explains the store search; leave requester out")
    number = values.get("hit", 0)
    request = search_request({name: value for name, value in values.items() if name != "hit"})
    if not isinstance(explored.store, Explainable):
        raise ParameterError(
            f"Why this hit needs a reference store (its bm25 inputs are this engine's own); "
            f"this one uses {explored.backend!r}: Compare runs the same request on a "
            "reference copy", status=409)
    explanation = explored.read(lambda store: store.explain(request))  # type: ignore[attr-defined]
    document = explanation.to_json()
    count = len(document["hits"])
    if number >= count:
        raise ParameterError(f"hit {number} does not exist: the search has {count} hit(s)"
                             + (f" (0 to {count - 1})" if count else ""), status=404)
    hit_list = [item.hit for item in explanation.hits]
    pairs = tie_breaks(hit_list, request.order)
    return {
        "request": request.to_json(),
        "hit": number,
        "count": count,
        "truncated": document["truncated"],
        "plan": {name: document[name] for name in ("phrases", "substrings", "cjkRetry")},
        "explanation": document["hits"][number],
        "matched": [list(span) for span in hit_list[number].matched],
        "formula": FORMULA,
        "above": pairs[number - 1] if number > 0 else None,
        "below": pairs[number] if number < count - 1 else None,
        "excerptBounds": {**excerpt_bounds(hit_list[number].snippet),
                          **tool_excerpt(hit_list[number].snippet)},
    }


def tool_excerpt(snippet: str) -> dict[str, Any]:
    """The agent tool's cut of a store excerpt (300 UTF-16 units plus "…"), made by the
    tool's own function.

    >>> facts = tool_excerpt("x" * 320)
    >>> facts["toolBound"], facts["toolUnits"], facts["toolCut"]
    (300, 301, True)
    """
    cut = bound_excerpt(snippet)
    return {"toolBound": SNIPPET_MAX_UNITS, "toolExcerpt": cut, "toolUnits": utf16_length(cut),
            "toolCut": cut != snippet, "toolBudgetBytes": MAX_RESULT_BYTES}


def _tool_values(hit: dict[str, Any]) -> tuple[Any, ...]:
    """A tool hit's values in the order of `TOOL_CRITERIA`."""
    return (hit["score"], hit["timestamp"], hit["sessionKey"], hit.get("messageId"))
