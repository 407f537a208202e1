"""The Control UI's command palette search: session titles first, then transcripts.

Owns: the palette's request rules (at least 2 characters, limit 1..25), the title and
identifier matches and their order, the transcript calls in prefix mode over the
palette's scope, the merge, the grouping under Sessions and Messages, the compact
excerpt, and the notices with their exact text (behaviour.md §10, §6's scope path, the
seed's "Control UI search"). Must not touch: which sessions are in scope
(`engine.agent_tools.palette_scope`), what a title word is (`engine.agent_tools.title_match`), how a
partition searches (the store's `search`), or the clock (`engine.agent_tools.budgets`).

Steps of one call (`ui_search`):
1. The query is trimmed (JavaScript's `trim`). Fewer than 2 characters (code points, so
   one emoji is one character) is not yet a search: the answer is empty, with
   `searched: false`, and no error, because the palette asks as the person types and a
   one-letter query is a normal moment of typing, not a mistake. More than 4,096 UTF-16
   units is refused (`QueryError`, the product's wording), as is a `limit` that is not an
   integer from 1 to 25 (`InputError`).
2. The scope: every session of the store the palette covers (`palette_scope`), however
   many: no roster page bounds the search.
3. Metadata matches: a session whose title matches (`title_match`) or whose key or
   sessionId (of any of its windows) contains the query literally. Order: title matches
   before identifier-only matches (a short query such as `main` occurs in many keys, and
   the title is what the palette shows), then newest current window first (`createdAt`
   descending, sessions without one last), then the key in ICU collation order; the
   first `limit` are kept.
4. Transcript matches: the scope's sessions grouped by the agent whose partition holds
   them, agents in ICU order, one kernel call per chunk of at most 200 keys, each with
   `match: "prefix"` and the request's `limit` (§6's scope path). Hits on a session not in
   the chunk's keys are dropped. The hits of all calls are sorted by score descending,
   timestamp descending, messageId in ICU order (a stable sort: ties keep the calls'
   order). These calls run under the time budgets of `engine.agent_tools.budgets`; when they
   fail (an engine error, a spent budget) the answer keeps the metadata matches and says
   transcript search is unavailable.
5. Grouping, by the seed's rule: a session whose metadata matches is under Sessions
   (even when its transcript matches too, and even when it fell beyond the `limit` of
   step 3); every other session with a transcript hit is under Messages, once, with the
   excerpt of its best hit, in hit order, at most `limit` sessions. The excerpt is made
   compact: whitespace runs become one space, and it is cut to 160 UTF-16 units plus
   "…" (never half a surrogate pair), one or two lines of a palette row.
6. Flags and notices: `indexing` (any call could not confirm completeness),
   `archivedTranscriptsExcluded` (the scope's archived windows, when any), `truncated`
   (more metadata matches or transcript sessions than the limit, or a kernel call
   truncated) and `transcriptSearchUnavailable`. `notices` carries the palette's texts,
   in this order: unavailable, indexing, archived; `truncated` has no notice: more matches
   than the limit is normal.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.agent_tools.budgets import Cancellation, ReaderGate, TimeBudgets, check, run_reader
from engine.agent_tools.palette_scope import PaletteScope, PaletteSession, palette_scope
from engine.agent_tools.sessions_search import MAX_SESSION_KEYS
from engine.agent_tools.title_match import TitleQuery, identifier_matches, title_matches
from engine.agent_tools.tool_config import ToolConfig
from engine.analysis.collation import locale_compare_key
from engine.backends.protocol import (
    Backend,
    Interruptible,
    Refreshable,
    TranscriptReader,
    require_capability,
)
from engine.errors import EngineError, InputError, QueryError
from engine.model import SearchHit, SearchRequest, js_trim, json_number, owner_agent_id
from engine.query.user_query import LONG_QUERY_MESSAGE, MAX_QUERY_UNITS, utf16_units
from engine.results.bounds import ELLIPSIS, truncate_utf16_safe, utf16_length

DEFAULT_LIMIT = 25
MAX_LIMIT = 25
MIN_QUERY_CHARACTERS = 2
EXCERPT_MAX_UNITS = 160
INDEXING_NOTICE = "Indexing older messages — search again shortly."
UNAVAILABLE_NOTICE = "Transcript search unavailable — showing chat titles and metadata"
_WHITESPACE_RUN = re.compile(r"\s+")


def archived_notice(count: int) -> str:
    """The palette's notice for archived transcripts left out (the text is the product's,
    the same for one transcript as for many).

    >>> archived_notice(2)
    '2 archived transcripts excluded; open a session to restore its searchable history.'
    """
    return (f"{count} archived transcripts excluded; open a session to restore its "
            "searchable history.")


def read_limit(limit: Any) -> int:
    """The checked limit (step 1).

    >>> read_limit(25), read_limit(3.0)
    (25, 3)
    >>> read_limit(0)
    Traceback (most recent call last):
    ...
    engine.errors.InputError: limit must be an integer from 1 to 25 (got 0)
    """
    if (isinstance(limit, bool) or not isinstance(limit, (int, float))
            or (isinstance(limit, float) and not limit.is_integer())
            or not 1 <= limit <= MAX_LIMIT):
        raise InputError(f"limit must be an integer from 1 to {MAX_LIMIT} (got {limit!r})")
    return int(limit)


def read_query(query: Any) -> str:
    """The trimmed query (step 1), or `QueryError`.

    >>> read_query("  per session  ")
    'per session'
    """
    if not isinstance(query, str):
        raise QueryError("query must be a string")
    trimmed = js_trim(query)
    if utf16_units(trimmed) > MAX_QUERY_UNITS:
        raise QueryError(LONG_QUERY_MESSAGE)
    return trimmed


def long_enough(query: str) -> bool:
    """Whether a trimmed query is long enough to search (2 code points).

    >>> long_enough("a"), long_enough("ab"), long_enough("😀"), long_enough("会议")
    (False, True, False, True)
    """
    return len(query) >= MIN_QUERY_CHARACTERS


def compact_excerpt(snippet: str) -> str:
    """The palette's excerpt: whitespace runs as one space, at most 160 UTF-16 units + "…".

    >>> compact_excerpt(" a\\n\\n b\\t c ")
    'a b c'
    >>> compact_excerpt("x" * 161) == "x" * 160 + "…"
    True
    """
    text = _WHITESPACE_RUN.sub(" ", snippet).strip()
    if utf16_length(text) <= EXCERPT_MAX_UNITS:
        return text
    return truncate_utf16_safe(text, EXCERPT_MAX_UNITS).rstrip() + ELLIPSIS


def session_row(session: PaletteSession) -> dict[str, Any]:
    """The session's row in the answer (the JSON object the palette lists)."""
    entry = session.entry
    return {
        "sessionKey": entry.key,
        "agentId": entry.agent_id,
        "sessionId": entry.session_id,
        "title": entry.title,
        "kind": entry.kind,
        "group": entry.group,
        "createdAt": json_number(session.created_at),
    }


