"""The `sessions_search` agent tool: visible sessions only, bounded and safe answers.

Owns: the tool's arguments and their exact messages, the explicit `sessionKey` target and
its access check, the kernel calls (grouped by owning agent, chunks of at most 200 keys,
limit 25 each), mapping hits back to the sessions they may come from, the hit's shape and
300-unit excerpt, the merge order, the count limit then the 32 KiB byte budget, and the
flags and warnings of the answer (behaviour.md §3, the seed's "Visibility and output").
Must not touch: who may see what (`engine.agent_tools`), how a partition searches (the store's
`search`), or the clock (`engine.agent_tools.budgets`).

Steps of one call (`sessions_search`):
1. Read the arguments: `query` trimmed, non-empty, at most 4,096 UTF-16 units; `limit` a
   positive integer up to 25 (default 10); `sessionKey` optional. A bad argument raises
   `ToolInputError` with the product's message (the tool throws these upstream).
2. With `sessionKey`: resolve it (`current` is the requester, of the requester's agent
   even when its key names none; `main` its agent's main session; a UUID or a string
   that is no key is looked up as a sessionId), refuse an incognito target (by the key
   given or the key searched: `main` is `agent:<agent>:main`), and check access (the
   row checker without ownership, then with the requester's ownership when the store
   says the requester spawned it). A refusal is an answer, `{"status": "forbidden" |
   "error", "error": ...}`, and nothing is searched. Without it: the roster's visible
   candidates (`engine.agent_tools.roster`), less any whose searched key is incognito.
3. Group the candidates by agent (an agent-scoped key's own agent, an unscoped key's
   candidate agent: the store finds `global` in main's partition whichever agent asks),
   agents in ICU collation order, and ask the store once per chunk of at most 200 keys
   with limit 25 (whatever the caller's limit: visibility is applied before any limit).
   An unscoped key other than `global`/`unknown` (the `main` alias) is sent as
   `agent:<agent>:<key>`, the key the Gateway would canonicalise it to.
4. Keep each hit that maps back to a candidate (its exact key, or for an unscoped alias
   candidate the agent's `agent:<agent>:<alias>` key) and that the row checker still
   allows; drop hits without the required fields; show the key under its display alias
   (`main`); cut the excerpt to 300 UTF-16 units plus "…", never splitting a surrogate
   pair. Excerpts are not redacted: the seed says they preserve transcript text,
   credentials included (OpenClaw 2026.9.6 redacts them: a listed divergence).
5. Sort by score descending, timestamp descending, sessionKey and messageId in ICU order;
   keep `limit`; then add hits while the JSON text of the `results` array stays within
   32,768 UTF-8 bytes, stopping at the first that would overflow.
6. Answer `results`, `sessionLinkRule` when the configuration knows the Control UI's
   address, `indexing` with its warning, `archivedTranscriptsExcluded` with its
   warning, `truncated` when a kernel call truncated, the visible hits exceeded the limit
   or the byte budget cut.

The reader stage (step 3) runs under the time budgets of `engine.agent_tools.budgets`.
`plan_search` returns steps 1 to 3 without running them, for tests and explanations.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.agent_tools.budgets import Cancellation, ReaderGate, TimeBudgets, check, run_reader
from engine.agent_tools.roster import (
    Candidate,
    RosterEntry,
    incognito_session,
    roster,
    visible_candidates,
)
from engine.agent_tools.session_keys import is_agent_scoped, names_a_session_id
from engine.agent_tools.targets import (
    held_by,
    kernel_key,
    named_session,
    resolve_reference,
    target_access,
)
from engine.agent_tools.tool_config import ToolConfig
from engine.agent_tools.visibility import (
    Requester,
    RequesterContext,
    SessionRow,
    check_row,
    denial_message,
    resolve_requester,
)
from engine.analysis.collation import locale_compare_key
from engine.analysis.js_json import js_json_bytes
from engine.backends.protocol import Backend, Interruptible, Refreshable
from engine.errors import EngineError, InputError
from engine.model import (
    SearchHit,
    SearchRequest,
    js_trim,
    json_number,
    owner_agent_id,
)
from engine.query.user_query import utf16_units
from engine.results.bounds import ELLIPSIS, truncate_utf16_safe, utf16_length

DEFAULT_LIMIT = 10
MAX_LIMIT = 25
MAX_SESSION_KEYS = 200
MAX_QUERY_UNITS = 4096
MAX_RESULT_BYTES = 32 * 1024
SNIPPET_MAX_UNITS = 300
KERNEL_LIMIT = 25
INDEXING_WARNING = ("Transcript indexing is in progress; results may be incomplete. "
                    "Retry sessions_search shortly.")
EMPTY_QUERY_MESSAGE = ("query must not be empty; retry with non-empty keywords to match in "
                       "past session text")


class ToolInputError(InputError):
    """An argument the tool refuses; the message is the product's wording."""


