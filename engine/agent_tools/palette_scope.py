"""The command palette's scope: which sessions the Control UI search covers.

Owns: the palette's scope rules (behaviour.md §10.1's scope flags and the seed's "Control
UI search" section), why a session is left out (`exclusion_reason`), and the scope of
one store (`palette_scope`): the sessions to search, each with its window ids and age,
and how many archived transcripts the scope left out. Must not touch: matching titles
or transcripts (`engine.agent_tools`), or any backend's internals (the scope reads the typed
`TranscriptReader` through `engine.agent_tools.roster`).

The palette sends `{"includeGlobal": false, "includeUnknown": false,
"configuredAgentsOnly": true, "excludeSubagents": true, "excludeCron": true,
"excludeSystem": true, "excludeDock": true}`. Read as rules, checked in this order (the
first that applies is the reason a session is out):

1. `unscoped`: a key that names no agent (`global`, `unknown`, a bare alias) is out: no
   configured agent owns it.
2. `unconfigured agent`: when the configuration lists agents (`ToolConfig.agents`), a
   session of any other agent is out. A configuration that lists none configures no
   agent list to check against, so every agent's sessions are in (what OpenClaw does
   with an implicit single `main` agent, generalised to stores that hold several).
3. `subagent`, `cron`, `system`, `dock`: a session of that kind is out, by its metadata
   (`kind`) or by its key's shape (`session_keys.kind_by_shape`: `subagent:` and `acp:`
   children are subagent runs, `cron:` jobs, `system:`, `dock:`), either one sufficing,
   since imported sessions may lack the metadata.
4. `ungrouped spawned`: an agent-created conversation (its `spawnedBy` or
   `parentSessionKey` names another session) is out unless it is assigned to a custom
   sidebar group (a non-blank `group`). Assigned, it is searched like any chat.
5. `incognito`: out, always (key shape or flag); incognito sessions are never counted.
6. `archived`: a session whose every window is archived is out of active search; its
   windows are counted in `archived_transcripts`, as are the archived windows of the
   sessions searched (retained windows that went cold), so the palette can say how
   many transcripts it could not search.

A group only lifts rule 4: it never brings back a session rules 1-3, 5 or 6 leave out
(a grouped subagent run, incognito chat or cron job stays out). The palette's operator
is the Control UI's user, authorized for every session of the configured agents; there
is no requester session and so no agent-tool visibility here. The scope holds every
session of the store that passes: no roster page bounds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.agent_tools.roster import RosterEntry, entry_of, windows_by_key
from engine.agent_tools.session_keys import is_agent_scoped, key_agent, kind_by_shape
from engine.agent_tools.tool_config import ToolConfig
from engine.backends.protocol import TranscriptReader

#: Session kinds the palette leaves out (rule 3), in the order their reasons are given.
EXCLUDED_KINDS = ("subagent", "cron", "system", "dock")


@dataclass(frozen=True, slots=True)
class PaletteSession:
    """A session the palette searches: its roster entry, the ids of its windows (the
    current one first) and when its current window was created (epoch ms, or None)."""

    entry: RosterEntry
    session_ids: tuple[str, ...]
    created_at: float | None = None


@dataclass(frozen=True, slots=True)
class PaletteScope:
    """The sessions to search, in the store's key order, and the archived transcripts
    (windows) of the scope that search cannot read."""

    sessions: tuple[PaletteSession, ...]
    archived_transcripts: int = 0


def agent_created(entry: RosterEntry) -> bool:
    """Whether an agent created the session (another session spawned or parents it).

    >>> agent_created(RosterEntry("agent:main:x", "main", "s", spawned_by="agent:main:main"))
    True
    """
    return bool(entry.spawned_by or entry.parent_session_key)


def in_custom_group(entry: RosterEntry) -> bool:
    """Whether the session is assigned to a custom sidebar group.

    >>> in_custom_group(RosterEntry("agent:main:x", "main", "s", group=" "))
    False
    """
    return bool(entry.group and entry.group.strip())


def exclusion_reason(entry: RosterEntry, config: ToolConfig) -> str | None:
    """Why the palette leaves `entry` out (the module docstring's rules), or None.

    >>> config = ToolConfig(agents=("main",))
    >>> spawned = RosterEntry("agent:main:x", "main", "s", spawned_by="agent:main:main")
    >>> exclusion_reason(spawned, config), exclusion_reason(
    ...     RosterEntry("agent:main:x", "main", "s", spawned_by="agent:main:main",
    ...                 group="Research"), config)
    ('ungrouped spawned', None)
    >>> exclusion_reason(RosterEntry("agent:work:y", "work", "s"), config)
    'unconfigured agent'
    >>> exclusion_reason(RosterEntry("agent:main:cron:daily", "main", "s", group="Jobs"), config)
    'cron'
    """
    if not is_agent_scoped(entry.key):
        return "unscoped"
    if config.agents and key_agent(entry.key) not in config.agents:
        return "unconfigured agent"
    shaped = kind_by_shape(entry.key)
    for kind in EXCLUDED_KINDS:
        if entry.kind == kind or shaped == kind:
            return kind
    if agent_created(entry) and not in_custom_group(entry):
        return "ungrouped spawned"
    if entry.incognito:
        return "incognito"
    if entry.archived:
        return "archived"
    return None


def palette_scope(reader: TranscriptReader, config: ToolConfig) -> PaletteScope:
    """The palette's scope over every session of `reader` (module docstring)."""
    sessions: list[PaletteSession] = []
    archived = 0
    for key, windows in windows_by_key(reader).items():
        entry = entry_of(key, windows)
        reason = exclusion_reason(entry, config)
        if reason is None or reason == "archived":
            archived += sum(1 for window in windows if window.archived)
        if reason is not None:
            continue
        current = next(window for window in windows if window.session_id == entry.session_id)
        others = tuple(window.session_id for window in windows if window is not current)
        sessions.append(PaletteSession(entry, (current.session_id, *others),
                                       current.created_at))
    return PaletteScope(tuple(sessions), archived)
