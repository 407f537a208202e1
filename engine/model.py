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
from dataclasses import dataclass, field, replace
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


#: JavaScript's whitespace and line terminators (`String.prototype.trim`, `\\s`).
#: Python's `str.strip()` differs: it strips U+001C–U+001F and U+0085, and keeps U+FEFF.
JS_WHITESPACE = ("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                 "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


def js_trim(text: str) -> str:
    """Trim like JavaScript's `String.prototype.trim`.

    >>> js_trim("\\ufeff  hello\\u3000")
    'hello'
    >>> js_trim("\\x1fkept\\x85")
    '\\x1fkept\\x85'
    """
    return text.strip(JS_WHITESPACE)


#: The parts of a key OpenClaw keeps in the case given (`session-key-normalization.ts`):
#: a Signal group id (the segment after `signal:group:`, trimmed), and a Matrix room (the
#: rest of a key whose body starts `matrix:channel:` or `matrix:group:`, up to a last
#: `:thread:`, and the thread id after it). JavaScript's `/i` here folds ASCII letters only
#: (`KEY_CASE_FLAGS`). The patterns, like `INCOGNITO_KEY_PATTERN`, are kept as their text
#: and compiled on first use (`re`'s own cache): a search reads no key's case.
SIGNAL_GROUP_ID_PATTERN = r"(^|:)signal:group:([^:]+)"
MATRIX_ROOM_KEY_PATTERN = r"^(?:(?:agent:[^:]*:)+:*)?matrix:(?:channel|group):"
KEY_CASE_FLAGS = re.IGNORECASE | re.ASCII
THREAD_MARKER = ":thread:"


def canonical_session_key(session_key: str) -> str:
    """The key as OpenClaw stores and compares it (`normalizeSessionKeyPreservingOpaquePeerIds`
    of OpenClaw 2026.9.6): trimmed as JavaScript trims, lower-cased as JavaScript's
    `toLowerCase` does, except the opaque peer ids of `SIGNAL_GROUP_ID_PATTERN` and
    `MATRIX_ROOM_KEY_PATTERN`, which keep their case. OpenClaw writes every key in this
    form and reads a given key in it, so both spellings of a key name one session.

    >>> canonical_session_key(" agent:Main:Telegram:Group:42 ")
    'agent:main:telegram:group:42'
    >>> canonical_session_key("agent:main:signal:group:AbC=:Thread:9")
    'agent:main:signal:group:AbC=:thread:9'
    >>> canonical_session_key("Agent:Ops:Matrix:Channel:!RoomId:Server.org:THREAD:$Ev")
    'agent:ops:matrix:channel:!RoomId:Server.org:thread:$Ev'
    """
    raw = js_trim(session_key)
    folded = raw.lower()
    if "signal:" not in folded and "matrix:" not in folded:
        return folded
    spans = sorted((span for span in _case_kept_spans(raw) if span[1] > span[0]),
                   key=lambda span: span[0])
    pieces: list[str] = []
    cursor = 0
    for start, end, trim in spans:
        if start < cursor:
            continue
        pieces.append(js_trim(raw[cursor:start]).lower())
        kept = raw[start:end]
        pieces.append(js_trim(kept) if trim else kept)
        cursor = end
    pieces.append(js_trim(raw[cursor:]).lower())
    return "".join(pieces)


def _case_kept_spans(raw: str) -> list[tuple[int, int, bool]]:
    """(start, end, trim) of each part of `raw` that keeps its case
    (`SIGNAL_GROUP_ID_PATTERN` segments, then the Matrix room and thread id of
    `MATRIX_ROOM_KEY_PATTERN`)."""
    spans = []
    for found in re.finditer(SIGNAL_GROUP_ID_PATTERN, raw, KEY_CASE_FLAGS):
        segment_start = found.end() - len(found.group(2))
        spans.append((segment_start, found.end(), True))
    room = re.match(MATRIX_ROOM_KEY_PATTERN, raw, KEY_CASE_FLAGS)
    if room is None or room.end() >= len(raw):
        return spans
    tail_start = room.end()
    # OpenClaw finds the marker in the tail trimmed and lower-cased, and uses that index
    # in the tail as given (a tail that starts with a space is off by its length).
    marker = js_trim(raw[tail_start:]).lower().rfind(THREAD_MARKER)
    if marker == -1:
        spans.append((tail_start, len(raw), False))
        return spans
    spans.append((tail_start, tail_start + marker, False))
    thread_start = tail_start + marker + len(THREAD_MARKER)
    if thread_start < len(raw):
        spans.append((thread_start, len(raw), False))
    return spans


#: An incognito session's key (OpenClaw 2026.9.6, `session-key-*.mjs`), compared lower-cased
#: (the pattern's text, compiled on first use as `SIGNAL_GROUP_ID_PATTERN` is).
INCOGNITO_KEY_PATTERN = (
    r"^agent:[^:]+:(?:dashboard|subagent|internal-session-effects):incognito-[^:]+$"
)


def is_incognito_key(session_key: str) -> bool:
    """Whether the key has an incognito session's shape (trimmed, lower-cased).

    >>> is_incognito_key("agent:main:dashboard:incognito-private")
    True
    >>> is_incognito_key("agent:main:dashboard:private"), is_incognito_key(" Agent:X:Subagent:Incognito-1 ")
    (False, True)
    """
    return re.match(INCOGNITO_KEY_PATTERN, session_key.strip().lower()) is not None


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


#: The fields of a window that hold session keys, each stored in `canonical_session_key`'s form.
WINDOW_KEY_FIELDS = ("session_key", "spawned_by", "owner_session_key", "parent_session_key")


def canonical_window(window: SessionWindow) -> SessionWindow:
    """`window` with every key field in OpenClaw's stored form (`canonical_session_key`);
    the same object when they are already (a field that is not a string is left for the
    window's checks to refuse).

    >>> canonical_window(SessionWindow("w1", "agent:Main:Telegram:X", spawned_by="Agent:Main:Y"))
    SessionWindow(session_id='w1', session_key='agent:main:telegram:x', previous_session_id=None, reason='initial', current=True, title=None, kind='chat', spawned_by='agent:main:y', owner_session_key=None, parent_session_key=None, incognito=False, archived=False, group=None, created_at=None, extra={})
    """
    changes = {}
    for name in WINDOW_KEY_FIELDS:
        value = getattr(window, name)
        if isinstance(value, str) and (canonical := canonical_session_key(value)) != value:
            changes[name] = canonical
    return replace(window, **changes) if changes else window


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
    """One hit; `score` is `-bm25()` (positive, larger is better).

    `matched` is where `snippet` shows what matched: `(start, end)` code point offsets, in
    order, one per phrase instance FTS5's highlighter marks in the excerpt (instances that
    overlap are one; one cut by the excerpt's end ends there) or per occurrence of a CJK
    retry's substring. The engine knew them when it cut the excerpt, so a reader (the
    command line, the explorer) marks them without tokenizing again. They are not part
    of the product's JSON (`to_json`), nor of a hit's equality.
    """

    session_key: str
    session_id: str
    message_id: str
    role: str
    timestamp: float
    snippet: str
    score: float
    matched: tuple[tuple[int, int], ...] = field(default=(), compare=False, repr=False)

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