def metadata_order(session: PaletteSession, how: str) -> tuple[bool, bool, float, bytes]:
    """Step 3's order: title matches first, then newest current window first (undated
    last), then key (ICU)."""
    created = session.created_at
    return (how != "title", created is None, -(created or 0.0),
            locale_compare_key(session.entry.key))


def metadata_matches(scope: PaletteScope, query: TitleQuery) -> list[tuple[PaletteSession, str]]:
    """Every session of the scope whose title or identifiers match, with which one
    matched (`title` wins over `identifier`), in step 3's order."""
    matched: list[tuple[PaletteSession, str]] = []
    for session in scope.sessions:
        if title_matches(query, session.entry.title):
            matched.append((session, "title"))
        elif identifier_matches(query, (session.entry.key, *session.session_ids)):
            matched.append((session, "identifier"))
    return sorted(matched, key=lambda pair: metadata_order(*pair))


@dataclass(frozen=True, slots=True)
class TranscriptCall:
    """One kernel call of step 4 and the keys whose hits it may return."""

    agent_id: str
    request: SearchRequest


def transcript_calls(sessions: Iterable[PaletteSession], query: str,
                     limit: int) -> list[TranscriptCall]:
    """Step 4's kernel calls: per partition in ICU order, chunks of at most 200 keys."""
    by_agent: dict[str, list[str]] = {}
    for session in sessions:
        agent_id = owner_agent_id(session.entry.key) or session.entry.agent_id or ""
        by_agent.setdefault(agent_id, []).append(session.entry.key)
    calls = []
    for agent_id in sorted(by_agent, key=locale_compare_key):
        keys = by_agent[agent_id]
        for start in range(0, len(keys), MAX_SESSION_KEYS):
            chunk = tuple(keys[start:start + MAX_SESSION_KEYS])
            calls.append(TranscriptCall(agent_id, SearchRequest(
                query, agent_id=agent_id, limit=limit, session_keys=chunk, match="prefix")))
    return calls


