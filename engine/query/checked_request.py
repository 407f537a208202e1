"""A search request the query policy accepted, checked once, where it enters the engine.

Owns: `CheckedRequest` (a `SearchRequest` that carries what the check gave: the trimmed
query and the clamped limit) and `check_request`, the one place a request is checked
(`engine.query.user_query.validate_request`: query, match, order, role, in that order)
and its limit clamped (`clamp_limit`). Must not touch: the rules themselves
(`engine.query.user_query`), or what a search does with the request.

Why. A request enters the engine at a door: the store every command opens
(`engine.store`), or a backend used on its own. The door checks it once; every layer
below takes the `CheckedRequest` and reads `trimmed_query` and `page_limit` instead of
checking and clamping again, so a request with several problems is refused with the same
message everywhere, by one call. Checking a request that is already checked returns it
as it is. A part of a checked request (one partition's share of a merged search) is made
with `narrowed`, which changes only the keys and the limit (and clamps the new limit), so
the query is not checked twice. Nothing else makes one: code that changes a request
makes a plain `SearchRequest` and checks it.

`CheckedRequest` is written out (a subclass with `__slots__`, its own `__init__`, and the
frozen fields, equality, hash, repr, copy and pickle of `engine.light_values.FrozenValue`)
rather than made a dataclass: every search makes this class, and a frozen dataclass's
costs many times a plain class's to make. It reads, compares and prints as the dataclass
did. `dataclasses.fields` of it names only the fields of a `SearchRequest`, so its
constructor takes every field with no default: a `dataclasses.replace` of one raises
`TypeError` rather than make a request whose checked fields are blank.
"""

from __future__ import annotations

from dataclasses import fields
from operator import attrgetter

from engine.light_values import FrozenValue
from engine.model import SearchRequest
from engine.query.user_query import clamp_limit, validate_request

#: The fields of a plain request, which a checked one copies, in their order.
_REQUEST_FIELDS = tuple(field.name for field in fields(SearchRequest))
_request_values = attrgetter(*_REQUEST_FIELDS)


class CheckedRequest(FrozenValue, SearchRequest):
    """A `SearchRequest` that `check_request` accepted: `trimmed_query` is its query
    trimmed as JavaScript trims, `page_limit` its limit clamped to 1..25. Made only by
    `check_request` and `narrowed`.

    >>> checked = check_request(SearchRequest("  Café  ", limit=40))
    >>> checked.trimmed_query, checked.page_limit, checked.limit
    ('Café', 25, 40)
    >>> check_request(checked) is checked
    True
    >>> checked.narrowed(("agent:ops:x",), 25).session_keys
    ('agent:ops:x',)
    >>> checked.narrowed(None, 40) == checked, checked == SearchRequest("  Café  ", limit=40)
    (True, False)
    >>> check_request(SearchRequest("a"))
    CheckedRequest(query='a', agent_id=None, limit=None, session_keys=None, session_id=None, role=None, match='exact', order='relevance', trimmed_query='a', page_limit=10)
    """

    __slots__ = ("page_limit", "trimmed_query")
    __match_args__ = _compared = (*_REQUEST_FIELDS, "trimmed_query", "page_limit")

    trimmed_query: str
    page_limit: int

    def __init__(self, query: str, agent_id: str | None, limit: int | None,
                 session_keys: tuple[str, ...] | None, session_id: str | None,
                 role: str | None, match: str, order: str, trimmed_query: str,
                 page_limit: int) -> None:
        SearchRequest.__init__(self, query, agent_id, limit, session_keys, session_id, role,
                               match, order)
        object.__setattr__(self, "trimmed_query", trimmed_query)
        object.__setattr__(self, "page_limit", page_limit)

    def narrowed(self, session_keys: tuple[str, ...] | None, limit: int) -> CheckedRequest:
        """The same checked request for other keys and another limit (a partition's share
        of a merged search); the query is not checked again."""
        return CheckedRequest(self.query, self.agent_id, limit, session_keys, self.session_id,
                              self.role, self.match, self.order, self.trimmed_query,
                              clamp_limit(limit))


def check_request(request: SearchRequest) -> CheckedRequest:
    """`request` checked (raises `QueryError` as `validate_request` does), or `request`
    itself when it is checked already.

    >>> check_request(SearchRequest("   "))
    Traceback (most recent call last):
    ...
    engine.errors.QueryError: query must not be empty
    """
    if isinstance(request, CheckedRequest):
        return request
    trimmed = validate_request(request)
    return CheckedRequest(*_request_values(request), trimmed, clamp_limit(request.limit))
