"""Session keys and session windows: validation, and the chain of windows under a key.

Owns: what a valid session key is, what a valid `SessionWindow` is (reason, kind, links),
and how the windows of one key chain through `previous_session_id` (behaviour.md §2.1).
Must not touch: storage, events, or file formats (`engine.ingest` maps JSON records to
`SessionWindow` values and calls the checks here).

Vocabulary:

* a **session key** is `agent:<agentId>:<rest>` (agent id and rest non-empty) or one of
  the reserved keys `global` and `unknown`;
* a key owns a **chain** of windows: each window may name the window it follows
  (`previous_session_id`, with a `reason` such as `reset` or `rollover`); the first has
  reason `initial` as a rule, and exactly one window of a key is normally `current`;
  the others are *retained* and stay searchable;
* a link to a window of another key (a `fork` from another conversation) is allowed: it
  is kept, but the chain of a key only follows links inside the key.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.model import (
    RESERVED_SESSION_KEYS,
    SESSION_KINDS,
    WINDOW_REASONS,
    SessionWindow,
    agent_id_of,
    agent_id_problem,
)

#: The longest session key a store accepts (OpenClaw's keys are a few dozen characters; a
#: key is part of every hit, so a megabyte key would be nonsense in every answer).
MAX_SESSION_KEY_LENGTH = 4096


def session_key_problem(session_key: object) -> str | None:
    """Why `session_key` is not a valid session key, or None.

    >>> session_key_problem("agent:work_team:main") is None, session_key_problem("global")
    (True, None)
    >>> session_key_problem("agent:main")
    'session key "agent:main" must be "agent:<agentId>:<rest>", "global" or "unknown"'
    >>> session_key_problem("agent: :x")
    "agent id ' ' is blank"
    >>> session_key_problem("agent:main:" + "k" * 5000)[:55]
    'session key of 5011 characters is longer than 4096 (it '
    """
    if not isinstance(session_key, str) or not session_key:
        return "a session key must be a non-empty string"
    if len(session_key) > MAX_SESSION_KEY_LENGTH:
        return (f"session key of {len(session_key)} characters is longer than "
                f'{MAX_SESSION_KEY_LENGTH} (it starts "{session_key[:40]}")')
    if session_key in RESERVED_SESSION_KEYS:
        return None
    agent_id = agent_id_of(session_key)
    if agent_id is not None:
        return agent_id_problem(agent_id)
    return (f'session key "{session_key}" must be "agent:<agentId>:<rest>", '
            '"global" or "unknown"')


def window_problem(window: SessionWindow) -> str | None:
    """Why one window's own fields are invalid, or None (links are checked by the chain).

    >>> window_problem(SessionWindow("s1", "global", reason="reboot"))
    'unknown window reason "reboot" (expected one of: initial, reset, rollover, fork, rewind, switch, recovery, compaction)'
    >>> window_problem(SessionWindow("s1", "s1")) is not None
    True
    """
    if not window.session_id or not window.session_id.strip():
        return "a session id must be a non-blank string"
    if "/" in window.session_id or "\\" in window.session_id or "\x00" in window.session_id:
        return f'session id "{window.session_id}" must not contain "/", "\\\\" or NUL'
    problem = session_key_problem(window.session_key)
    if problem is not None:
        return problem
    if window.reason not in WINDOW_REASONS:
        return (f'unknown window reason "{window.reason}" (expected one of: '
                f'{", ".join(WINDOW_REASONS)})')
    if window.kind not in SESSION_KINDS:
        return (f'unknown session kind "{window.kind}" (expected one of: '
                f'{", ".join(SESSION_KINDS)})')
    if window.previous_session_id == window.session_id:
        return f'window "{window.session_id}" cannot follow itself'
    for name in ("spawned_by", "owner_session_key", "parent_session_key"):
        value = getattr(window, name)
        if value is not None:
            problem = session_key_problem(value)
            if problem is not None:
                return f"{name}: {problem}"
    return None


def chain_problems(windows: Iterable[SessionWindow]) -> list[str]:
    """Problems of a set of windows taken together (all keys), sorted; empty when valid.

    Checks: session ids are unique; a key has at most one current window; the links
    inside a key form no cycle.

    >>> a = SessionWindow("a", "global", current=False)
    >>> b = SessionWindow("b", "global", previous_session_id="a", reason="reset")
    >>> chain_problems([a, b])
    []
    >>> chain_problems([a, SessionWindow("c", "global"), b])
    ['key "global" has 2 current windows: b, c']
    """
    problems: list[str] = []
    by_key: dict[str, list[SessionWindow]] = {}
    seen_ids: set[str] = set()
    for window in windows:
        if window.session_id in seen_ids:
            problems.append(f'session id "{window.session_id}" appears twice')
        seen_ids.add(window.session_id)
        by_key.setdefault(window.session_key, []).append(window)
    for key, key_windows in sorted(by_key.items()):
        current = sorted(w.session_id for w in key_windows if w.current)
        if len(current) > 1:
            problems.append(f'key "{key}" has {len(current)} current windows: '
                            + ", ".join(current))
        cycle = _cycle_in(key_windows)
        if cycle:
            problems.append(f'key "{key}" has a cycle of previous windows: '
                            + " -> ".join(cycle))
    return sorted(problems)


def window_chain(windows: Sequence[SessionWindow]) -> list[SessionWindow]:
    """Order the windows of ONE key from the oldest to the newest along their links.

    A window comes after the window it follows. Windows that start a chain (no
    predecessor inside the key) and siblings (two windows following the same one) are
    taken by `(created_at, session_id)`. Windows caught in a cycle come last.

    >>> a = SessionWindow("a", "global", current=False)
    >>> c = SessionWindow("c", "global", previous_session_id="b", reason="rollover")
    >>> b = SessionWindow("b", "global", previous_session_id="a", reason="reset",
    ...                   current=False)
    >>> [w.session_id for w in window_chain([c, a, b])]
    ['a', 'b', 'c']
    """
    by_id = {window.session_id: window for window in windows}
    followers: dict[str | None, list[SessionWindow]] = {}
    for window in windows:
        previous = window.previous_session_id if window.previous_session_id in by_id else None
        followers.setdefault(previous, []).append(window)
    ordered: list[SessionWindow] = []
    placed: set[str] = set()
    pending = sorted(followers.get(None, []), key=_chain_order, reverse=True)
    while pending:
        window = pending.pop()
        if window.session_id in placed:
            continue
        placed.add(window.session_id)
        ordered.append(window)
        pending.extend(sorted(followers.get(window.session_id, []), key=_chain_order,
                              reverse=True))
    ordered.extend(sorted((w for w in windows if w.session_id not in placed), key=_chain_order))
    return ordered


def current_window(windows: Sequence[SessionWindow]) -> SessionWindow | None:
    """The current window among the windows of one key, else the newest in the chain.

    >>> a = SessionWindow("a", "global", current=False)
    >>> current_window([a]).session_id
    'a'
    >>> current_window([]) is None
    True
    """
    for window in windows:
        if window.current:
            return window
    chain = window_chain(windows)
    return chain[-1] if chain else None


def _chain_order(window: SessionWindow) -> tuple[float, str]:
    """Sort key among windows that have no order from links: creation time, then id."""
    return (window.created_at if window.created_at is not None else 0.0, window.session_id)


def _cycle_in(windows: Sequence[SessionWindow]) -> list[str]:
    """A cycle of `previous_session_id` links among the windows of one key, else []."""
    previous = {w.session_id: w.previous_session_id for w in windows}
    for start in sorted(previous):
        walk: list[str] = []
        current: str | None = start
        while current is not None and current in previous and current not in walk:
            walk.append(current)
            current = previous[current]
        if current is not None and current in walk:
            loop = walk[walk.index(current):]
            return loop + [current]
    return []
