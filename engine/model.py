"""Frozen value types shared by every layer: session windows, stored events, index rows.

Owns: the shapes that cross module boundaries. Must not touch: files, bytes, tokens or
any other `engine` module (this module imports nothing from `engine`).

Vocabulary (behaviour.md §2):
* a *session key* names a logical conversation: `agent:<agentId>:<rest>`, or the reserved
  keys `global` and `unknown`;
* a *session window* is one physical transcript (`sessionId`) under a key; a key owns a
  chain of windows linked through `previous_session_id`, one of which is current;
* a *stored event* is one transcript event as it came (a JSON object kept verbatim), with
  its append order `seq` inside its window and the time the store received it;
* an *index entry* is what the search index holds for one searchable message (§2.3);
* an agent's *partition* is everything a store keeps for that agent (its windows, their
  events, its index and so its bm25 statistics), as OpenClaw keeps one database per agent
  (`agents/<agentId>/agent/openclaw-agent.sqlite`); `owner_agent_id` names the partition
  of a key.

Where `global` and `unknown` live (read in the `openclaw` npm package 2026.9.6, `dist/`).
A key without an agent id is owned by the configured default agent:
`resolveAgentIdFromSessionKey(key, configuredDefault)` (`session-key-*.mjs`) returns the
key's agent or, for a key without one, the configured default; `toAgentStoreSessionKey`
and `resolveSessionStoreKey` (`session-store-key-*.mjs`) keep `global` and `unknown` as
they are and `resolveLogicalSessionStoreAgentId` names their store's agent (a persisted
store owner, else the legacy default agent, else the sole agent), and the session is
written into that agent's database. Inside each agent database the kernel's scope adds
`session_key IN ('global', 'unknown')` (`session-transcript-search-*.mjs`), which is how
they are found. Without configuration the default agent is `main` (`DEFAULT_AGENT_ID =
LEGACY_IMPLICIT_AGENT_ID = "main"`), so here `global` and `unknown` windows belong to the
partition of `DEFAULT_AGENT_ID`. (OpenClaw can also write such a key into another agent's
database when a session is created for an explicit agent; a window here has no owner
apart from its key, so that case is not modelled.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

RESERVED_SESSION_KEYS = ("global", "unknown")

WINDOW_REASONS = (
    "initial", "reset", "rollover", "fork", "rewind", "switch", "recovery", "compaction",
)

SESSION_KINDS = ("chat", "subagent", "cron", "system", "dock")


def agent_id_of(session_key: str) -> str | None:
    """Return the agent id of an agent-scoped key, else None.

    >>> agent_id_of("agent:work_team:main")
    'work_team'
    >>> agent_id_of("global") is None
    True
    >>> agent_id_of("agent::x") is None
    True
    """
    if not session_key.startswith("agent:"):
        return None
    agent_id, separator, rest = session_key[len("agent:"):].partition(":")
    if not separator or not agent_id or not rest:
        return None
    return agent_id


#: An incognito session's key (OpenClaw 2026.9.6, `session-key-*.mjs`), compared lower-cased.
INCOGNITO_KEY_PATTERN = re.compile(
    r"^agent:[^:]+:(?:dashboard|subagent|internal-session-effects):incognito-[^:]+$"
)


def is_incognito_key(session_key: str) -> bool:
    """Whether the key has an incognito session's shape (trimmed, lower-cased).

    >>> is_incognito_key("agent:main:dashboard:incognito-private")
    True
    >>> is_incognito_key("agent:main:dashboard:private"), is_incognito_key(" Agent:X:Subagent:Incognito-1 ")
    (False, True)
    """
    return bool(INCOGNITO_KEY_PATTERN.match(session_key.strip().lower()))


def owner_agent_id(session_key: str) -> str | None:
    """The agent whose partition holds windows of `session_key`: the key's agent, or
    `DEFAULT_AGENT_ID` for `global` and `unknown` (see the module docstring); None for a
    string that is not a session key.

    >>> owner_agent_id("agent:work_team:main"), owner_agent_id("unknown")
    ('work_team', 'main')
    >>> owner_agent_id("cron:daily") is None
    True
    """
    if session_key in RESERVED_SESSION_KEYS:
        return DEFAULT_AGENT_ID
    return agent_id_of(session_key)


@dataclass(frozen=True, slots=True)
class SessionWindow:
    """One physical transcript window and the metadata of the session it belongs to.

    `current` marks the live window of its key; retained windows stay searchable.
    `archived` marks a cold window, excluded from search until restored. `incognito`
    (or an incognito key, `is_incognito`) marks a transcript no index ever holds.
    """

    session_id: str
    session_key: str
    previous_session_id: str | None = None
    reason: str = "initial"
    current: bool = True
    title: str | None = None
    kind: str = "chat"
    spawned_by: str | None = None
    owner_session_key: str | None = None
    parent_session_key: str | None = None
    incognito: bool = False
    archived: bool = False
    group: str | None = None
    created_at: float | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def agent_id(self) -> str | None:
        """The agent id of this window's key (None for `global`, `unknown`)."""
        return agent_id_of(self.session_key)

    @property
    def is_incognito(self) -> bool:
        """Whether this is an incognito transcript: flagged, or under an incognito key.

        OpenClaw keeps such a transcript in process memory only, never in the agent's
        database, so no index here holds its rows: they neither match nor count in the
        partition's bm25 statistics. Its events are still stored (history reads them
        for their own session). Whether a window is private is fixed when it is first
        written (`engine.transcript.validation.privacy_change_problem`).

        >>> SessionWindow("w", "agent:main:dashboard:incognito-x").is_incognito
        True
        >>> SessionWindow("w", "agent:main:main", incognito=True).is_incognito
        True
        >>> SessionWindow("w", "agent:main:main").is_incognito
        False
        """
        return self.incognito or is_incognito_key(self.session_key)


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One transcript event in its window: `seq` is 0-based append order in the window.

    `event` is the JSON object exactly as it came; `created_at` is the store's receipt
    time in epoch milliseconds (the timestamp fallback of behaviour.md §2.3 rule 5).
    """

    session_id: str
    seq: int
    event: dict[str, Any] = field(compare=False, hash=False)
    created_at: float = 0.0

    @property
    def event_id(self) -> str | None:
        """The event's `id`, trimmed, when it is a non-blank string."""
        value = self.event.get("id")
        if isinstance(value, str) and value.strip():
            return value.strip()
        return None

    @property
    def event_type(self) -> str | None:
        """The event's `type` when it is a string."""
        value = self.event.get("type")
        return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One searchable message (behaviour.md §2.3): what the FTS row of upstream holds."""

    session_id: str
    message_id: str
    role: str
    timestamp: float
    text: str
    seq: int


# --------------------------------------------------------------------------------------
# Search values (behaviour.md §5.1, §5.2). Every backend takes a `SearchRequest` and
# returns a `SearchResult`; the kernel result JSON is `SearchResult.to_json()`.
# --------------------------------------------------------------------------------------

#: The agent a request without `agent_id` and without `session_keys` searches (the
#: upstream default agent; `agent:main:*` plus `global` and `unknown`).
DEFAULT_AGENT_ID = "main"

MATCH_MODES = ("exact", "prefix")
ORDERS = ("relevance", "recent")
SEARCHABLE_ROLES = ("user", "assistant")


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """The store-level search parameters (`SessionTranscriptSearchParams`).

    `session_keys=None` means the agent's namespace `agent:<agent_id>:*` plus `global` and
    `unknown`; an empty tuple means every session in the store. `limit=None` means 10;
    it is clamped to 1..25 by the query policy, not here.
    """

    query: str
    agent_id: str | None = None
    limit: int | None = None
    session_keys: tuple[str, ...] | None = None
    session_id: str | None = None
    role: str | None = None
    match: str = "exact"
    order: str = "relevance"

    def to_json(self) -> dict[str, Any]:
        """The request as JSON (the `params` of `sessions.search`); fields that are None
        are left out, so `sessionKeys` absent (the agent's namespace) and `[]` (every
        session) stay apart.

        >>> SearchRequest("cafe", agent_id="main", limit=5).to_json()
        {'agentId': 'main', 'query': 'cafe', 'limit': 5, 'match': 'exact', 'order': 'relevance'}
        """
        value: dict[str, Any] = {}
        for name, attribute in REQUEST_JSON_FIELDS.items():
            member = getattr(self, attribute)
            if member is not None:
                value[name] = list(member) if name == "sessionKeys" else member
        return value

    @classmethod
    def from_json(cls, value: Any) -> SearchRequest:
        """The request a JSON object describes; `InvalidRequest` naming the field otherwise.

        The rules, in the order they are checked: only the fields of `to_json`; each of
        the expected JSON type or null (`query` may not be null; a boolean is not a
        number); `query` present; `sessionKeys` an array of strings; `role`, `match`,
        `order` one of their values. `match` and `order` null mean their defaults. The
        query text itself is the query policy's to judge, when the search runs.

        >>> SearchRequest.from_json({"query": "cafe", "sessionKeys": []})
        SearchRequest(query='cafe', agent_id=None, limit=None, session_keys=(), session_id=None, role=None, match='exact', order='relevance')
        >>> SearchRequest.from_json({"query": "cafe", "limit": "5"})
        Traceback (most recent call last):
        ...
        engine.model.InvalidRequest: limit has the wrong type (expected an integer or null, got a string)
        """
        if not isinstance(value, dict):
            raise InvalidRequest(None, "a search request must be a JSON object")
        unknown = sorted(set(value) - set(REQUEST_JSON_FIELDS))
        if unknown:
            raise InvalidRequest(unknown[0], f"unknown params: {', '.join(unknown)}")
        for name, member in value.items():
            if member is None and name != "query":
                continue
            expected, description = REQUEST_JSON_TYPES[name]
            if not isinstance(member, expected) or isinstance(member, bool):
                raise InvalidRequest(name, f"{name} has the wrong type (expected "
                                           f"{description}, got {json_type_name(member)})")
        if "query" not in value:
            raise InvalidRequest("query", "query is required")
        keys = value.get("sessionKeys")
        if keys is not None and not all(isinstance(key, str) for key in keys):
            raise InvalidRequest("sessionKeys", "sessionKeys must be an array of strings")
        for name, allowed in (("role", SEARCHABLE_ROLES), ("match", MATCH_MODES),
                              ("order", ORDERS)):
            member = value.get(name)
            if member is not None and member not in allowed:
                raise InvalidRequest(name, f"{name} must be one of: {', '.join(allowed)}")
        return cls(
            query=value["query"],
            agent_id=value.get("agentId"),
            limit=value.get("limit"),
            session_keys=tuple(keys) if keys is not None else None,
            session_id=value.get("sessionId"),
            role=value.get("role"),
            match=value.get("match") or "exact",
            order=value.get("order") or "relevance",
        )


class InvalidRequest(ValueError):
    """A JSON search request of the wrong shape; `field` names the wire field at fault
    (None when the value is not an object at all)."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


