"""A seeded multi-agent corpus of session trees, written for both OpenClaw and this engine.

Owns: `TreeSession` and `TreeCorpus` (which sessions exist, who spawned or parents them,
their windows and messages), the generator, and the three forms each side reads: the flat
messages file plus the session entries OpenClaw's `sessions.upsert` writes (adapter side),
and a corpus directory (`sessions.jsonl` window records with `spawnedBy` and
`parentSessionKey`, `transcripts/<sessionId>.jsonl`) that `session-search import` reads.
Must not touch: any backend, the adapter, the comparison (the test module).

The sessions, per agent `a` of `AGENTS`:
* `agent:a:main` (two windows: a reset keeps the first one retained), a group chat
  `agent:a:telegram:group:42` and a direct chat `agent:a:discord:dm:ana`;
* children of the main session: `agent:a:subagent:worker` (spawned by it), its child
  `agent:a:subagent:worker:subagent:probe` (spawned by the worker), an ACP child
  `agent:a:acp:codex` (spawned by it) and `agent:a:cron:nightly`, whose only link is
  `parentSessionKey`;
and, once: children across agents (`agent:ops:subagent:helper` and the ACP child
`agent:research:acp:review` spawned by `agent:main:main`, `agent:research:cron:digest`
parented by it), two incognito sessions (`agent:main:dashboard:incognito-private`, and
`agent:ops:subagent:incognito-scratch` spawned by `agent:ops:main`), a session archived in
the session list (`agent:main:webchat:archived`: OpenClaw's `archivedAt`, which its
tool still searches; this engine's `archived` flag means a cold transcript, so the corpus
directory leaves it unset), `global` (in agent main's partition, as in OpenClaw's
store), `agent:main:slack:budget`, whose messages are dense with characters that JSON
escapes as six bytes, so a search of `budget` overflows the 32 KiB results budget, and
`agent:stray:main`, of an agent the configuration does not list (both sides search it).

Texts come from `chat_corpus.TextDrawer` (diacritics, Greek, CJK runs and words, glued
words, long messages, blank ones), and each window's first message ends with
`MARKER_WORD`, so a query for it has hits in every session. They hold no
credential-looking text: redaction is the one divergence the tool adds, shown by its own
reproducer, and a credential anywhere in an agent would make every search of it differ.

Incognito sessions: OpenClaw keeps their transcripts out of the agent databases (a
process-only store), so they never count in its bm25 statistics. `write_corpus_directory`
writes them with or without their messages: without is what OpenClaw's databases hold
(the comparison's stores), with is the corpus as written (the test of issue 12's finding
that our statistics count them).

Every child entry gets a `startedAt`: OpenClaw lists a sandboxed requester's children
(`sessions.list {spawnedBy}`) only while the link is live (`startedAt` set, running, or
updated within the last hour), which would otherwise make the answers depend on the clock.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.ingest.flat import message_event
from tests.oracles.chat_corpus import BASE_TIME, FlatMessage, TextDrawer

AGENTS = ("main", "ops", "research")
#: The agent whose partition holds `global` (OpenClaw's default agent, this engine's
#: `DEFAULT_AGENT_ID`).
UNSCOPED_AGENT = "main"
#: What fills the budget session: a control character JSON writes as `\u0001`.
ESCAPED_FILLER = "\u0001"
#: An agent with sessions but not in the configured roster (both sides still list it).
UNCONFIGURED_AGENT = "stray"
#: The word every window's first message ends with.
MARKER_WORD = "saffron"


@dataclass(frozen=True, slots=True)
class TreeSession:
    """One session key: its windows (the last is current) and its links.

    `list_archived` is OpenClaw's `archivedAt`: the session is listed among the archived
    ones, and still searched. `incognito` says the key has OpenClaw's incognito shape."""

    key: str
    window_ids: tuple[str, ...]
    spawned_by: str | None = None
    parent_session_key: str | None = None
    list_archived: bool = False
    incognito: bool = False

    @property
    def is_child(self) -> bool:
        return self.spawned_by is not None or self.parent_session_key is not None


@dataclass(frozen=True, slots=True)
class TreeCorpus:
    """The sessions and their messages, messages in file order (each window's together)."""

    sessions: tuple[TreeSession, ...]
    messages: tuple[FlatMessage, ...]

    def session(self, key: str) -> TreeSession:
        return next(session for session in self.sessions if session.key == key)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(session.key for session in self.sessions)


def session_plan() -> list[TreeSession]:
    """Every session of the module docstring, windows named `<key slug>-w<n>`."""
    plan: list[tuple[str, int, dict[str, Any]]] = []
    for agent in AGENTS:
        main = f"agent:{agent}:main"
        worker = f"agent:{agent}:subagent:worker"
        plan += [
            (main, 2, {}),
            (f"agent:{agent}:telegram:group:42", 1, {}),
            (f"agent:{agent}:discord:dm:ana", 1, {}),
            (worker, 1, {"spawned_by": main}),
            (f"{worker}:subagent:probe", 1, {"spawned_by": worker}),
            (f"agent:{agent}:acp:codex", 1, {"spawned_by": main}),
            (f"agent:{agent}:cron:nightly", 1, {"parent_session_key": main}),
        ]
    plan += [
        ("agent:ops:subagent:helper", 1, {"spawned_by": "agent:main:main"}),
        ("agent:research:acp:review", 1, {"spawned_by": "agent:main:main"}),
        ("agent:research:cron:digest", 1, {"parent_session_key": "agent:main:main"}),
        ("agent:main:dashboard:incognito-private", 1, {"incognito": True}),
        ("agent:ops:subagent:incognito-scratch", 1, {"spawned_by": "agent:ops:main", "incognito": True}),
        ("agent:main:webchat:archived", 1, {"list_archived": True}),
        ("global", 2, {}),
        ("agent:main:slack:budget", 1, {}),
        (f"agent:{UNCONFIGURED_AGENT}:main", 1, {}),
    ]
    return [TreeSession(key, tuple(f"{slug(key)}-w{number}" for number in range(windows)), **links)
            for key, windows, links in plan]


