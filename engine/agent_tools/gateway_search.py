"""The Gateway's `sessions.search` handler: one agent per call, checked as its schema checks.

Owns: `gateway_search`, what OpenClaw 2026.9.6's Gateway answers a client's
`sessions.search` (`sessionReadHandlers["sessions.search"]` with
`resolveSessionSearchScope`), over this engine's store: the protocol schema and its
messages (`schema_problems`), the scope (which agent, which keys) and the merge of that
agent's hits. Must not touch: the kernel search itself (the store answers it), the agent
tools (`sessions_search` searches through the store directly, as OpenClaw's tool calls its
own embedded Gateway), or the JSON-RPC envelope (`engine.rpc`).

The engine's own `sessions.search` method is the store-level kernel search (roles, order,
prefix mode, a merge across agents); this handler is the Gateway a client of OpenClaw
reaches, refusing what that Gateway refuses.

The call, as the Gateway makes it:

1. **Schema** (a closed object): `query` a string of 1 to 4096 characters (code points),
   required; `agentId` a non-empty string; `sessionKeys` an array of 1 to 200 non-empty
   strings; `limit` an integer 1 to 25; `scope` an object, not with `agentId` or
   `sessionKeys`. Every failure is listed, joined by `; `, after `invalid sessions.search
   params: ` (`at /limit: must be <= 25`, `at root: unexpected property 'role'`, ...).
2. `query` trimmed must not be empty (`query must not be empty`). `scope` (a search of a
   roster selection) is the Control UI's; this engine has no roster projection and
   refuses it.
3. **Scope**. `agentId` is normalised as OpenClaw normalises agent ids (trimmed,
   lower-cased; another character becomes `-`, dashes at either end go, 64 characters at
   most; nothing left: `Unknown agent id "<id>"`). Each key names an agent: with an
   unconfigured `agentId`, that agent; else its own agent, and an unscoped key
   (`global`, `main`, ...) the default agent `main`, unless several agents are
   configured, where it has no owner (`Multiple agents are configured, but session key
   "<key>" has no explicit owner. Pass agentId or use an agent-prefixed session key.`);
   with a configured `agentId`, a key of another agent is refused (`agent "<id>" does not
   match session key agent "<other>"`). Keys of more than one agent, or of another agent than `agentId`:
   `sessions.search supports one agent per call`. No agent named at all: `main`'s. A
   configured agent named without keys: `agentId requires sessionKeys`.
4. **Keys**. `main` is the agent's main session (`agent:<agent>:main`), another unscoped
   name (not `global` or `unknown`) the agent's key of that name
   (`engine.agent_tools.targets.kernel_key`, as the tools resolve them). For an unconfigured
   agent, the keys of another agent are dropped; none left: `{"results": []}`.
5. **Search** that agent's partition (its keys, or all of it), with limit 25 for an
   unconfigured agent (the request's for a configured one); one partition's hits are
   already in the Gateway's order (score, time, `messageId`) and distinct, so they are
   only cut to `limit` (10 when absent). The answer:
   `{results, archivedTranscriptsExcluded?, indexing?, truncated?}`, `truncated` when the
   search truncated or more hits than `limit` remain.

Refusals are `GatewayRefusal`s with the Gateway's message and error code
(`INVALID_REQUEST`, or `UNAVAILABLE` when the search itself fails).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.agent_tools.session_keys import key_agent
from engine.agent_tools.targets import held_by, kernel_key
from engine.agent_tools.tool_config import ToolConfig
from engine.backends.protocol import Backend
from engine.errors import EngineError
from engine.model import (
    DEFAULT_AGENT_ID,
    RESERVED_SESSION_KEYS,
    SearchRequest,
    canonical_session_key,
    js_trim,
)

METHOD = "sessions.search"
INVALID_REQUEST = "INVALID_REQUEST"
UNAVAILABLE = "UNAVAILABLE"
#: The schema's members, in its order (messages are listed in this order).
MEMBERS = ("agentId", "sessionKeys", "scope", "query", "limit")
MAX_QUERY_CHARACTERS = 4096
MAX_SESSION_KEYS = 200
MAX_LIMIT = 25
DEFAULT_LIMIT = 10
#: The limit the Gateway asks an unconfigured agent's store for.
STORE_LIMIT = 25
VALID_AGENT_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$", re.IGNORECASE)
INVALID_AGENT_CHARACTERS = re.compile(r"[^a-z0-9_-]+")


class GatewayRefusal(EngineError):
    """The Gateway refused the call: `code` is its error code (`INVALID_REQUEST`,
    `UNAVAILABLE`), the message its words."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class GatewayScope:
    """The one agent a call searches, whether the configuration lists it, and the keys
    (None: all of the agent's sessions)."""

    agent_id: str
    configured: bool
    requested: bool
    session_keys: tuple[str, ...] | None


