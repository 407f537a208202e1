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
with `narrowed`, which changes only the keys and the limit, so the query is not checked
twice; a `dataclasses.replace` that changes the limit without `page_limit` is refused,
since the two would disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from engine.model import SearchRequest
from engine.query.user_query import clamp_limit, js_trim, validate_request

#: The fields of a plain request, which a checked one copies.
_REQUEST_FIELDS = tuple(field.name for field in fields(SearchRequest))


@dataclass(frozen=True, slots=True)
class CheckedRequest(SearchRequest):
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
    """

    trimmed_query: str = ""
    page_limit: int = 0

    def __post_init__(self) -> None:
        if self.page_limit != clamp_limit(self.limit) or self.trimmed_query != js_trim(
                self.query):
            raise ValueError("a CheckedRequest is made by check_request (its query and "
                             "limit must agree with what the check gave)")

    def narrowed(self, session_keys: tuple[str, ...] | None, limit: int) -> CheckedRequest:
        """The same checked request for other keys and another limit (a partition's share
        of a merged search); the query is not checked again."""
        return replace(self, session_keys=session_keys, limit=limit,
                       page_limit=clamp_limit(limit))

    def plain(self) -> SearchRequest:
        """The request as it was given (a plain `SearchRequest`, equal to the original)."""
        return SearchRequest(**{name: getattr(self, name) for name in _REQUEST_FIELDS})


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
    return CheckedRequest(**{name: getattr(request, name) for name in _REQUEST_FIELDS},
                          trimmed_query=trimmed, page_limit=clamp_limit(request.limit))
