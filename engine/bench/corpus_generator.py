"""Seeded generator of realistic transcript corpora (tiny, 10k, 100k and 1M messages).

Owns: the shape of a generated corpus (agents, session keys, window chains, event
streams) and writing it in the corpus directory format that `engine.ingest` imports:

    <corpus>/sessions.jsonl                  one session window per line
    <corpus>/transcripts/<sessionId>.jsonl   that window's events, one per line
    <corpus>/manifest.json                   sizes, probe answers, workload anchors

Must not touch: the store, the index, backends. It imports nothing from the engine but
`engine.bench` siblings, so it runs before any backend exists.

Determinism: every byte comes from one `random.Random(seed)` and fixed constants (no
clock, no set iteration in output, no hash randomisation), so the same seed and size
give byte-identical files. Streaming: windows are written one at a time and only
O(session keys) plan data is held, so 1M messages need little memory.

What a corpus holds (behaviour.md §2, openclaw-state-format.md):
* agents `main`, `work_team`, `workxteam`, `research`, `ops`, plus a `global` key;
  session keys of several kinds (main, channel, direct, cron, subagent spawned by the
  agent's main session, a few incognito);
* `agent:main:main` is one long window (up to 100k messages) for the history workloads;
* physical resets: a key may own 2–3 windows (`reason` `reset` or `rollover`), older
  ones retained and still searchable;
* events: `message` (user, assistant with `thinking`/`text`/`toolCall` blocks,
  `toolResult`), `model_change`, `custom_message` with `display`, `compaction`,
  logical `reset` with `firstKeptEntryId`, and rewinds: a short branch that a `leaf`
  event then abandons (`targetId` = the message before it);
* text: Zipfian multilingual words (mostly English; French, German, Spanish and
  Vietnamese diacritics; Chinese, Japanese, Korean), from a few words to several KB of
  code blocks and logs.

"Messages" in a size means `type: "message"` events of every role, rewound ones
included. The manifest's `searchableMessages` counts the index rows a correct backend
holds: user and assistant text on the active path.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.bench.probes import NEVER_INDEXED_WORD, RARE_WORD, ProbeCounter
from engine.bench.text_synthesis import Text, TextSynthesizer

GENERATOR_VERSION = 1

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


def default_cache_root() -> Path:
    """Where generated corpora go: `$SESSION_SEARCH_CACHE`, else `./corpora/cache` when
    run from a checkout (a `corpora/` folder in the working directory), else
    `~/.cache/session-search/corpora`. The checkout's `corpora/cache/` is gitignored."""
    configured = os.environ.get("SESSION_SEARCH_CACHE")
    if configured:
        return Path(configured)
    if Path("corpora").is_dir():
        return Path("corpora") / "cache"
    return Path.home() / ".cache" / "session-search" / "corpora"


def corpus_directory(size: CorpusSize, seed: int, cache_root: Path | None = None) -> Path:
    """The cache directory of one corpus: `<cache_root>/<size>-<seed>/`."""
    return (cache_root or default_cache_root()) / f"{size.name}-{seed}"


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


def _uuid(generator: random.Random) -> str:
    value = f"{generator.getrandbits(128):032x}"
    return f"{value[:8]}-{value[8:12]}-4{value[13:16]}-{value[16:20]}-{value[20:]}"


def _short_hex(generator: random.Random, digits: int = 8) -> str:
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
            entry["key"] = f"agent:{agent}:subagent:{_short_hex(generator, 12)}"
            entry["kind"] = "subagent"
            entry["spawnedBy"] = f"agent:{agent}:main"
            entry["parentSessionKey"] = f"agent:{agent}:main"
        elif roll < 0.96:
            entry["key"] = f"agent:{agent}:dashboard:incognito-{_short_hex(generator)}"
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
            session_id = _uuid(generator)
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


# ------------------------------------------------------------------------------------
# Event streams: one window's events, written in order.
# ------------------------------------------------------------------------------------


