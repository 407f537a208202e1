"""A benchmark corpus of real conversational text: the dialogs that `chatterbot-corpus` ships.

Owns: turning the YAML dialogs of the `chatterbot-corpus` package (BSD licence; 28
languages, written by people, from two-line greetings to code answers) into a flat
messages file (`messages.jsonl`, the importer's flat form) plus a `manifest.json` in the
generator's schema, with probe queries chosen from the text and their exact answers.
Must not touch: the store or any backend.

Optional by design: the package and PyYAML are not dependencies of the engine. When they
are missing, `CapabilityMissing` says what to install
(`pip install chatterbot-corpus pyyaml`).

Layout of the flat file: one window per (language, topic file), key
`agent:<agent>:chatterbot:<language>-<topic>`; English dialogs belong to agent `main`,
Chinese, Japanese and Korean ones to `work_team`, the rest to `research`. Each dialog's
lines alternate user / assistant, in file order.

Expected answers: unlike the generator (which counts what it plants), real text is
counted after the fact with the search profile's own analyzer (`SEARCH_PROFILE`, the
`unicode61` tokenizer that the parity tests pin to SQLite FTS5) over exactly the text
the projection indexes (`engine.transcript.projection`). Probes are chosen from those
statistics, deterministically (ties broken by the term's text).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.bench.adapters import CapabilityMissing
from engine.bench.corpus_generator import BASE_EPOCH_MS, default_cache_root
from engine.bench.probes import ABSENT_WORD
from engine.model import StoredEvent

ASIAN_LANGUAGES = frozenset({"chinese", "traditionalchinese", "japanese", "korean"})
HAN_RANGE = re.compile(r"^[\u3400-\u9fff]+$")
ASCII_WORD = re.compile(r"^[a-z]+$")
JOINED_WORD = re.compile(r"\b([A-Za-z]+)[-'’.]([A-Za-z]+)\b")


def chatterbot_data_directory() -> tuple[Path, str]:
    """The installed package's `data/` folder and its version (CapabilityMissing if absent)."""
    try:
        import chatterbot_corpus
        import yaml  # noqa: F401  (checked here so the message names both packages)
    except ImportError as error:
        raise CapabilityMissing(
            f"real-text corpus: {error.name} is not installed "
            "(pip install chatterbot-corpus pyyaml)"
        ) from None
    from importlib.metadata import version

    return Path(chatterbot_corpus.__file__).parent / "data", version("chatterbot-corpus")