def slug(key: str) -> str:
    """A session id prefix from a key.

    >>> slug("agent:main:subagent:worker")
    'main-subagent-worker'
    """
    return key.removeprefix("agent:").replace(":", "-")


def generate_tree_corpus(seed: int) -> TreeCorpus:
    """The corpus: each window 6 to 12 alternating user and assistant messages drawn by
    `TextDrawer`, the budget session 30 filler messages; the clock moves by 0 to 60 s
    between messages (ties included) and an hour between windows."""
    generator = random.Random(seed)
    drawer = TextDrawer(generator)
    clock = BASE_TIME
    sessions = session_plan()
    messages: list[FlatMessage] = []
    for session in sessions:
        for window_id in session.window_ids:
            budget = session.key.endswith(":budget")
            for position in range(30 if budget else generator.randint(6, 12)):
                clock += generator.choice((0, 0, 1000, 7000, 60_000))
                text = budget_text(generator) if budget else drawer.message()
                if position == 0:
                    text = f"{text} {MARKER_WORD}"
                messages.append(FlatMessage(session.key, window_id, f"m{position:03d}",
                                            ("user", "assistant")[position % 2], clock, text))
            clock += 3_600_000
    return TreeCorpus(tuple(sessions), tuple(messages))


def budget_text(generator: random.Random) -> str:
    """`budget` among short words, each followed by a run of `ESCAPED_FILLER` (six JSON
    bytes each): an excerpt of 300 units is about 1,500 bytes of JSON, so 25 hits overflow
    32 KiB."""
    words = ["budget"] + [generator.choice(("ledger", "quota", "tally")) for _ in range(30)]
    return " ".join(word + ESCAPED_FILLER * 20 for word in words)


# ---- the adapter side -----------------------------------------------------------------------


def openclaw_entries(corpus: TreeCorpus) -> list[dict[str, Any]]:
    """The `sessions.upsert` entries: each key's current window and newest timestamp (what
    `corpus.load` wrote), its links, `startedAt` for a child, `archivedAt` when listed as
    archived."""
    entries = []
    for session in corpus.sessions:
        current = session.window_ids[-1]
        stamps = [message.timestamp for message in corpus.messages if message.session_id == current]
        entry: dict[str, Any] = {"sessionKey": session.key, "sessionId": current,
                                 "updatedAt": max(stamps)}
        if not session.key.startswith("agent:"):
            entry["agentId"] = UNSCOPED_AGENT
        if session.spawned_by is not None:
            entry["spawnedBy"] = session.spawned_by
        if session.parent_session_key is not None:
            entry["parentSessionKey"] = session.parent_session_key
        if session.is_child:
            entry["startedAt"] = min(stamps)
        if session.list_archived:
            entry["archivedAt"] = max(stamps)
        entries.append(entry)
    return entries


# ---- this engine's side ---------------------------------------------------------------------


def write_corpus_directory(corpus: TreeCorpus, folder: Path, *, incognito_transcripts: bool) -> Path:
    """`folder/sessions.jsonl` and `folder/transcripts/*.jsonl` (the corpus-directory form):
    a key's windows chained by `previousSessionId` (reason `reset`), the last current; an
    incognito session's transcript empty unless `incognito_transcripts`."""
    transcripts = folder / "transcripts"
    transcripts.mkdir(parents=True)
    records = []
    for session in corpus.sessions:
        for number, window_id in enumerate(session.window_ids):
            window_messages = [message for message in corpus.messages if message.session_id == window_id]
            record: dict[str, Any] = {
                "sessionId": window_id, "sessionKey": session.key,
                "previousSessionId": session.window_ids[number - 1] if number else None,
                "reason": "reset" if number else "initial",
                "current": number == len(session.window_ids) - 1,
                "spawnedBy": session.spawned_by,
                "parentSessionKey": session.parent_session_key,
                "createdAt": window_messages[0].timestamp,
            }
            records.append(json.dumps(record, ensure_ascii=False))
            if session.incognito and not incognito_transcripts:
                window_messages = []
            events, parent = [], None
            for message in window_messages:
                events.append(json.dumps(message_event(
                    {"messageId": message.message_id, "role": message.role, "text": message.text,
                     "timestamp": message.timestamp}, parent), ensure_ascii=False))
                parent = message.message_id
            (transcripts / f"{window_id}.jsonl").write_text(
                "".join(line + "\n" for line in events), encoding="utf-8")
    (folder / "sessions.jsonl").write_text("".join(line + "\n" for line in records), encoding="utf-8")
    return folder