@dataclass(frozen=True, slots=True)
class SearchArguments:
    """The tool's arguments, checked."""

    query: str
    limit: int = DEFAULT_LIMIT
    session_key: str | None = None


def read_arguments(arguments: Any) -> SearchArguments:
    """Check the tool's arguments (step 1 of the module docstring), as OpenClaw 2026.9.6
    reads them: a `query` that is not a string counts as absent (so: empty); `limit` may
    be a whole number or a string of digits, absent, null or blank meaning 10; each name
    may also be spelled in snake case (`session_key`). A name the tool does not know is
    refused (OpenClaw ignores it; a typo should not go unseen).

    >>> read_arguments({"query": "  loan  "})
    SearchArguments(query='loan', limit=10, session_key=None)
    >>> read_arguments({"query": "x", "limit": "5", "session_key": " main "})
    SearchArguments(query='x', limit=5, session_key='main')
    >>> read_arguments({"query": "x", "limit": 26})
    Traceback (most recent call last):
    ...
    engine.agent_tools.sessions_search.ToolInputError: limit must be a positive integer
    """
    if not isinstance(arguments, Mapping):
        raise ToolInputError("arguments must be an object")
    values: dict[str, Any] = {}
    for name, value in arguments.items():
        canonical = ARGUMENT_SPELLINGS.get(name)
        if canonical is None:
            raise ToolInputError(f"unknown argument {name!r} (expected: query, sessionKey, limit)")
        values.setdefault(canonical, value)
    raw_query = values.get("query")
    query = js_trim(raw_query) if isinstance(raw_query, str) else ""
    if not query:
        raise ToolInputError(EMPTY_QUERY_MESSAGE)
    if utf16_units(query) > MAX_QUERY_UNITS:
        raise ToolInputError(f"query must not exceed {MAX_QUERY_UNITS} characters")
    limit = read_limit(values.get("limit"))
    session_key = values.get("sessionKey")
    session_key = js_trim(session_key) if isinstance(session_key, str) else ""
    return SearchArguments(query, limit, session_key or None)


#: Each accepted argument spelling -> its name.
ARGUMENT_SPELLINGS = {"query": "query", "sessionKey": "sessionKey", "session_key": "sessionKey",
                      "limit": "limit"}


