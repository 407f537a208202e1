"""The explorer's query parameters: read strictly, refused with a message naming the problem.

Owns: `Parameter` (one parameter's kind and bounds), `read_parameters` (a request's query
string against an endpoint's parameters), `ParameterError` (the 4xx answer: status and
message) and the request values the panels share: the kernel's `SearchRequest` and the
tool's arguments (`search_request`, `tool_call`), and the Gateway's `HistoryRequest`
(`history_request`). Must not touch: what a value means to the engine: the query text, a
session key, a cursor are the engine's to judge (its own errors, with the product's
wording, come back as 400 through the application), only their form is checked here.

Rules (every endpoint, before any work): the query string at most `MAX_QUERY_STRING`
bytes (else 414); no parameter the endpoint does not take; none given twice unless it
is a list (`sessionKey`), a list at most `MAX_LIST_ITEMS` items; a text at most its
`max_length` characters (default `MAX_TEXT`); a number a decimal integer within its
range; a choice one of its values; a flag `1`, `0`, `true` or `false`; a required
parameter present. Every refusal names the parameter and what was wrong with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine import HistoryRequest, Requester, SearchRequest
from engine.model import MATCH_MODES, ORDERS, SEARCHABLE_ROLES, agent_id_of

#: The longest query string an endpoint reads, in bytes (a longer one: 414).
MAX_QUERY_STRING = 256 * 1024
#: The longest text parameter, in characters, unless the parameter says otherwise.
MAX_TEXT = 16 * 1024
#: The most values of a list parameter.
MAX_LIST_ITEMS = 1000
FLAG_VALUES = {"1": True, "true": True, "0": False, "false": False}


class ParameterError(Exception):
    """A request the explorer refuses: the HTTP `status` (4xx) and a message naming the
    parameter and the problem."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True, slots=True)
class Parameter:
    """One parameter: its `kind` (`text`, `int`, `choice`, `flag`, `list`), whether it is
    `required`, and its bounds (`max_length` of a text or of each list item, the `low`
    and `high` of an int, the `choices` of a choice)."""

    kind: str = "text"
    required: bool = False
    max_length: int = MAX_TEXT
    low: int = 0
    high: int = 2**31 - 1
    choices: tuple[str, ...] = ()


def read_parameters(items: Sequence[tuple[str, str]], spec: Mapping[str, Parameter],
                    raw_length: int = 0) -> dict[str, Any]:
    """The parameters `items` (the query string's pairs, in order) give, checked against
    `spec`; `ParameterError` at the first problem (module docstring).

    >>> spec = {"q": Parameter(required=True), "limit": Parameter("int", low=1, high=25)}
    >>> read_parameters([("q", "cafe"), ("limit", "3")], spec)
    {'q': 'cafe', 'limit': 3}
    >>> read_parameters([("q", "cafe"), ("limit", "99")], spec)
    Traceback (most recent call last):
    ...
    engine.explorer.parameters.ParameterError: limit must be an integer from 1 to 25 (got '99')
    """
    if raw_length > MAX_QUERY_STRING:
        raise ParameterError(f"the query string is {raw_length} bytes; at most "
                             f"{MAX_QUERY_STRING} are read", status=414)
    values: dict[str, Any] = {}
    for name, value in items:
        parameter = spec.get(name)
        if parameter is None:
            taken = ", ".join(sorted(spec)) or "none"
            raise ParameterError(f"unknown parameter {_shown(name)} (this endpoint takes: "
                                 f"{taken})")
        if parameter.kind == "list":
            listed = values.setdefault(name, [])
            if len(listed) >= MAX_LIST_ITEMS:
                raise ParameterError(f"{name} is given more than {MAX_LIST_ITEMS} times")
            listed.append(_text(name, value, parameter.max_length))
            continue
        if name in values:
            raise ParameterError(f"{name} is given twice; give it once")
        values[name] = _value(name, value, parameter)
    for name, parameter in spec.items():
        if parameter.required and name not in values:
            raise ParameterError(f"{name} is required")
    return values


def _value(name: str, value: str, parameter: Parameter) -> Any:
    if parameter.kind == "int":
        text = value.strip()
        if not (text.isascii() and text.isdigit()) or len(text) > 10 \
                or not parameter.low <= int(text) <= parameter.high:
            raise ParameterError(f"{name} must be an integer from {parameter.low} to "
                                 f"{parameter.high} (got {_shown(value)})")
        return int(text)
    if parameter.kind == "choice":
        if value not in parameter.choices:
            raise ParameterError(f"{name} must be one of: {', '.join(parameter.choices)} "
                                 f"(got {_shown(value)})")
        return value
    if parameter.kind == "flag":
        if value.lower() not in FLAG_VALUES:
            raise ParameterError(f"{name} must be 1, 0, true or false (got {_shown(value)})")
        return FLAG_VALUES[value.lower()]
    return _text(name, value, parameter.max_length)