def characters(text: str) -> int:
    """The length the schema counts: code points (JSON's surrogate pairs arrive joined,
    and a lone surrogate counts one, as in the Gateway's validator).

    >>> characters("ab"), characters("😀"), characters("\\ud800")
    (2, 1, 1)
    """
    return len(text)


def _is_integer(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, float) and value.is_integer())


def _string_problems(value: Any, where: str, most: int | None = None) -> list[str]:
    if not isinstance(value, str):
        return [f"{where}must be string"]
    if characters(value) < 1:
        return [f"{where}must not have fewer than 1 characters"]
    if most is not None and characters(value) > most:
        return [f"{where}must not have more than {most} characters"]
    return []


def schema_problems(params: Any) -> list[str]:
    """What the Gateway's schema says of `params` (empty when they pass).

    >>> schema_problems({"query": "saffron", "limit": 30})
    ['at /limit: must be <= 25']
    >>> schema_problems({"query": 5, "limit": 0, "role": "x"})
    ["at root: unexpected property 'role'", 'at /query: must be string', 'at /limit: must be >= 1']
    >>> schema_problems({})
    ["must have required property 'query'"]
    """
    if not isinstance(params, Mapping):
        return ["must be object"]
    problems = []
    if "query" not in params:
        problems.append("must have required property 'query'")
    problems += [f"at root: unexpected property '{name}'" for name in params
                 if name not in MEMBERS]
    if "agentId" in params:
        problems += _string_problems(params["agentId"], "at /agentId: ")
    if "sessionKeys" in params:
        keys = params["sessionKeys"]
        if not isinstance(keys, list):
            problems.append("at /sessionKeys: must be array")
        else:
            if len(keys) > MAX_SESSION_KEYS:
                problems.append(f"at /sessionKeys: must not have more than {MAX_SESSION_KEYS} "
                                "items")
            if not keys:
                problems.append("at /sessionKeys: must not have fewer than 1 items")
            for index, key in enumerate(keys):
                problems += _string_problems(key, f"at /sessionKeys/{index}: ")
    if "scope" in params and not isinstance(params["scope"], Mapping):
        problems.append("at /scope: must be object")
    if "query" in params:
        problems += _string_problems(params["query"], "at /query: ", MAX_QUERY_CHARACTERS)
    if "limit" in params:
        limit = params["limit"]
        if not _is_integer(limit):
            problems.append("at /limit: must be integer")
        elif limit < 1:
            problems.append("at /limit: must be >= 1")
        elif limit > MAX_LIMIT:
            problems.append(f"at /limit: must be <= {MAX_LIMIT}")
    if "scope" in params and ("agentId" in params or "sessionKeys" in params):
        problems.append("must not be valid")
    return list(dict.fromkeys(problems))


def normalized_agent_id(value: str) -> str | None:
    """OpenClaw's `normalizeAgentIdStrict`: the canonical id, or None when nothing is left.

    >>> normalized_agent_id(" Ops "), normalized_agent_id("NOPE!"), normalized_agent_id("---")
    ('ops', 'nope', None)
    """
    trimmed = js_trim(value)
    lowered = trimmed.lower()
    if VALID_AGENT_ID.match(trimmed):
        return lowered
    cleaned = INVALID_AGENT_CHARACTERS.sub("-", lowered).strip("-")[:64]
    return cleaned or None