def read_limit(value: Any) -> int:
    """`limit`: a whole number 1..25 or a string of its digits; absent, null or blank: 10.

    >>> read_limit(None), read_limit(" "), read_limit(3.0), read_limit("25")
    (10, 10, 3, 25)
    >>> read_limit(True)
    Traceback (most recent call last):
    ...
    engine.agent_tools.sessions_search.ToolInputError: limit must be a positive integer
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return DEFAULT_LIMIT
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        value = int(value.strip())
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or (isinstance(value, float) and not value.is_integer())
            or not 1 <= value <= MAX_LIMIT):
        raise ToolInputError("limit must be a positive integer")
    return int(value)


@dataclass(frozen=True, slots=True)
class SearchCandidate:
    """A session the search covers: the key hits are shown under, the key the store is
    asked for, the partition that holds it, and whether access was checked already."""

    key: str
    kernel_key: str
    agent_id: str
    authorized: bool = False
    row: SessionRow | None = None
    expected_session_id: str | None = None


@dataclass(frozen=True, slots=True)
class KernelCall:
    """One store search the tool makes, and the candidates its hits may map to."""

    agent_id: str
    request: SearchRequest
    candidates: tuple[SearchCandidate, ...]


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """Steps 1 to 3: either a refusal to answer with, or the kernel calls to make."""

    arguments: SearchArguments
    context: RequesterContext
    refusal: dict[str, str] | None = None
    calls: tuple[KernelCall, ...] = field(default=())


def refusal(status: str, error: str) -> dict[str, str]:
    """The tool's failure answer.

    >>> refusal("forbidden", "no")
    {'status': 'forbidden', 'error': 'no'}
    """
    return {"status": status, "error": error}


def call_agent(key: str, agent_id: str) -> str:
    """The agent a kernel call for `key` is addressed to: an agent-scoped key's own agent,
    else the candidate's (OpenClaw groups an unscoped key under the agent it was listed
    or resolved for; `held_by` then drops it from a call of an agent that holds none).

    >>> call_agent("agent:work:x", "main"), call_agent("global", "work")
    ('work', 'work')
    """
    return (owner_agent_id(key) or agent_id) if is_agent_scoped(key) else agent_id


def _explicit_target(arguments: SearchArguments, context: RequesterContext,
                     sessions: dict[str, RosterEntry]) -> SearchCandidate | dict[str, str]:
    """Step 2 for an explicit `sessionKey`: the one candidate, or a refusal."""
    raw = js_trim(arguments.session_key or "")
    given = context.key if raw == "current" else raw
    restricted = context.restricted_to_spawned
    if names_a_session_id(given):
        found = resolve_reference(context, given, sessions.get, sessions.values)
        if found is None:
            if restricted:
                return refusal("forbidden",
                               f"Session not visible from this sandboxed agent session: {given}")
            return refusal("error",
                           f"Session not found: {given} (use the full sessionKey from sessions_list)")
        given = found
    # A key is searched as given: OpenClaw's tool keeps only the hits whose key is the
    # one named, so `agent:Ops:X` finds nothing although the store holds `agent:ops:x`
    # (the history tool reads such a key in its stored form instead).
    named = named_session(context, given)
    given, searched, target_agent = named.given, named.key, named.agent_id
    if incognito_session(given, sessions.get(given)) or incognito_session(
            searched, sessions.get(searched)):
        return refusal("forbidden", f"Session not visible from session tools: {raw}")
    grant = next((grant for grant in context.grants if grant.session_key in (given, searched)),
                 None)
    if grant is not None:
        return SearchCandidate(given, searched, call_agent(searched, target_agent),
                               authorized=True, expected_session_id=grant.expected_session_id)
    entry = sessions.get(searched)
    decision = target_access(context, given, target_agent, entry)
    if not decision.allowed:
        return refusal("forbidden", denial_message(decision, "search", given))
    return SearchCandidate(given, searched, call_agent(searched, target_agent), authorized=True)


def plan_search(store: Backend, requester: Requester, arguments: Any,
                config: ToolConfig = ToolConfig()) -> SearchPlan:
    """Steps 1 to 3 of the module docstring, without searching."""
    checked = read_arguments(arguments)
    context = resolve_requester(requester, config)
    sessions = roster(store)
    if checked.session_key is not None:
        target = _explicit_target(checked, context, sessions)
        if isinstance(target, dict):
            return SearchPlan(checked, context, refusal=target)
        candidates = [target]
    else:
        listed = [_candidate(candidate, context) for candidate in
                  visible_candidates(context, sessions)]
        # an alias candidate (`main`) is the session of its kernel key: never incognito
        candidates = [candidate for candidate in listed
                      if not incognito_session(candidate.kernel_key,
                                               sessions.get(candidate.kernel_key))]
    by_agent: dict[str, list[SearchCandidate]] = {}
    for candidate in candidates:
        by_agent.setdefault(candidate.agent_id, []).append(candidate)
    calls = []
    for agent_id in sorted(by_agent, key=locale_compare_key):
        group = by_agent[agent_id]
        for start in range(0, len(group), MAX_SESSION_KEYS):
            chunk = tuple(group[start:start + MAX_SESSION_KEYS])
            keys = tuple(dict.fromkeys(candidate.kernel_key for candidate in chunk
                                       if held_by(candidate.kernel_key, agent_id)))
            if not keys:
                continue  # the agent holds none of them: OpenClaw's answer is empty
            request = SearchRequest(checked.query, agent_id=agent_id, limit=KERNEL_LIMIT,
                                    session_keys=keys)
            calls.append(KernelCall(agent_id, request, chunk))
    return SearchPlan(checked, context, calls=tuple(calls))


def _candidate(candidate: Candidate, context: RequesterContext) -> SearchCandidate:
    agent_id = candidate.agent_id or context.agent_id
    searched = kernel_key(candidate.key, agent_id)
    return SearchCandidate(candidate.key, searched, call_agent(searched, agent_id),
                           row=candidate.row)


def display_key(key: str, config: ToolConfig) -> str:
    """The key a hit is shown under: the main alias and the main key show as `main`.

    >>> display_key("main", ToolConfig()), display_key("agent:main:main", ToolConfig())
    ('main', 'agent:main:main')
    """
    return "main" if key in (config.main_alias, config.main_key) else key


def bound_excerpt(snippet: str) -> str:
    """The tool's excerpt bound: 300 UTF-16 units plus "…", never half a surrogate pair.

    >>> bound_excerpt("x" * 301) == "x" * 300 + "…", bound_excerpt("short")
    (True, 'short')
    """
    if utf16_length(snippet) <= SNIPPET_MAX_UNITS:
        return snippet
    return truncate_utf16_safe(snippet, SNIPPET_MAX_UNITS) + ELLIPSIS


def _matcher(call: KernelCall) -> dict[str, SearchCandidate]:
    """Hit key -> candidate: exact keys first in candidate order, then alias keys."""
    mapping: dict[str, SearchCandidate] = {}
    ordinals: dict[str, int] = {}
    for ordinal, candidate in enumerate(call.candidates):
        for hit_key in (candidate.key, candidate.kernel_key):
            if hit_key not in ordinals or ordinal < ordinals[hit_key]:
                ordinals[hit_key] = ordinal
                mapping[hit_key] = candidate
    return mapping


def _shaped_hit(hit: SearchHit, candidate: SearchCandidate, config: ToolConfig) -> dict[str, Any] | None:
    """The tool's hit object, keys in the wire order, or None for a malformed hit."""
    if hit.role not in ("user", "assistant") or not isinstance(hit.snippet, str):
        return None
    shaped: dict[str, Any] = {
        "sessionKey": display_key(candidate.key, config),
        "timestamp": json_number(hit.timestamp),
        "role": hit.role,
        "snippet": bound_excerpt(hit.snippet),
        "score": json_number(hit.score),
    }
    if isinstance(hit.session_id, str):
        shaped["sessionId"] = hit.session_id
    if isinstance(hit.message_id, str):
        shaped["messageId"] = hit.message_id
    return shaped