def iter_dialogs(data: Path) -> Iterator[tuple[str, str, list[list[str]]]]:
    """(language, topic, dialogs) per YAML file, in sorted path order."""
    import yaml

    for path in sorted(data.glob("*/*.yml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        dialogs = [
            [str(line) for line in dialog if isinstance(line, str | int | float)]
            for dialog in document.get("conversations") or []
            if isinstance(dialog, list)
        ]
        yield path.parent.name, path.stem, [dialog for dialog in dialogs if dialog]


def agent_for(language: str) -> str:
    """The agent a language's dialogs belong to."""
    if language == "english":
        return "main"
    return "work_team" if language in ASIAN_LANGUAGES else "research"


@dataclass(slots=True)
class IndexedMessage:
    """One searchable message: its agent, its indexed text and its terms in order."""

    agent: str
    text: str
    terms: list[str]
    surfaces: dict[str, str]


def _flat_records(data: Path) -> Iterator[dict[str, Any]]:
    moment = BASE_EPOCH_MS
    for language, topic, dialogs in iter_dialogs(data):
        key = f"agent:{agent_for(language)}:chatterbot:{language}-{topic}"
        session_id = f"chatterbot-{language}-{topic}"
        number = 0
        for dialog in dialogs:
            for turn, line in enumerate(dialog):
                number += 1
                moment += 1000
                yield {
                    "sessionKey": key, "sessionId": session_id,
                    "messageId": f"m{number:05d}",
                    "role": "user" if turn % 2 == 0 else "assistant",
                    "timestamp": moment, "text": line,
                }


def _indexed(record: dict[str, Any], analyzer: Any) -> IndexedMessage | None:
    from engine.ingest.flat import message_event
    from engine.transcript.projection import extract_index_entry

    event = message_event(record, None)
    entry = extract_index_entry(StoredEvent(record["sessionId"], 0, event, 0.0))
    if entry is None:
        return None
    tokens = analyzer.tokens(entry.text)
    surfaces = {token.text: entry.text[token.start:token.end].lower() for token in tokens}
    agent = record["sessionKey"].split(":")[1]
    return IndexedMessage(agent, entry.text, [token.text for token in tokens], surfaces)


def _count(messages: list[IndexedMessage], matches: Any) -> tuple[int, dict[str, int]]:
    by_agent: Counter[str] = Counter()
    for message in messages:
        if matches(message):
            by_agent[message.agent] += 1
    return sum(by_agent.values()), dict(sorted(by_agent.items()))


def _most(counter: Counter[str], keep: Any) -> str | None:
    candidates = [(-count, term) for term, count in counter.items() if keep(term, count)]
    return min(candidates)[1] if candidates else None


def choose_probes(messages: list[IndexedMessage]) -> dict[str, dict[str, Any]]:
    """Probe queries for each query class, with their exact answers (see module doc)."""
    document_frequency: Counter[str] = Counter()
    for message in messages:
        document_frequency.update(set(message.terms))
    sets = [set(message.terms) for message in messages]
    probes: dict[str, dict[str, Any]] = {}

    def add(name: str, query_class: str, query: str, matches: Any, match: str = "exact",
            order: str = "relevance") -> None:
        total, by_agent = _count(messages, matches)
        probes[name] = {
            "queryClass": query_class, "query": query, "match": match, "order": order,
            "matchingMessages": total, "matchingMessagesByAgent": by_agent,
        }

    common = _most(document_frequency, lambda term, count: True) or "the"
    add("common_word", "common word", common, lambda m: common in m.terms)
    rare = _most(document_frequency, lambda t, c: c == 3 and len(t) >= 5 and ASCII_WORD.match(t))
    if rare:
        add("rare_word", "rare word", rare, lambda m: rare in m.terms)
    accented: Counter[str] = Counter()
    surface_of: dict[str, str] = {}
    for message in messages:
        for term, surface in message.surfaces.items():
            if len(term) >= 4 and surface != term and surface.isalpha() \
                    and not ASCII_WORD.match(surface) and ASCII_WORD.match(term):
                accented[term] += 1
                surface_of.setdefault(term, surface)
    diacritic = _most(accented, lambda term, count: True)
    if diacritic:
        add("diacritic_word", "word with diacritics", surface_of[diacritic],
            lambda m: diacritic in m.terms)
    top = [term for term, _ in sorted(document_frequency.items(),
                                      key=lambda item: (-item[1], item[0]))[:8]
           if ASCII_WORD.match(term)]
    pairs = Counter()
    for terms in sets:
        present = [term for term in top if term in terms]
        pairs.update((a, b) for index, a in enumerate(present) for b in present[index + 1:])
    if pairs:
        first, second = min(pairs, key=lambda pair: (-pairs[pair], pair))
        add("two_words", "two-word AND", f"{first} {second}",
            lambda m: first in m.terms and second in m.terms)
        third = _most(Counter(t for terms in sets if first in terms and second in terms
                              for t in terms if t not in (first, second) and ASCII_WORD.match(t)),
                      lambda term, count: True)
        if third:
            add("multi_words", "3–5 word query", f"{first} {second} {third}",
                lambda m: {first, second, third} <= set(m.terms))
    joined: Counter[tuple[str, str, str]] = Counter()
    for message in messages:
        for match in JOINED_WORD.finditer(message.text):
            joined[(match.group(0).lower(), match.group(1).lower(), match.group(2).lower())] += 1
    if joined:
        surface, left, right = min(joined, key=lambda item: (-joined[item], item))
        add("inner_punctuation", "term with inner punctuation", surface,
            lambda m: any(a == left and b == right for a, b in zip(m.terms, m.terms[1:])))
    long_word = _most(document_frequency, lambda t, c: len(t) >= 8 and ASCII_WORD.match(t))
    if long_word:
        prefix = long_word[:5]
        add("prefix", "prefix mode", prefix,
            lambda m: any(term.startswith(prefix) for term in m.terms), match="prefix")
    add("no_hit", "no hit", ABSENT_WORD, lambda m: ABSENT_WORD in m.terms)
    whole_tokens = set(document_frequency)
    substrings: Counter[str] = Counter()
    for terms in sets:
        found = {term[index:index + 2] for term in terms if len(term) > 2 and HAN_RANGE.match(term)
                 for index in range(len(term) - 1)}
        substrings.update(found - whole_tokens)
    cjk = _most(substrings, lambda term, count: True)
    if cjk:
        add("cjk_retry", "CJK 2-character substring (retry)", cjk, lambda m: cjk in m.text)
    add("recent_common", "recent order", common, lambda m: common in m.terms, order="recent")
    return probes


def write_chatterbot_corpus(directory: Path) -> dict[str, Any]:
    """Write the installed package's dialogs as a corpus into `directory`."""
    data, package_version = chatterbot_data_directory()
    return write_dialog_corpus(directory, data, f"chatterbot-corpus {package_version} "
                                                "(BSD licence)")


def write_dialog_corpus(directory: Path, data: Path, source: str) -> dict[str, Any]:
    """Write `messages.jsonl` and `manifest.json` into `directory` (created; must not exist)
    from the `<language>/<topic>.yml` dialog files under `data`."""
    from engine.analysis.profiles import SEARCH_PROFILE

    directory.mkdir(parents=True)
    analyzer = SEARCH_PROFILE.analyzer()
    indexed: list[IndexedMessage] = []
    windows: Counter[str] = Counter()
    keys: dict[str, str] = {}
    with open(directory / "messages.jsonl", "w", encoding="utf-8", newline="\n") as handle:
        for record in _flat_records(data):
            handle.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
            windows[record["sessionId"]] += 1
            keys[record["sessionId"]] = record["sessionKey"]
            message = _indexed(record, analyzer)
            if message is not None:
                indexed.append(message)
    longest = min(windows, key=lambda session_id: (-windows[session_id], session_id))
    messages = sum(windows.values())
    agents = Counter(keys[session_id].split(":")[1] for session_id in windows)
    manifest = {
        "generator": "engine.bench.real_text",
        "source": source,
        "size": "chatterbot",
        "seed": 0,
        "importSource": "messages.jsonl",
        "counts": {
            "sessionKeys": len(windows), "agents": len(agents), "events": messages,
            "messages": messages, "searchableMessages": len(indexed), "windows": len(windows),
        },
        "sessionKeysByAgent": dict(sorted(agents.items())),
        "longSession": {
            "sessionKey": keys[longest], "sessionId": longest, "messages": windows[longest],
            "anchorMessageId": f"m{windows[longest] // 2:05d}",
            "lastMessageId": f"m{windows[longest]:05d}",
        },
        "probes": choose_probes(indexed),
    }
    (directory / "manifest.json").write_text(
        json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    return manifest


def ensure_chatterbot_corpus(cache_root: Path | None = None) -> Path:
    """The cached real-text corpus directory, written first when absent."""
    _, package_version = chatterbot_data_directory()
    target = (cache_root or default_cache_root()) / f"chatterbot-{package_version}"
    if not (target / "manifest.json").is_file():
        partial = target.with_name(target.name + ".partial")
        if partial.exists():
            import shutil

            shutil.rmtree(partial)
        write_chatterbot_corpus(partial)
        partial.rename(target)
    return target
