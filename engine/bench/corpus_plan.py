"""The plan of a generated corpus: sizes, agents, session keys, windows, message budgets.

Owns: the named corpus sizes and everything decided before any text is written (which
session keys exist, of which kind and agent; how many windows each key has and why they
were opened; how many messages each window gets). Must not touch: text, events, files
(`window_events` writes a window's events; `corpus_generator` writes the files).

Planning holds O(session keys) data, never per-message data, so even the 1M-message
plan is small. Every choice comes from the `random.Random` it is handed.

What a plan holds (behaviour.md §2): agents `main`, `work_team`, `workxteam`, `research`
and `ops`, plus a `global` key; keys of several kinds (main, channel, direct, cron,
subagents spawned by the agent's main session, a few incognito); `agent:main:main` is one
long window (up to 100k messages) for the history workloads; other keys may own 2–3
windows (`reason` `reset` or `rollover`), the older ones retained and not current.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

#: 2026-01-05T00:00:00Z in epoch milliseconds; every timestamp counts from here.
BASE_EPOCH_MS = 1_767_571_200_000

AGENTS: tuple[tuple[str, float], ...] = (
    ("main", 0.45), ("work_team", 0.15), ("workxteam", 0.1), ("research", 0.18), ("ops", 0.12),
)


@dataclass(frozen=True, slots=True)
class CorpusSize:
    """A named corpus size: total messages, session keys, and the long window's length."""

    name: str
    messages: int
    session_keys: int
    long_session_messages: int


CORPUS_SIZES: dict[str, CorpusSize] = {
    "tiny": CorpusSize("tiny", 400, 14, 80),
    "10k": CorpusSize("10k", 10_000, 240, 2_500),
    "100k": CorpusSize("100k", 100_000, 1_200, 25_000),
    "1m": CorpusSize("1m", 1_000_000, 6_000, 100_000),
}

DEFAULT_SEED = 20260105


def corpus_size(name: str) -> CorpusSize:
    """Look up a size by name (`tiny`, `10k`, `100k`, `1m`); ValueError otherwise.

    >>> corpus_size("10k").messages
    10000
    """
    try:
        return CORPUS_SIZES[name.lower()]
    except KeyError:
        known = ", ".join(CORPUS_SIZES)
        raise ValueError(f"unknown corpus size {name!r}; choose one of {known}") from None


# ------------------------------------------------------------------------------------
# Planning: which keys and windows exist and how many messages each window gets.
# Only this part is held in memory; it is O(session keys).
# ------------------------------------------------------------------------------------


@dataclass(slots=True)
class WindowPlan:
    """One window to write: its metadata line and its message budget."""

    metadata: dict[str, Any]
    messages: int
    agent: str
    start_ms: int


@dataclass(slots=True)
class CorpusPlan:
    """Every window in writing order, and the anchors the workloads need."""

    windows: list[WindowPlan] = field(default_factory=list)
    long_session_id: str = ""


def random_uuid(generator: random.Random) -> str:
    """A UUID-shaped string from 128 random bits (deterministic for a seeded generator)."""
    value = f"{generator.getrandbits(128):032x}"
    return f"{value[:8]}-{value[8:12]}-4{value[13:16]}-{value[16:20]}-{value[20:]}"


def short_hex(generator: random.Random, digits: int = 8) -> str:
    """`digits` random hexadecimal digits."""
    return f"{generator.getrandbits(4 * digits):0{digits}x}"


def _key_descriptions(size: CorpusSize, generator: random.Random) -> list[dict[str, Any]]:
    """Session keys with kind, title and ownership; the first one is `agent:main:main`."""
    keys: list[dict[str, Any]] = []
    names = [agent for agent, _ in AGENTS]
    weights = [share for _, share in AGENTS]
    for agent in names:
        keys.append({"key": f"agent:{agent}:main", "agent": agent, "kind": "chat"})
    keys.append({"key": "global", "agent": "", "kind": "system"})
    counter = 0
    while len(keys) < size.session_keys:
        counter += 1
        agent = generator.choices(names, weights=weights)[0]
        roll = generator.random()
        entry: dict[str, Any] = {"agent": agent, "kind": "chat"}
        if roll < 0.35:
            entry["key"] = f"agent:{agent}:telegram:direct:{100000 + counter}"
        elif roll < 0.6:
            entry["key"] = f"agent:{agent}:slack:channel:c{counter:05d}"
        elif roll < 0.7:
            entry["key"] = f"agent:{agent}:cron:job-{counter}"
            entry["kind"] = "cron"
        elif roll < 0.92:
            entry["key"] = f"agent:{agent}:subagent:{short_hex(generator, 12)}"
            entry["kind"] = "subagent"
            entry["spawnedBy"] = f"agent:{agent}:main"
            entry["parentSessionKey"] = f"agent:{agent}:main"
        elif roll < 0.96:
            entry["key"] = f"agent:{agent}:dashboard:incognito-{short_hex(generator)}"
            entry["incognito"] = True
        else:
            entry["key"] = f"agent:{agent}:discord:group:g{counter:05d}"
        keys.append(entry)
    return keys


def _split_budget(total: int, parts: int, generator: random.Random, minimum: int) -> list[int]:
    """Split `total` into `parts` lognormal shares of at least `minimum` each, exactly."""
    weights = [generator.lognormvariate(0.0, 1.0) for _ in range(parts)]
    spare = total - minimum * parts
    if spare < 0:
        raise ValueError(f"{total} messages cannot fill {parts} parts of {minimum}")
    scale = spare / sum(weights)
    shares = [minimum + math.floor(weight * scale) for weight in weights]
    shortfall = total - sum(shares)
    for index in range(shortfall):
        shares[index % parts] += 1
    return shares


def plan_corpus(size: CorpusSize, generator: random.Random) -> CorpusPlan:
    """Decide keys, windows, reasons and message budgets (no text yet)."""
    plan = CorpusPlan()
    keys = _key_descriptions(size, generator)
    other_budget = size.messages - size.long_session_messages
    budgets = [size.long_session_messages] + _split_budget(
        other_budget, len(keys) - 1, generator, minimum=2
    )
    clock = BASE_EPOCH_MS
    for entry, budget in zip(keys, budgets):
        long_running = entry["key"] == "agent:main:main"
        window_count = 1
        if not long_running and budget >= 6:
            roll = generator.random()
            window_count = 3 if roll < 0.08 else 2 if roll < 0.3 else 1
        window_budgets = (
            [budget] if window_count == 1
            else _split_budget(budget, window_count, generator, minimum=2)
        )
        previous: str | None = None
        title = f"{entry['kind'].capitalize()} {entry['key'].rsplit(':', 1)[-1]}"
        for index, window_budget in enumerate(window_budgets):
            session_id = random_uuid(generator)
            reason = "initial" if index == 0 else generator.choice(("reset", "reset", "rollover"))
            clock += generator.randint(60_000, 3_600_000)
            metadata: dict[str, Any] = {
                "sessionKey": entry["key"],
                "sessionId": session_id,
                "previousSessionId": previous,
                "reason": reason,
                "current": index == window_count - 1,
                "title": title,
                "kind": entry["kind"],
                "createdAt": clock,
            }
            for optional in ("spawnedBy", "parentSessionKey", "incognito"):
                if optional in entry:
                    metadata[optional] = entry[optional]
            plan.windows.append(WindowPlan(metadata, window_budget, entry["agent"], clock))
            if long_running:
                plan.long_session_id = session_id
            previous = session_id
    return plan