def hit_order_key(hit: dict[str, Any]) -> tuple[float, float, bytes, bytes]:
    """Step 5's order: score desc, timestamp desc, sessionKey, messageId (ICU)."""
    return (-hit["score"], -hit["timestamp"], locale_compare_key(hit["sessionKey"]),
            locale_compare_key(hit.get("messageId") or ""))


def cap_results(hits: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """The longest head of `hits` whose JSON array fits 32,768 bytes, and whether it cut.

    >>> cap_results([{"a": "x" * 40000}])
    ([], True)
    """
    kept: list[dict[str, Any]] = []
    size = 2
    for hit in hits:
        weight = js_json_bytes(hit) + (1 if kept else 0)
        if size + weight > MAX_RESULT_BYTES:
            return kept, True
        kept.append(hit)
        size += weight
    return kept, False


@dataclass
class _Gathered:
    hits: list[dict[str, Any]] = field(default_factory=list)
    indexing: bool = False
    truncated: bool = False
    archived: int = 0


def run_calls(store: Backend, plan: SearchPlan, cancellation: Cancellation) -> _Gathered:
    """The reader stage: every kernel call of the plan, hits mapped and re-checked."""
    gathered = _Gathered()
    for call in plan.calls:
        check(cancellation)
        for candidate in call.candidates:
            if candidate.expected_session_id is not None:
                check_grant(store, candidate)
        result = store.search(call.request)
        gathered.indexing = gathered.indexing or result.indexing
        gathered.truncated = gathered.truncated or result.truncated
        gathered.archived += result.archived_transcripts_excluded
        matcher = _matcher(call)
        for hit in result.hits:
            candidate = matcher.get(hit.session_key)
            if candidate is None:
                continue
            if not candidate.authorized and not check_row(
                    plan.context, candidate.row or SessionRow(candidate.key)).allowed:
                continue
            shaped = _shaped_hit(hit, candidate, plan.context.config)
            if shaped is not None:
                gathered.hits.append(shaped)
    return gathered


class SessionChanged(EngineError):
    """A scoped grant's session moved on to another window before the search ran."""


def check_grant(store: Backend, candidate: SearchCandidate) -> None:
    """Refuse to search a granted session whose current window is no longer the granted
    one (OpenClaw: `Session "<key>" changed after access was granted.`)."""
    windows = store.windows_of(candidate.kernel_key)
    current = next((window.session_id for window in windows if window.current),
                   windows[-1].session_id if windows else None)
    if current != candidate.expected_session_id:
        raise SessionChanged(f'Session "{candidate.kernel_key}" changed after access was granted.')


def session_link_rule(base: str) -> str:
    """How to build Control UI links for the answer's keys (OpenClaw's wording).

    >>> session_link_rule("http://h:1").split(":", 1)[0]
    'When pointing the user at a session, cite its Control UI URL'
    """
    return ("When pointing the user at a session, cite its Control UI URL: main session -> "
            f"`{base}/chat/<agentId>`; any other display session key -> "
            f"`{base}/chat/<agentId>/~key/` + key minus `agent:<agentId>:`, with `:` replaced "
            "by `/`.")


def sessions_search(store: Backend, requester: Requester, arguments: Any, *,
                    config: ToolConfig = ToolConfig(), budgets: TimeBudgets = TimeBudgets(),
                    gate: ReaderGate | None = None) -> dict[str, Any]:
    """Run the tool (the module docstring's steps); the tool's JSON answer."""
    started = time.monotonic()
    if isinstance(store, Refreshable):
        store.refresh()
    plan = plan_search(store, requester, arguments, config)
    if plan.refusal is not None:
        return plan.refusal
    gathered = run_reader(lambda cancellation: run_calls(store, plan, cancellation),
                          budgets=budgets, request_started=started,
                          gate=gate if gate is not None else ReaderGate(),
                          interrupt=store.interrupt if isinstance(store, Interruptible) else None)
    ordered = sorted(gathered.hits, key=hit_order_key)
    limited = ordered[:plan.arguments.limit]
    kept, cut = cap_results(limited)
    answer: dict[str, Any] = {"results": kept}
    base = plan.context.config.session_link_base
    if base:
        answer["sessionLinkRule"] = session_link_rule(base)
    warnings = []
    if gathered.indexing:
        answer["indexing"] = True
        warnings.append(INDEXING_WARNING)
    if gathered.archived > 0:
        answer["archivedTranscriptsExcluded"] = gathered.archived
        warnings.append(f"Search excludes {gathered.archived} archived transcripts. "
                        "Restore a transcript to include it in search.")
    if warnings:
        answer["warning"] = " ".join(warnings)
    if gathered.truncated or len(ordered) > plan.arguments.limit or cut:
        answer["truncated"] = True
    return answer
