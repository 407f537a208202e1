"""Session scope (behaviour.md §5.3): which windows a request may see.

Owns: the key rule of `agentId` / `sessionKeys`, the `sessionId` filter, leaving out
archived windows (counted) and windows that need a rebuild, and `ScopeCache`, which keeps
the scopes already selected while nothing they read has changed. Must not touch: rows, the
index, ranking (a scope is a set of windows; the matching rows are found elsewhere).
The SQLite backend states the same rule in SQL (`scope_predicate`); the differential tests
compare the two.

`select_scope` walks every window: the clear version, and the test oracle of the cache
(`tests/search/test_scope_cache.py` compares them after random write sequences). A
scope reads three things: the windows (their ids, keys and `archived` flags: the
transcript store's, which change only with its generation), the windows' index states
(`needs_rebuild`: these change without any row changing, so the index version does not
see them; their stamp, `IndexView.window_states_stamp`, does), and the request's
`agentId`, `sessionKeys` and `sessionId` (`scope_key`). `ScopeCache` keeps scopes under
the first two and looks them up by the third; a search then costs no pass over the
windows while the store and the states stay as they were, which saves much of the time
of a search that finds few or no hits.

A backend may hand its windows as `ScopedWindows`: then the cache selects from their
scope rows (`select_scope_rows`, the three fields alone, which a store can read without
building its windows) rather than from the windows, with no Python call a window (the
key rule decided for the distinct keys at once, the windows needing a rebuild one set
taken from the states once per stamp, `pending_windows`); `select_scope` over the
windows is the oracle of that too (`tests/search/test_scope_rows.py`,
`tests/search/test_scope_rows_columns.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping
from itertools import compress, repeat
from operator import attrgetter, itemgetter
from typing import Any

from engine.index.view import IndexView
from engine.light_values import FrozenValue
from engine.model import DEFAULT_AGENT_ID, SearchRequest, SessionWindow

#: The keys the namespace rule selects whatever the agent.
_RESERVED_KEYS = frozenset(("global", "unknown"))


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
        if session_key in _RESERVED_KEYS:
            return True
        agent = DEFAULT_AGENT_ID if agent_id is None else agent_id
        return session_key.startswith(f"agent:{agent}:")
    if not session_keys:
        return True
    return session_key in session_keys


def keys_in_scope(
    keys: Collection[str], agent_id: str | None, session_keys: Collection[str] | None
) -> Collection[str]:
    """The keys of `keys` that `key_in_scope` selects (its oracle), tested in C: the
    namespace by one `str.startswith` pass, `sessionKeys` by one intersection.

    >>> sorted(keys_in_scope({"agent:work_team:main", "agent:workxteam:main", "global",
    ...     "unknown", "agent:other:x"}, "work_team", None))
    ['agent:work_team:main', 'global', 'unknown']
    >>> sorted(keys_in_scope({"a", "b"}, None, ())), sorted(keys_in_scope({"a", "b"}, "x", ["b"]))
    (['a', 'b'], ['b'])
    """
    if session_keys is None:
        prefix = f"agent:{DEFAULT_AGENT_ID if agent_id is None else agent_id}:"
        listed = list(keys)
        found = set(compress(listed, map(str.startswith, listed, repeat(prefix))))
        return found.union(_RESERVED_KEYS.intersection(keys))
    if not session_keys:
        return keys
    return set(session_keys).intersection(keys)


class Scope(FrozenValue):
    """The windows a request selects and the archived windows it had to leave out.

    `derived` holds what the search stage computes from the scope alone and may reuse
    while the scope is kept (the fast path's masks); it never takes part in equality.

    A frozen value with `__slots__` (`engine.light_values.FrozenValue`) rather than a frozen
    dataclass (every search makes this class, and a dataclass's costs many times a plain
    class's to make); it reads, compares and prints as the dataclass did.

    >>> Scope({"w1": "global"}, 1) == Scope({"w1": "global"}, 1, {"mask": 1})
    True
    >>> Scope({}, 0)
    Scope(session_keys={}, archived_excluded=0)
    """

    __slots__ = ("archived_excluded", "derived", "session_keys")
    __match_args__ = ("session_keys", "archived_excluded", "derived")
    _compared = ("session_keys", "archived_excluded")

    session_keys: Mapping[str, str]  # session_id -> session_key, searchable windows only
    archived_excluded: int
    derived: dict[Hashable, Any]

    def __init__(self, session_keys: Mapping[str, str], archived_excluded: int,
                 derived: dict[Hashable, Any] | None = None) -> None:
        object.__setattr__(self, "session_keys", session_keys)
        object.__setattr__(self, "archived_excluded", archived_excluded)
        object.__setattr__(self, "derived", {} if derived is None else derived)


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


#: What a scope reads of a window: its session id, key and `archived` flag.
ScopeRow = tuple[str, str, bool]


def select_scope_rows(
    rows: Iterable[ScopeRow],
    request: SearchRequest,
    needs_rebuild: Callable[[str], bool],
) -> Scope:
    """`select_scope` over the windows' scope rows (session id, key, archived) instead of
    the windows (the same scope: `select_scope` is its oracle), with no Python call a
    window: the key rule is decided for the distinct keys at once (`keys_in_scope`;
    every key is in scope when `sessionKeys` is empty, the search of every session), and
    `needs_rebuild` is best a C-level callable (`pending_windows(view).__contains__`).

    >>> rows = [("w1", "agent:main:a", False), ("w2", "global", False),
    ...         ("w3", "agent:main:b", True), ("w4", "agent:other:c", False)]
    >>> scope = select_scope_rows(rows, SearchRequest("q"), lambda session_id: False)
    >>> dict(scope.session_keys), scope.archived_excluded
    ({'w1': 'agent:main:a', 'w2': 'global'}, 1)
    >>> scope = select_scope_rows(rows, SearchRequest("q", session_keys=()), {"w2"}.__contains__)
    >>> dict(scope.session_keys), scope.archived_excluded
    ({'w1': 'agent:main:a', 'w4': 'agent:other:c'}, 1)
    """
    chosen = rows if isinstance(rows, list) else list(rows)
    only = request.session_id
    if only is not None:
        chosen = [row for row in chosen if row[0] == only]
    keys = request.session_keys
    wanted = (keys_in_scope(set(map(_KEY, chosen)), request.agent_id, keys)
              if keys is None or keys else None)  # every key when `sessionKeys` is empty
    selected: dict[str, str] = {}
    archived_count = 0
    for session_id, session_key, archived in chosen:
        if wanted is not None and session_key not in wanted:
            continue
        if archived:
            archived_count += 1
        elif not needs_rebuild(session_id):
            selected[session_id] = session_key
    return Scope(selected, archived_count)


#: A scope row's key (`map` over the rows at C level).
_KEY = itemgetter(1)


class ScopedWindows:
    """A store's windows as a backend hands them to a search: iterating gives the
    windows themselves (`windows()`, read then), while `ScopeCache` selects from
    `rows()`, each window's scope row in the same order, which the store may read
    without building its windows.

    >>> windows = [SessionWindow("w1", "global")]
    >>> scoped = ScopedWindows(lambda: windows, lambda: [("w1", "global", False)])
    >>> list(scoped) == windows, scoped.rows()
    (True, [('w1', 'global', False)])
    """

    __slots__ = ("rows", "windows")

    def __init__(self, windows: Callable[[], Iterable[SessionWindow]],
                 rows: Callable[[], Iterable[ScopeRow]]) -> None:
        self.windows = windows
        self.rows = rows

    def __iter__(self) -> Iterator[SessionWindow]:
        return iter(self.windows())


def rebuild_pending(view: IndexView) -> Callable[[str], bool]:
    """`needs_rebuild` for `select_scope`: whether the view's state of a window is dirty.

    >>> from engine.index.inverted_index import InvertedIndex
    >>> from engine.index.lifecycle import WindowIndexState
    >>> index = InvertedIndex(window_states={"w1": WindowIndexState(needs_rebuild=True)})
    >>> pending = rebuild_pending(index.view())
    >>> pending("w1"), pending("w2")
    (True, False)
    """
    states = view.window_states
    return lambda session_id: (state := states.get(session_id)) is not None and state.needs_rebuild


def pending_windows(view: IndexView) -> frozenset[str]:
    """The session ids whose state in the view needs a rebuild, taken now: its
    `__contains__` is `rebuild_pending(view)` (the clear version, and the oracle) as a
    C-level callable, for as long as the states stay the same.

    >>> from engine.index.inverted_index import InvertedIndex
    >>> from engine.index.lifecycle import WindowIndexState
    >>> index = InvertedIndex(window_states={"w1": WindowIndexState(needs_rebuild=True),
    ...                                      "w2": WindowIndexState()})
    >>> pending_windows(index.view())
    frozenset({'w1'})
    """
    states = view.window_states
    return frozenset(compress(states.keys(), map(_NEEDS_REBUILD, states.values())))


#: A window state's `needs_rebuild` (`WindowIndexState` is a `NamedTuple`).
_NEEDS_REBUILD = attrgetter("needs_rebuild")


def scope_key(request: SearchRequest) -> Hashable:
    """What of a request decides its scope, given the windows: equal keys, equal scopes.

    >>> scope_key(SearchRequest("q")) == scope_key(SearchRequest("other", agent_id="main"))
    True
    >>> scope_key(SearchRequest("q", session_keys=("a", "b"), agent_id="x")) == scope_key(
    ...     SearchRequest("q", session_keys=("b", "a", "a")))
    True
    >>> scope_key(SearchRequest("q", session_keys=())) == scope_key(SearchRequest("q"))
    False
    """
    keys = request.session_keys
    if keys is None:
        selection: Hashable = ("agent", DEFAULT_AGENT_ID if request.agent_id is None
                               else request.agent_id)
    elif not keys:  # every session: the search of every partition of an all-agents search
        selection = _EVERY_SESSION
    else:
        selection = ("keys", frozenset(keys))
    return selection, request.session_id


_EVERY_SESSION = ("keys", frozenset())


#: The cache is emptied when it holds this many scopes (many `sessionId` filters).
CACHED_SCOPES = 256


class ScopeCache:
    """`select_scope`'s answers, kept while the windows and their states stay the same.

    `windows_version()` must change whenever the windows a search is handed change (the
    reference backend gives its store's generation); the states are watched through the
    view's stamp. A cached `Scope` is shared by every search that finds it: it is never
    modified.

    >>> from engine.index.inverted_index import InvertedIndex
    >>> from engine.index.lifecycle import WindowIndexState
    >>> index, windows = InvertedIndex(), [SessionWindow("w1", "agent:main:a")]
    >>> cache = ScopeCache(lambda: len(windows))
    >>> first = cache.select(index.view(), windows, SearchRequest("q"))
    >>> first is cache.select(index.view(), iter(()), SearchRequest("other"))
    True
    >>> index.window_states["w1"] = WindowIndexState(needs_rebuild=True)
    >>> dict(cache.select(index.view(), windows, SearchRequest("q")).session_keys)
    {}
    """

    def __init__(self, windows_version: Callable[[], Hashable]) -> None:
        self._windows_version = windows_version
        self._stamp: Hashable = None
        self._scopes: dict[Hashable, Scope] = {}
        #: `pending_windows` of the states under `_stamp` (None: not taken yet).
        self._pending: frozenset[str] | None = None

    def select(
        self, view: IndexView, windows: Iterable[SessionWindow], request: SearchRequest
    ) -> Scope:
        """The scope of `request` (`select_scope` over `windows` and the view's states,
        unless it is kept; `windows` is iterated only then, so it may be lazy; when it
        is `ScopedWindows`, `select_scope_rows` over its `rows()` instead)."""
        stamp = (self._windows_version(), view.window_states_stamp)
        if stamp != self._stamp:
            self._scopes.clear()
            self._stamp = stamp
            self._pending = None
        key = scope_key(request)
        scope = self._scopes.get(key)
        if scope is None:
            if len(self._scopes) >= CACHED_SCOPES:
                self._scopes.clear()
            if isinstance(windows, ScopedWindows):
                if self._pending is None:
                    self._pending = pending_windows(view)
                scope = select_scope_rows(windows.rows(), request, self._pending.__contains__)
            else:
                scope = select_scope(windows, request, rebuild_pending(view))
            self._scopes[key] = scope
        return scope