#: Wire name -> `SearchRequest` attribute, in the wire order.
REQUEST_JSON_FIELDS: dict[str, str] = {
    "agentId": "agent_id",
    "query": "query",
    "limit": "limit",
    "sessionKeys": "session_keys",
    "sessionId": "session_id",
    "role": "role",
    "match": "match",
    "order": "order",
}

#: Wire name -> (accepted Python types of the decoded JSON, how the message says it).
REQUEST_JSON_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "agentId": ((str,), "a string or null"),
    "query": ((str,), "a string"),
    "limit": ((int,), "an integer or null"),
    "sessionKeys": ((list,), "an array of strings or null"),
    "sessionId": ((str,), "a string or null"),
    "role": ((str,), "a string or null"),
    "match": ((str,), "a string or null"),
    "order": ((str,), "a string or null"),
}


def json_type_name(value: Any) -> str:
    """How an error message names the JSON type of a decoded value.

    >>> json_type_name("x"), json_type_name(True), json_type_name(2.5), json_type_name(None)
    ('a string', 'a boolean', 'a number', 'null')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def json_number(value: float | None) -> int | float | None:
    """A number as JSON should carry it: an integral float as an int (the engine keeps
    times as floats; the transcripts held integers, and OpenClaw writes them as
    JavaScript does, without `.0`), anything else as it is. Every JSON form of a hit
    writes its time through this one function.

    >>> json_number(1788429640000.0), json_number(0.5), json_number(None), json_number(3)
    (1788429640000, 0.5, None, 3)
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def json_key(name: str) -> str:
    """A field name as every JSON document of the engine spells it: camelCase, as
    OpenClaw's JSON does (`sessionKey`, `rowsCommitted`). Python names (`messages_indexed`)
    become JSON keys through this one function; data used as a key (an agent id, a
    tokenizer option's own name) is never passed through it.

    >>> json_key("messages_indexed"), json_key("crc_ok"), json_key("bytes")
    ('messagesIndexed', 'crcOk', 'bytes')
    """
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One hit; `score` is `-bm25()` (positive, larger is better)."""

    session_key: str
    session_id: str
    message_id: str
    role: str
    timestamp: float
    snippet: str
    score: float

    def to_json(self) -> dict[str, Any]:
        """The hit as the kernel's JSON object, keys in the wire order (a whole-millisecond
        time as an integer: `json_number`)."""
        return {
            "sessionKey": self.session_key,
            "sessionId": self.session_id,
            "messageId": self.message_id,
            "role": self.role,
            "timestamp": json_number(self.timestamp),
            "snippet": self.snippet,
            "score": self.score,
        }


@dataclass(frozen=True, slots=True)
class SearchResult:
    """A kernel result: hits, `truncated` (more rows than the limit) and `indexing`."""

    hits: tuple[SearchHit, ...]
    truncated: bool = False
    indexing: bool = False
    archived_transcripts_excluded: int = 0

    def to_json(self) -> dict[str, Any]:
        """`{"hits", "truncated", "indexing"}` plus `archivedTranscriptsExcluded` when > 0."""
        value: dict[str, Any] = {
            "hits": [hit.to_json() for hit in self.hits],
            "truncated": self.truncated,
            "indexing": self.indexing,
        }
        if self.archived_transcripts_excluded > 0:
            value["archivedTranscriptsExcluded"] = self.archived_transcripts_excluded
        return value


#: The answer without hits, flags or archived windows (shared: a `SearchResult` is frozen).
NO_HITS = SearchResult(hits=())


#: The longest agent id a store accepts: OpenClaw's canonical ids are 1 to 64 characters.
MAX_AGENT_ID_LENGTH = 64


def agent_id_problem(agent_id: str) -> str | None:
    """Why `agent_id` cannot name an agent's partition (a folder of the store), or None.

    An agent's partition is stored under `agents/<agentId>/`, as OpenClaw stores an
    agent's database, so the id must be one safe path component.

    >>> [agent_id_problem(a) for a in ("main", "work_team")]
    [None, None]
    >>> agent_id_problem("..")
    "agent id '..' is not a valid folder name"
    >>> agent_id_problem("a/b")
    "agent id 'a/b' contains '/'"
    >>> agent_id_problem("")
    'agent id is empty'
    >>> agent_id_problem(" "), agent_id_problem("a" * 65)[:47]
    ("agent id ' ' is blank", "agent id 'aaaaaaaaaa…' is 65 characters long; a")
    """
    if not agent_id:
        return "agent id is empty"
    if not agent_id.strip():
        return f"agent id {agent_id!r} is blank"
    if len(agent_id) > MAX_AGENT_ID_LENGTH or len(agent_id.encode("utf-8", "surrogatepass")) > 255:
        shown = agent_id if len(agent_id) <= 10 else agent_id[:10] + "…"
        return (f"agent id {shown!r} is {len(agent_id)} characters long; at most "
                f"{MAX_AGENT_ID_LENGTH} (OpenClaw's agent ids), and at most 255 bytes as "
                "UTF-8 (a folder name)")
    if agent_id in (".", ".."):
        return f"agent id {agent_id!r} is not a valid folder name"
    for character in ("/", "\\", "\x00"):
        if character in agent_id:
            return f"agent id {agent_id!r} contains {character!r}"
    return None
