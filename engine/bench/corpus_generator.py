"""Seeded generator of realistic transcript corpora (tiny, 10k, 100k and 1M messages).

Owns: writing a corpus in the directory format that `engine.ingest` imports, its
manifest, and the cache of generated corpora:

    <corpus>/sessions.jsonl                  one session window per line
    <corpus>/transcripts/<sessionId>.jsonl   that window's events, one per line
    <corpus>/manifest.json                   sizes, probe answers, workload anchors

Must not touch: the store, the index, backends. It imports nothing from the engine but
`engine.bench` siblings, so it runs before any backend exists. What a corpus holds is
decided in `corpus_plan` (keys, windows, budgets) and `window_events` (the events of one
window); the names of both that callers need are re-exported here.

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
import os
import random
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from engine.bench.corpus_plan import (
    BASE_EPOCH_MS,
    CORPUS_SIZES,
    DEFAULT_SEED,
    CorpusSize,
    corpus_size,
    plan_corpus,
)
from engine.bench.probes import ProbeCounter
from engine.bench.text_synthesis import TextSynthesizer
from engine.bench.window_events import WindowSummary, WindowWriter

__all__ = [
    "BASE_EPOCH_MS", "CORPUS_SIZES", "DEFAULT_SEED", "GENERATOR_VERSION", "CorpusSize",
    "corpus_directory", "corpus_size", "default_cache_root", "ensure_corpus",
    "generate_corpus", "import_source", "iter_window_leaves", "plan_corpus", "read_manifest",
]

GENERATOR_VERSION = 2


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
    entry with a `manifest.json` is always complete; one an earlier `GENERATOR_VERSION`
    wrote is generated again (version 2: incognito windows count no searchable messages).
    """
    target = corpus_directory(size, seed, cache_root)
    if (target / "manifest.json").is_file() and (
            read_manifest(target).get("generatorVersion") == GENERATOR_VERSION):
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
