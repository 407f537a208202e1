"""Session scope (behaviour.md §5.3): which windows a request may see.

Owns: the key rule of `agentId` / `sessionKeys`, the `sessionId` filter, leaving out
archived windows (counted) and windows that need a rebuild. Must not touch: rows, the
index, ranking (a scope is a set of windows; the matching rows are found elsewhere).
The SQLite backend states the same rule in SQL (`scope_predicate`); the differential tests
compare the two.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from engine.model import DEFAULT_AGENT_ID, SearchRequest, SessionWindow


def key_in_scope(
    session_key: str, agent_id: str | None, session_keys: Collection[str] | None
) -> bool:
    """Whether a window's key is selected by a request's `agentId` / `sessionKeys`.

    `sessionKeys` omitted: the literal namespace `agent:<agentId>:` (underscores literal,
    like GLOB; `agentId` omitted means `main`) plus `global` and `unknown`; empty: every
    key; else exact membership.

    >>> [key_in_scope(k, "work_team", None) for k in ("agent:work_team:main",
    ...     "agent:workxteam:main", "global", "unknown", "agent:other:x")]
    [True, False, True, True, False]
    >>> key_in_scope("agent:other:x", None, ())
    True
    """
    if session_keys is None:
        if session_key in ("global", "unknown"):
            return True
        agent = DEFAULT_AGENT_ID if agent_id is None else agent_id
        return session_key.startswith(f"agent:{agent}:")
    if not session_keys:
        return True
    return session_key in session_keys


@dataclass(frozen=True, slots=True)
class Scope:
    """The windows a request selects and the archived windows it had to leave out."""

    session_keys: Mapping[str, str]  # session_id -> session_key, searchable windows only
    archived_excluded: int


def select_scope(
    windows: Iterable[SessionWindow],
    request: SearchRequest,
    needs_rebuild: Callable[[str], bool],
) -> Scope:
    """Apply §5.3 to every window: key scope, `sessionId`, archived, `needs_rebuild`.

    >>> windows = [SessionWindow("w1", "agent:main:a"), SessionWindow("w2", "global"),
    ...            SessionWindow("w3", "agent:main:b", archived=True),
    ...            SessionWindow("w4", "agent:other:c")]
    >>> scope = select_scope(windows, SearchRequest("q"), lambda session_id: False)
    >>> dict(scope.session_keys), scope.archived_excluded
    ({'w1': 'agent:main:a', 'w2': 'global'}, 1)
    >>> dict(select_scope(windows, SearchRequest("q"), "w1".__eq__).session_keys)
    {'w2': 'global'}
    """
    keys = request.session_keys
    selected_keys = frozenset(keys) if keys else keys
    selected: dict[str, str] = {}
    archived = 0
    for window in windows:
        if request.session_id is not None and window.session_id != request.session_id:
            continue
        if not key_in_scope(window.session_key, request.agent_id, selected_keys):
            continue
        if window.archived:
            archived += 1
            continue
        if needs_rebuild(window.session_id):
            continue
        selected[window.session_id] = window.session_key
    return Scope(selected, archived)
