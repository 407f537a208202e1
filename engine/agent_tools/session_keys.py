"""What a session key says by its shape alone.

Owns: the predicates the visibility rules and the tools apply to a key string: its agent
and rest, incognito keys, subagent and ACP children, and whether a tool argument names a
sessionId rather than a key. Must not touch: any store (a key's metadata, such as who
spawned it, comes from the roster) or the rules that use these answers.

The shapes are OpenClaw 2026.9.6's (`session-key-*.mjs`, `sessions-helpers-*.mjs`):

* an agent-scoped key is `agent:<agentId>:<rest>` with a non-blank agent id and a rest
  that neither is empty nor starts with `:`; agent ids compare lower-cased, as OpenClaw
  normalises them;
* an incognito key is `agent:<id>:dashboard:incognito-<x>` (or `subagent:` or
  `internal-session-effects:` in place of `dashboard:`), compared lower-cased;
* a subagent child's rest starts with `subagent:`, an ACP child's with `acp:` (or the key
  itself does);
* a session kind the Control UI's palette leaves out shows in the key too (`kind_by_shape`):
  a subagent or ACP child is a `subagent` run, a rest (or key) starting with `cron:` a
  `cron` job, a rest starting with `system:` or `dock:` a `system` or `dock` session;
* a tool's `sessionKey` argument is read as a sessionId when it looks like a UUID or does
  not look like a key at all (`main`, `global`, `unknown`, `current`, `agent:…`, `cron:…`,
  `hook:…`, `node-…`, `node:…`, or a key holding `:group:` or `:channel:`).
"""

from __future__ import annotations

import re

from engine.model import agent_id_of, is_incognito_key

SESSION_ID_PATTERN = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE
)
#: Keys that name a session without an agent id, by convention.
NAMED_KEYS = ("main", "global", "unknown", "current")


def key_agent(session_key: str) -> str | None:
    """The lower-cased agent id of an agent-scoped key, else None.

    >>> key_agent("agent:Work_Team:main"), key_agent("global"), key_agent("agent:x::y")
    ('work_team', None, None)
    """
    agent_id = agent_id_of(session_key)
    if agent_id is None or not agent_id.strip():
        return None
    rest = session_key[len("agent:") + len(agent_id) + 1:]
    if rest.startswith(":"):
        return None
    return agent_id.strip().lower()


def key_rest(session_key: str) -> str | None:
    """What follows `agent:<id>:` in an agent-scoped key, else None.

    >>> key_rest("agent:main:subagent:7"), key_rest("global")
    ('subagent:7', None)
    """
    if key_agent(session_key) is None:
        return None
    return session_key.split(":", 2)[2]


def is_agent_scoped(session_key: str) -> bool:
    """Whether the key names its agent.

    >>> is_agent_scoped("agent:main:main"), is_agent_scoped("main")
    (True, False)
    """
    return key_agent(session_key) is not None


def is_incognito(session_key: str) -> bool:
    """Whether the key is an incognito session's, which session tools never read.

    >>> is_incognito("agent:main:dashboard:incognito-private")
    True
    >>> is_incognito("agent:main:dashboard:private")
    False
    """
    return is_incognito_key(session_key)


def _child_prefix(session_key: str, prefix: str) -> bool:
    raw = session_key.strip().lower()
    if raw.startswith(prefix):
        return True
    rest = key_rest(raw)
    return rest is not None and rest.startswith(prefix)


def is_subagent(session_key: str) -> bool:
    """Whether the key is a native subagent child's.

    >>> is_subagent("agent:main:subagent:run-1"), is_subagent("agent:main:main")
    (True, False)
    """
    return _child_prefix(session_key, "subagent:")


def is_acp(session_key: str) -> bool:
    """Whether the key is an ACP child session's.

    >>> is_acp("agent:main:acp:claude:1"), is_acp("acp:x")
    (True, True)
    """
    return _child_prefix(session_key, "acp:")


#: The first segment of a key's rest that names a session kind, and that kind.
SHAPED_KINDS = (("cron:", "cron"), ("system:", "system"), ("dock:", "dock"))


def kind_by_shape(session_key: str) -> str | None:
    """The session kind a key's shape says, or None for a key that says none (a chat).

    >>> [kind_by_shape(key) for key in ("agent:main:subagent:7", "agent:main:acp:x:1",
    ...  "agent:main:cron:daily", "cron:daily", "agent:main:system:heartbeat",
    ...  "agent:main:dock:notes", "agent:main:main", "global")]
    ['subagent', 'subagent', 'cron', 'cron', 'system', 'dock', None, None]
    """
    if is_subagent(session_key) or is_acp(session_key):
        return "subagent"
    raw = session_key.strip().lower()
    rest = key_rest(raw)
    if raw.startswith("cron:"):
        return "cron"
    for prefix, kind in SHAPED_KINDS:
        if rest is not None and rest.startswith(prefix):
            return kind
    return None


def looks_like_session_key(value: str) -> bool:
    """Whether a tool argument reads as a session key (OpenClaw's `looksLikeSessionKey`).

    >>> looks_like_session_key("current"), looks_like_session_key("notes")
    (True, False)
    """
    raw = value.strip()
    if not raw:
        return False
    if raw in NAMED_KEYS or is_acp(raw):
        return True
    if raw.startswith(("agent:", "cron:", "hook:", "node-", "node:")):
        return True
    return ":group:" in raw or ":channel:" in raw


def names_a_session_id(value: str) -> bool:
    """Whether a tool's `sessionKey` argument is to be resolved as a sessionId.

    >>> names_a_session_id("0b6f1c9e-3a52-4c1e-9d7a-2f5b8e4c1a90")
    True
    >>> names_a_session_id("agent:main:main"), names_a_session_id("notes")
    (False, True)
    """
    return bool(SESSION_ID_PATTERN.match(value.strip())) or not looks_like_session_key(value)
