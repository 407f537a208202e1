"""The roster: the sessions a store holds, as the Gateway lists them, and the visible ones.

Owns: `RosterEntry` (one logical session: its key, the agent whose partition holds it, and
the metadata of its current window) and `visible_candidates`, the sessions a requester's
search may cover (behaviour.md §3.4 step 3). Must not touch: searching, or any backend's
internals: the roster reads the typed `TranscriptReader` capability only, so it is the
same for every backend.

A session's metadata is its current window's (the window marked current, else the last
one listed): OpenClaw keeps ownership (`spawnedBy`, `ownerSessionKey`,
`parentSessionKey`) on the session entry, which names the current window. A session is
archived when every window of it is (a cold session); incognito when its key has the
incognito shape or its current window carries the incognito flag.

The candidates, in OpenClaw 2026.9.6's order (`listVisibleSearchSessions`):
1. the requester's own session, when the row checker allows it, checked as the
   requester's agent's session (not with the roster's metadata: an unscoped own key such
   as `global` is the requester's, although the store keeps every `global` window in
   main's partition);
2. every agent-scoped session of every agent (archived ones too: the Gateway lists both),
   or, for a requester restricted to what it spawned, only the sessions whose
   `spawned_by` or `parent_session_key` is the requester;
3. unless so restricted, the sessions of the requester's own agent whose key names no
   agent (`global`; `unknown` is never listed): unscoped keys come only from the
   requester's own agent, because another agent's `global` cannot be reopened by key;
each passing the row checker, and none incognito; sorted by ICU collation of the key
(JavaScript's `localeCompare`).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.agent_tools.session_keys import is_agent_scoped, is_incognito
from engine.agent_tools.visibility import RequesterContext, SessionRow, check_row
from engine.analysis.collation import locale_compare_key
from engine.backends.protocol import TranscriptReader
from engine.model import SessionWindow, owner_agent_id


@dataclass(frozen=True, slots=True)
class RosterEntry:
    """One logical session of a store and the metadata the access rules read."""

    key: str
    agent_id: str | None
    session_id: str
    owner_session_key: str | None = None
    parent_session_key: str | None = None
    spawned_by: str | None = None
    archived: bool = False
    incognito: bool = False
    kind: str = "chat"
    group: str | None = None
    title: str | None = None

    def child_of(self, requester_key: str) -> bool:
        """Whether `requester_key` spawned this session or is its parent (the Gateway's
        `spawnedBy` filter matches either: `resolveSessionChildOwners`)."""
        return requester_key in (self.spawned_by, self.parent_session_key)

    def row(self) -> SessionRow:
        """The row the visibility checker reads."""
        return SessionRow(self.key, self.agent_id, self.owner_session_key,
                          self.parent_session_key, self.spawned_by)


def entry_of(session_key: str, windows: list[SessionWindow]) -> RosterEntry:
    """The roster entry of a key from its windows (the module docstring's rules)."""
    current = next((window for window in windows if window.current), windows[-1])
    return RosterEntry(
        key=session_key, agent_id=owner_agent_id(session_key), session_id=current.session_id,
        owner_session_key=current.owner_session_key,
        parent_session_key=current.parent_session_key, spawned_by=current.spawned_by,
        archived=all(window.archived for window in windows),
        incognito=is_incognito(session_key) or current.incognito,
        kind=current.kind, group=current.group, title=current.title,
    )


def windows_by_key(reader: TranscriptReader) -> dict[str, list[SessionWindow]]:
    """Every window of a store, grouped by key, keys and windows in the store's order."""
    grouped: dict[str, list[SessionWindow]] = {}
    for window in reader.windows():
        grouped.setdefault(window.session_key, []).append(window)
    return grouped


def entry_in(reader: TranscriptReader, session_key: str) -> RosterEntry | None:
    """The roster entry of one key, read from its own windows only (None when the store
    holds none): what a check of one named session needs, without listing the store."""
    windows = reader.windows_of(session_key)
    return entry_of(session_key, windows) if windows else None


def incognito_session(session_key: str, entry: RosterEntry | None) -> bool:
    """Whether session tools must never read `session_key`: an incognito key shape, or
    the store's incognito flag on its current window (`entry`, when the store holds it).

    >>> incognito_session("agent:main:dashboard:incognito-x", None)
    True
    """
    return is_incognito(session_key) or (entry is not None and entry.incognito)


def roster(reader: TranscriptReader) -> dict[str, RosterEntry]:
    """Every session of a store by key, in the store's key order."""
    return {key: entry_of(key, windows) for key, windows in windows_by_key(reader).items()}


@dataclass(frozen=True, slots=True)
class Candidate:
    """A session a search may cover: its key, the agent to ask for it, and the row the
    checker allowed (which its hits are checked against again)."""

    key: str
    agent_id: str | None
    row: SessionRow


def visible_candidates(context: RequesterContext,
                       sessions: dict[str, RosterEntry]) -> list[Candidate]:
    """The sessions the requester may search, in key collation order (module docstring)."""
    chosen: dict[str, Candidate] = {}
    own_row = SessionRow(context.key, context.agent_id)
    if check_row(context, own_row).allowed:
        chosen[context.key] = Candidate(context.key, context.agent_id, own_row)
    for entry in sessions.values():
        row = entry.row()
        if context.restricted_to_spawned:
            if not entry.child_of(context.key) or not is_agent_scoped(entry.key):
                continue
        elif not is_agent_scoped(entry.key):
            if entry.key != "global" or entry.agent_id != context.agent_id:
                continue
        if check_row(context, row).allowed:
            chosen[entry.key] = Candidate(entry.key, entry.agent_id, row)
    visible = [candidate for key, candidate in chosen.items()
               if not incognito_session(key, sessions.get(key))]
    return sorted(visible, key=lambda candidate: locale_compare_key(candidate.key))