def _iso(moment_ms: int) -> str:
    """ISO-8601 UTC with milliseconds, as OpenClaw writes it.

    >>> _iso(BASE_EPOCH_MS + 1234)
    '2026-01-05T00:00:01.234Z'
    """
    seconds, millis = divmod(moment_ms, 1000)
    stamp = datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{millis:03d}Z"


@dataclass(slots=True)
class WindowSummary:
    """What writing one window produced (for the manifest)."""

    events: int = 0
    messages: int = 0
    searchable_messages: int = 0
    active_message_ids: list[str] = field(default_factory=list)


class WindowWriter:
    """Writes the events of one window; the tree state lives here.

    `leaf` is the id of the active leaf: a new tree entry's `parentId`. A rewind writes
    a short branch, then a `leaf` event whose `targetId` is the leaf before the branch,
    and continues from there, so the branch is off the active path.
    """

    def __init__(
        self,
        plan: WindowPlan,
        synthesizer: TextSynthesizer,
        counter: ProbeCounter,
        rare_rate: float,
        keep_active_ids: bool,
    ) -> None:
        self.plan = plan
        self.synthesizer = synthesizer
        self.generator = synthesizer.generator
        self.counter = counter
        self.rare_rate = rare_rate
        self.keep_active_ids = keep_active_ids
        self.salt = self.generator.getrandbits(32)
        self.next_number = 0
        self.leaf: str | None = None
        self.clock = plan.start_ms
        self.summary = WindowSummary()
        self.recent_active: list[str] = []
        self.channel = ":telegram:" in plan.metadata["sessionKey"]

    # -- identifiers and time ---------------------------------------------------------

    def new_id(self) -> str:
        """A fresh 8-hex id, unique in the window (an odd multiplier is a bijection)."""
        self.next_number += 1
        return f"{(self.next_number * 2_654_435_761 + self.salt) & 0xFFFFFFFF:08x}"

    def tick(self) -> int:
        """Advance the clock 2 s – 2 min (sometimes hours) and return it."""
        step = self.generator.randint(2_000, 120_000)
        if self.generator.random() < 0.02:
            step += self.generator.randint(3_600_000, 36_000_000)
        self.clock += step
        return self.clock

    # -- text ---------------------------------------------------------------------------

    def natural_text(self, role: str, abandoned: bool) -> Text:
        """The visible text of a user or assistant message, with probe plantings."""
        synthesizer = self.synthesizer
        generator = self.generator
        language = synthesizer.pick_language()
        roll = generator.random()
        if roll < 0.72:
            text = synthesizer.paragraph(language, generator.randint(3, 30))
        elif roll < 0.94:
            text = synthesizer.paragraph(language, generator.randint(30, 160))
        else:
            text = synthesizer.paragraph(language, generator.randint(200, 700))
        extra = generator.random()
        if role == "assistant" and extra < 0.08:
            text.extend(synthesizer.code_block(generator.randint(300, 4000)), "\n\n")
        elif role == "user" and extra < 0.04:
            text.extend(synthesizer.log_excerpt(generator.randint(500, 4000), self.clock), "\n")
        if generator.random() < 0.004:
            text.extend(synthesizer.topic_sentence(), " ")
        if generator.random() < 0.006:
            text.extend(synthesizer.compound(), " ")
        if not abandoned and generator.random() < self.rare_rate:
            text.extend(synthesizer.planted_word(RARE_WORD), " ")
        if abandoned:
            text.extend(synthesizer.planted_word(NEVER_INDEXED_WORD), " ")
        return text

    def hidden_text(self, minimum: int, maximum: int) -> str:
        """Text for places that are never indexed (thinking, tool results)."""
        text = self.synthesizer.paragraph("en", self.generator.randint(minimum, maximum))
        if self.generator.random() < 0.05:
            text.extend(self.synthesizer.planted_word(NEVER_INDEXED_WORD), " ")
        return text.text

    # -- events -------------------------------------------------------------------------

    def tree_entry(self, kind: str, moment: int | None = None, **fields: Any) -> dict[str, Any]:
        """A tree entry: id, parentId (the current leaf) and timestamp; becomes the leaf.

        `moment` is the entry's time (epoch ms); by default the clock ticks once."""
        entry_id = self.new_id()
        moment = self.tick() if moment is None else moment
        event: dict[str, Any] = {
            "type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": _iso(moment),
        }
        event.update(fields)
        self.leaf = entry_id
        return event

    def user_message(self, abandoned: bool) -> tuple[dict[str, Any], Text]:
        moment = self.tick()
        text = self.natural_text("user", abandoned)
        visible = text.text
        if self.channel and self.generator.random() < 0.5:
            visible = (
                "Conversation info (untrusted metadata):\n```json\n"
                f'{{"sender": "user{self.generator.randint(1, 99)}", "chat_type": "direct"}}\n'
                f"```\n[{_iso(self.clock)}] {visible}"
            )
            text = Text(visible, text.words)
        content: Any
        if self.generator.random() < 0.3:
            content = visible
        else:
            content = [{"type": "text", "text": visible}]
        event = self.tree_entry("message", moment, message={
            "role": "user", "content": content, "timestamp": moment,
        })
        return event, text

    def assistant_message(self, abandoned: bool) -> tuple[dict[str, Any], Text, str | None]:
        generator = self.generator
        moment = self.tick()
        if generator.random() < 0.01:
            event = self.tree_entry("message", moment, message={
                "role": "assistant", "content": [], "api": "openai-responses",
                "provider": "openai", "model": "gpt-5", "stopReason": "error",
                "errorMessage": "upstream overloaded", "timestamp": moment,
            })
            return event, Text(""), None
        blocks: list[dict[str, Any]] = []
        if generator.random() < 0.4:
            blocks.append({"type": "thinking", "thinking": self.hidden_text(10, 120)})
        text = self.natural_text("assistant", abandoned)
        visible = text.text
        if self.channel and generator.random() < 0.3:
            visible = "[[reply_to_current]] " + visible
            text = Text(visible, text.words)
        blocks.append({"type": "text", "text": visible})
        tool_call_id: str | None = None
        if generator.random() < 0.25:
            tool_call_id = f"call_{_short_hex(generator, 12)}"
            blocks.append({
                "type": "toolCall", "id": tool_call_id,
                "name": generator.choice(("exec", "read", "web_search", "edit")),
                "arguments": {"command": f"ls -la /srv/app/{generator.randint(1, 50)}"},
            })
        output_tokens = max(1, len(visible) // 4)
        input_tokens = generator.randint(200, 20_000)
        event = self.tree_entry("message", moment, message={
            "role": "assistant", "content": blocks, "api": "openai-responses",
            "provider": "openai", "model": "gpt-5",
            "usage": {
                "input": input_tokens, "output": output_tokens, "cacheRead": 0, "cacheWrite": 0,
                "totalTokens": input_tokens + output_tokens,
                "cost": {"total": round((input_tokens + 4 * output_tokens) * 1e-6, 6)},
            },
            "stopReason": "toolUse" if tool_call_id else "stop",
            "timestamp": moment,
        })
        return event, text, tool_call_id

    def tool_result(self, tool_call_id: str) -> dict[str, Any]:
        generator = self.generator
        moment = self.tick()
        if generator.random() < 0.5:
            output = self.synthesizer.log_excerpt(generator.randint(50, 6000), moment).text
        else:
            output = self.hidden_text(5, 80)
        return self.tree_entry("message", moment, message={
            "role": "toolResult", "toolCallId": tool_call_id,
            "toolName": generator.choice(("exec", "read", "web_search", "edit")),
            "content": [{"type": "text", "text": output}],
            "isError": generator.random() < 0.05, "timestamp": moment,
        })

    def iter_events(self) -> Iterator[dict[str, Any]]:
        """Yield the window's events; `summary` is complete when the iterator ends."""
        generator = self.generator
        remaining = self.plan.messages
        yield self.tree_entry("model_change", provider="openai", modelId="gpt-5")
        reset_at = -1
        if remaining >= 12 and generator.random() < 0.15:
            reset_at = generator.randrange(remaining // 3, remaining - 2)
        compaction_at = -1
        if remaining >= 40 and generator.random() < 0.1:
            compaction_at = generator.randrange(10, remaining - 5)
        written = 0
        next_role = "user"
        pending_call: str | None = None
        while remaining > 0:
            if written == reset_at and self.recent_active:
                kept = self.recent_active[-min(len(self.recent_active), generator.randint(1, 4))]
                yield self.tree_entry("reset", firstKeptEntryId=kept, reason="new")
            if written == compaction_at and self.recent_active:
                yield self.tree_entry(
                    "compaction", firstKeptEntryId=self.recent_active[-1],
                    tokensBefore=generator.randint(50_000, 180_000),
                    summary=self.hidden_text(20, 60),
                )
            if next_role == "user" and generator.random() < 0.003:
                yield self.tree_entry(
                    "custom_message", customType="note", display=True,
                    content=self.hidden_text(3, 12),
                )
            if next_role == "user" and remaining >= 4 and generator.random() < 0.02:
                rewind_target = self.leaf
                for event in self.rewound_branch(generator.randint(1, 2)):
                    yield event
                    remaining -= 1
                    written += 1
                yield {"type": "leaf", "id": self.new_id(), "parentId": self.leaf,
                       "targetId": rewind_target, "timestamp": _iso(self.tick())}
                self.leaf = rewind_target
                continue
            if next_role == "toolResult" and pending_call is not None:
                yield self.tool_result(pending_call)
                pending_call = None
                next_role = "assistant"
            elif next_role == "user":
                event, text = self.user_message(abandoned=False)
                self.record_searchable(event, text)
                yield event
                next_role = "assistant"
            else:
                event, text, pending_call = self.assistant_message(abandoned=False)
                self.record_searchable(event, text)
                yield event
                next_role = "toolResult" if pending_call else "user"
            remaining -= 1
            written += 1

    def rewound_branch(self, length: int) -> Iterator[dict[str, Any]]:
        """A user (then assistant) message that a `leaf` event will abandon."""
        for index in range(length):
            if index % 2 == 0:
                event, _ = self.user_message(abandoned=True)
            else:
                event, _, _ = self.assistant_message(abandoned=True)
            yield event

    def record_searchable(self, event: dict[str, Any], text: Text) -> None:
        """Count an active-path user/assistant message (if it has text) for the probes."""
        message_id = event["id"]
        self.recent_active = (self.recent_active + [message_id])[-8:]
        if self.keep_active_ids:
            self.summary.active_message_ids.append(message_id)
        if not text.text.strip():
            return
        self.summary.searchable_messages += 1
        self.counter.observe(self.plan.agent, text.words, text.text)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _CountingWriter:
    """Writes JSON lines and counts events and messages."""

    def __init__(self, handle: Any, summary: WindowSummary) -> None:
        self.handle = handle
        self.summary = summary

    def write(self, event: dict[str, Any]) -> None:
        self.handle.write(_dump(event) + "\n")
        self.summary.events += 1
        if event.get("type") == "message":
            self.summary.messages += 1


ProgressCallback = Callable[[int, int], None]


def generate_corpus(
    size: CorpusSize,
    seed: int,
    directory: Path,
    progress: ProgressCallback | None = None,
) -> dict[str, Any]:
    """Write a corpus into `directory` (created; must not exist) and return its manifest.

    `progress(messages_written, messages_total)` is called after each window.
    """
    directory = Path(directory)
    directory.mkdir(parents=True)
    (directory / "transcripts").mkdir()
    generator = random.Random(seed)
    plan = plan_corpus(size, generator)
    synthesizer = TextSynthesizer(generator)
    counter = ProbeCounter()
    rare_rate = min(1.0, 12.0 / max(1, size.messages * 0.85))
    totals = {"events": 0, "messages": 0, "searchableMessages": 0, "windows": 0}
    long_session: dict[str, Any] = {}
    with open(directory / "sessions.jsonl", "w", encoding="utf-8", newline="\n") as sessions:
        for window in plan.windows:
            session_id = window.metadata["sessionId"]
            sessions.write(_dump(window.metadata) + "\n")
            is_long = session_id == plan.long_session_id
            writer = WindowWriter(window, synthesizer, counter, rare_rate, keep_active_ids=is_long)
            path = directory / "transcripts" / f"{session_id}.jsonl"
            with open(path, "w", encoding="utf-8", newline="\n") as transcript:
                lines = _CountingWriter(transcript, writer.summary)
                for event in writer.iter_events():
                    lines.write(event)
            summary = writer.summary
            totals["events"] += summary.events
            totals["messages"] += summary.messages
            totals["searchableMessages"] += summary.searchable_messages
            totals["windows"] += 1
            if is_long:
                active = summary.active_message_ids
                long_session = {
                    "sessionKey": window.metadata["sessionKey"],
                    "sessionId": session_id,
                    "messages": summary.messages,
                    "activeUserAssistantMessages": len(active),
                    "anchorMessageId": active[len(active) // 2],
                    "lastMessageId": active[-1],
                }
            if progress is not None:
                progress(totals["messages"], size.messages)
    keys_by_agent: dict[str, int] = {}
    seen_keys: set[str] = set()
    for window in plan.windows:
        key = window.metadata["sessionKey"]
        if key not in seen_keys:
            seen_keys.add(key)
            keys_by_agent[window.agent] = keys_by_agent.get(window.agent, 0) + 1
    manifest = {
        "generator": "engine.bench.corpus_generator",
        "generatorVersion": GENERATOR_VERSION,
        "size": size.name,
        "seed": seed,
        "counts": {
            "sessionKeys": len(seen_keys),
            "agents": len([agent for agent in keys_by_agent if agent]),
            **totals,
        },
        "sessionKeysByAgent": dict(sorted(keys_by_agent.items())),
        "longSession": long_session,
        "probes": counter.to_json(),
    }
    with open(directory / "manifest.json", "w", encoding="utf-8", newline="\n") as handle:
        handle.write(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n")
    return manifest


def ensure_corpus(
    size: CorpusSize,
    seed: int = DEFAULT_SEED,
    cache_root: Path | None = None,
    progress: ProgressCallback | None = None,
) -> Path:
    """Return the cached corpus directory, generating it first when absent.

    Generation writes into a temporary sibling and renames it into place, so a cache
    entry with a `manifest.json` is always complete.
    """
    target = corpus_directory(size, seed, cache_root)
    if (target / "manifest.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    if partial.exists():
        shutil.rmtree(partial)
    generate_corpus(size, seed, partial, progress)
    if target.exists():
        shutil.rmtree(target)
    partial.rename(target)
    return target


def import_source(directory: Path, manifest: dict[str, Any]) -> Path:
    """What to hand the importer for a corpus: the directory itself, or the file its
    manifest names in `importSource` (the real-text corpus is a flat messages file).

    >>> import_source(Path("c"), {}), import_source(Path("c"), {"importSource": "m.jsonl"})
    (PosixPath('c'), PosixPath('c/m.jsonl'))
    """
    source = manifest.get("importSource")
    return Path(directory) / source if source else Path(directory)


def iter_window_leaves(source: Path) -> Iterator[tuple[str, str]]:
    """(sessionId, id of its last event) for every window of an import source: a corpus
    directory (the last line of each transcript) or a flat messages file (the last
    `messageId` of each `sessionId`). For generated and real-text corpora that last
    event is the window's active leaf (both end every window with a message)."""
    source = Path(source)
    if source.is_dir():
        with open(source / "sessions.jsonl", encoding="utf-8") as sessions:
            for line in sessions:
                session_id = json.loads(line)["sessionId"]
                last = ""
                with open(source / "transcripts" / f"{session_id}.jsonl", encoding="utf-8") as events:
                    for last in events:
                        pass
                yield session_id, json.loads(last)["id"]
        return
    leaves: dict[str, str] = {}
    with open(source, encoding="utf-8") as flat:
        for line in flat:
            record = json.loads(line)
            leaves[record["sessionId"]] = record["messageId"]
    yield from leaves.items()


def read_manifest(directory: Path) -> dict[str, Any]:
    """Load a corpus's `manifest.json`."""
    with open(Path(directory) / "manifest.json", encoding="utf-8") as handle:
        return json.load(handle)