def _owner(key: str, config: ToolConfig, given: str | None = None) -> str:
    """The agent a key names when the call names none (step 3); a refusal names the key
    as the call gave it (`given`)."""
    agent_id = key_agent(key)
    if agent_id is not None:
        return agent_id
    if len(config.agents) > 1:
        raise GatewayRefusal(INVALID_REQUEST, (
            f'Multiple agents are configured, but session key "{given or key}" has no explicit owner. '
            "Pass agentId or use an agent-prefixed session key."))
    return config.agents[0] if config.agents else DEFAULT_AGENT_ID


def gateway_scope(params: Mapping[str, Any], config: ToolConfig) -> GatewayScope:
    """Steps 3 and 4 of the module docstring, for params that passed the schema."""
    requested = None
    if "agentId" in params:
        requested = normalized_agent_id(params["agentId"])
        if requested is None:
            raise GatewayRefusal(INVALID_REQUEST, f'Unknown agent id "{params["agentId"]}"')
    keys = params.get("sessionKeys")
    configured_ids = set(config.agents)
    owners = []
    resolved = []
    for given in keys or ():
        # read in the form OpenClaw stores keys (`agent:Work:X` is `agent:work:x`), as the
        # Gateway's `resolveSessionStoreKey` reads them
        key = canonical_session_key(given)
        if requested is not None and requested not in configured_ids:
            owner = requested
        elif requested is not None:
            owner = key_agent(key) or requested
            if owner != requested:
                raise GatewayRefusal(INVALID_REQUEST, f'agent "{requested}" does not match '
                                                      f'session key agent "{owner}"')
        else:
            owner = _owner(key, config, given)
        owners.append(owner)
        resolved.append(kernel_key(key, owner))
    distinct = set(owners)
    if len(distinct) > 1 or (requested is not None and distinct - {requested}):
        raise GatewayRefusal(INVALID_REQUEST, "sessions.search supports one agent per call")
    agent_id = requested or (owners[0] if owners else _owner("main", config))
    configured = agent_id in configured_ids
    if requested is not None and keys is None and configured:
        raise GatewayRefusal(INVALID_REQUEST, "agentId requires sessionKeys")
    if keys is not None and not configured:
        resolved = [key for key in resolved if (
            requested if requested is not None and key in RESERVED_SESSION_KEYS
            else key_agent(key) or DEFAULT_AGENT_ID) == agent_id]
    session_keys = None if keys is None else tuple(dict.fromkeys(resolved))
    return GatewayScope(agent_id, configured, requested is not None, session_keys)


def gateway_search(store: Backend, params: Any, config: ToolConfig = ToolConfig()) -> dict[str, Any]:
    """The Gateway's answer to `sessions.search` with `params` (the module docstring)."""
    problems = schema_problems(params)
    if problems:
        raise GatewayRefusal(INVALID_REQUEST,
                             f"invalid {METHOD} params: {'; '.join(problems)}")
    query = js_trim(params["query"])
    if not query:
        raise GatewayRefusal(INVALID_REQUEST, "query must not be empty")
    if "scope" in params:
        raise GatewayRefusal(INVALID_REQUEST, "sessions.search scope (a roster selection) is "
                                              "not supported: this engine keeps no roster "
                                              "projection; name agentId or sessionKeys")
    scope = gateway_scope(params, config)
    keys = scope.session_keys
    if keys is not None:
        keys = tuple(key for key in keys if held_by(key, scope.agent_id))
    limit = int(params.get("limit", DEFAULT_LIMIT))
    if keys is not None and not keys:
        return {"results": []}
    store_limit = limit if scope.configured else STORE_LIMIT
    try:
        result = store.search(SearchRequest(query, agent_id=scope.agent_id, limit=store_limit,
                                            session_keys=keys))
    except EngineError as error:
        raise GatewayRefusal(UNAVAILABLE, str(error)) from None
    # One agent's partition answers, ranked, distinct and limited as the Gateway's merge
    # of one store's hits would be; the Gateway then cuts them to `limit`.
    hits = result.hits
    answer: dict[str, Any] = {"results": [hit.to_json() for hit in hits[:limit]]}
    if result.archived_transcripts_excluded:
        answer["archivedTranscriptsExcluded"] = result.archived_transcripts_excluded
    if result.indexing:
        answer["indexing"] = True
    if result.truncated or len(hits) > limit:
        answer["truncated"] = True
    return answer