def _text(name: str, value: str, max_length: int) -> str:
    if len(value) > max_length:
        raise ParameterError(f"{name} is {len(value)} characters long; at most {max_length} "
                             "are accepted")
    return value


def _shown(value: str, limit: int = 40) -> str:
    """A value quoted in a message, cut short: a message never echoes a huge input.

    >>> _shown("x" * 100)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…' (100 characters)"
    """
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}"[:-1] + f"…' ({len(value)} characters)"


# ----- the requests the panels share ----------------------------------------------------

#: The parameters of a search, as the Hits, Why, Compare and case endpoints take them.
SEARCH_PARAMETERS: dict[str, Parameter] = {
    "q": Parameter(required=True),
    "agent": Parameter(max_length=256),
    "sessionKey": Parameter("list", max_length=1024),
    "sessionId": Parameter(max_length=1024),
    "role": Parameter("choice", choices=SEARCHABLE_ROLES),
    "match": Parameter("choice", choices=MATCH_MODES),
    "order": Parameter("choice", choices=ORDERS),
    "limit": Parameter("int", low=1, high=25),
    "requester": Parameter(max_length=1024),
    "sandboxed": Parameter("flag"),
}
#: The parameters only a kernel search takes (the tool's arguments are query, limit,
#: sessionKey).
KERNEL_ONLY = ("agent", "sessionId", "role", "match", "order")


def search_request(values: Mapping[str, Any]) -> SearchRequest:
    """The kernel search the parameters ask for. Scope: `sessionKey` (repeatable) those
    keys; else `agent` that agent's namespace; else every session in the store.

    >>> search_request({"q": "cafe"}).session_keys
    ()
    >>> search_request({"q": "cafe", "agent": "work"}).session_keys is None
    True
    """
    keys = values.get("sessionKey")
    agent = values.get("agent")
    if agent is not None and not agent.strip():
        raise ParameterError("agent must name an agent (or be left out: every session)")
    if agent is not None and keys:
        for key in keys:
            owner = agent_id_of(key)
            if owner is not None and owner != agent:
                raise ParameterError(f"sessionKey {_shown(key)} belongs to agent "
                                     f"{owner!r}, not to agent {agent!r}")
    session_keys: tuple[str, ...] | None
    if keys:
        session_keys = tuple(keys)
    elif agent is not None:
        session_keys = None
    else:
        session_keys = ()
    return SearchRequest(query=values["q"], agent_id=agent, limit=values.get("limit"),
                         session_keys=session_keys, session_id=values.get("sessionId"),
                         role=values.get("role"), match=values.get("match", "exact"),
                         order=values.get("order", "relevance"))


def tool_call(values: Mapping[str, Any]) -> tuple[Requester, dict[str, Any]] | None:
    """The agent tool's requester and arguments when `requester` is given, else None.
    The kernel's own parameters are refused then (the tool takes none of them).

    >>> tool_call({"q": "cafe", "requester": "agent:main:main", "limit": 3})
    (Requester(session_key='agent:main:main', sandboxed=False, agent_id=None, grants=()), {'query': 'cafe', 'limit': 3})
    """
    requester = values.get("requester")
    if requester is None:
        if values.get("sandboxed"):
            raise ParameterError("sandboxed needs a requester (the tool's caller)")
        return None
    if not requester.strip():
        raise ParameterError("requester must be a session key (the tool's caller)")
    for name in KERNEL_ONLY:
        if name in values:
            raise ParameterError(f"{name} is not an argument of sessions_search (the tool "
                                 "takes q, limit and one sessionKey; leave requester out "
                                 "for a store search)")
    arguments: dict[str, Any] = {"query": values["q"]}
    if "limit" in values:
        arguments["limit"] = values["limit"]
    keys = values.get("sessionKey") or []
    if len(keys) > 1:
        raise ParameterError("sessions_search takes one sessionKey (got "
                             f"{len(keys)})")
    if keys:
        arguments["sessionKey"] = keys[0]
    return Requester(requester.strip(), bool(values.get("sandboxed", False))), arguments


#: The parameters of a history page (the Gateway's `chat.history`).
HISTORY_PARAMETERS: dict[str, Parameter] = {
    "sessionKey": Parameter(required=True, max_length=1024),
    "messageId": Parameter(max_length=1024),
    "sessionId": Parameter(max_length=1024),
    "limit": Parameter("int", low=1, high=1000),
    "offset": Parameter("int"),
    "cursor": Parameter(max_length=4096),
    "maxBytes": Parameter("int", low=1024),
    "includeTools": Parameter("flag"),
}


def history_request(values: Mapping[str, Any]) -> HistoryRequest:
    """The `chat.history` read the parameters ask for; the engine's `HistoryRequestError`
    (the product's wording) for a combination it refuses."""
    return HistoryRequest(values["sessionKey"], message_id=values.get("messageId"),
                          session_id=values.get("sessionId"), limit=values.get("limit"),
                          offset=values.get("offset"), cursor=values.get("cursor"),
                          max_bytes=values.get("maxBytes"))