@dataclass
class TranscriptHits:
    """What step 4's calls found: the hits in call order, and the calls' flags."""

    hits: list[SearchHit] = field(default_factory=list)
    indexing: bool = False
    truncated: bool = False


def run_transcript_calls(store: Backend, calls: Sequence[TranscriptCall],
                         cancellation: Cancellation) -> TranscriptHits:
    """The reader stage: each call in turn, keeping the hits on the call's own keys."""
    found = TranscriptHits()
    for call in calls:
        check(cancellation)
        result = store.search(call.request)
        found.indexing = found.indexing or result.indexing
        found.truncated = found.truncated or result.truncated
        keys = frozenset(call.request.session_keys or ())
        found.hits.extend(hit for hit in result.hits
                          if hit.session_key in keys and hit.role in ("user", "assistant"))
    return found


def hit_order_key(hit: SearchHit) -> tuple[float, float, bytes]:
    """Step 4's order: score descending, timestamp descending, messageId (ICU)."""
    return (-hit.score, -hit.timestamp, locale_compare_key(hit.message_id))


def message_entry(session: PaletteSession, hit: SearchHit) -> dict[str, Any]:
    """A Messages entry: the session's row, then its best hit with a compact excerpt."""
    row = session_row(session)
    row["match"] = "transcript"
    row["hit"] = {
        "sessionId": hit.session_id,
        "messageId": hit.message_id,
        "role": hit.role,
        "timestamp": json_number(hit.timestamp),
        "score": json_number(hit.score),
        "excerpt": compact_excerpt(hit.snippet),
    }
    return row


def empty_answer(query: str) -> dict[str, Any]:
    """The answer to a query too short to search (step 1).

    >>> empty_answer("a")
    {'query': 'a', 'searched': False, 'sessions': [], 'messages': [], 'notices': []}
    """
    return {"query": query, "searched": False, "sessions": [], "messages": [], "notices": []}


def ui_search(store: Backend, query: Any, config: ToolConfig = ToolConfig(),
              limit: Any = DEFAULT_LIMIT, *, budgets: TimeBudgets = TimeBudgets(),
              gate: ReaderGate | None = None) -> dict[str, Any]:
    """Search as the command palette does (the module docstring's steps); the answer."""
    started = time.monotonic()
    checked_limit = read_limit(limit)
    text = read_query(query)
    if not long_enough(text):
        return empty_answer(text)
    require_capability(store, TranscriptReader, "ui.search")  # the scope reads the roster
    if isinstance(store, Refreshable):
        store.refresh()
    scope = palette_scope(store, config)
    matched = metadata_matches(scope, TitleQuery.parse(text))
    matched_keys = {session.entry.key for session, _ in matched}
    calls = transcript_calls(scope.sessions, text, checked_limit)
    unavailable = False
    try:
        found = run_reader(lambda cancellation: run_transcript_calls(store, calls, cancellation),
                           budgets=budgets, request_started=started,
                           gate=gate if gate is not None else ReaderGate(),
                           interrupt=store.interrupt if isinstance(store, Interruptible) else None)
    except EngineError:
        found, unavailable = TranscriptHits(), True
    by_key = {session.entry.key: session for session in scope.sessions}
    messages: list[dict[str, Any]] = []
    seen: set[str] = set()
    more_sessions = False
    for hit in sorted(found.hits, key=hit_order_key):
        if hit.session_key in matched_keys or hit.session_key in seen:
            continue
        if len(messages) == checked_limit:
            more_sessions = True
            break
        seen.add(hit.session_key)
        messages.append(message_entry(by_key[hit.session_key], hit))
    sessions = []
    for session, how in matched[:checked_limit]:
        row = session_row(session)
        row["match"] = how
        sessions.append(row)
    answer: dict[str, Any] = {"query": text, "searched": True, "sessions": sessions,
                              "messages": messages, "notices": []}
    if unavailable:
        answer["transcriptSearchUnavailable"] = True
        answer["notices"].append(UNAVAILABLE_NOTICE)
    if found.indexing:
        answer["indexing"] = True
        answer["notices"].append(INDEXING_NOTICE)
    if scope.archived_transcripts > 0:
        answer["archivedTranscriptsExcluded"] = scope.archived_transcripts
        answer["notices"].append(archived_notice(scope.archived_transcripts))
    if found.truncated or more_sessions or len(matched) > checked_limit:
        answer["truncated"] = True
    return answer
