"""A seeded multilingual chat corpus in the flat messages form, and queries drawn from its words.

Owns: `FlatMessage` (one line of the flat form `session-search import` reads), the
corpus generator, the flat file writer, the conversions between a flat corpus and the
parity tests' `Corpus` value (which the known-divergence predicates read), and the query
generator. Must not touch: any backend or external implementation (the oracle tests load
what this module writes), or the engine's analysis (queries are drawn from the raw text
with a plain word split, so they never depend on the code under test).

Everything is drawn from one `random.Random(seed)`, so a seed fixes every byte.

What a corpus holds, per agent (keys `agent:<id>:<rest>`): two or three session keys, each
with one to three windows (a later window is a reset: the earlier ones stay retained),
alternating user and assistant messages, timestamps that often repeat (ties). Texts mix
English with French, German, Spanish and Vietnamese words (diacritics), Greek (final
sigma, accents, capitals), Chinese, Japanese and Korean (CJK runs: several words without
spaces are one `unicode61` token), words glued by punctuation, long messages (more than 48
tokens, so the snippet window moves), blank and whitespace-padded messages. An agent
named as `credential_agent` also holds a few credential-looking lines, one named as
`upper_case_agent` a session key with capitals.
"""

from __future__ import annotations

import json
import random
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine.bench.vocabulary import (
    CHINESE_WORDS,
    ENGLISH_WORDS,
    FRENCH_WORDS,
    GERMAN_WORDS,
    JAPANESE_WORDS,
    KOREAN_WORDS,
    SPANISH_WORDS,
    VIETNAMESE_WORDS,
)
from engine.ingest.flat import message_event
from engine.model import SearchRequest, SessionWindow
from engine.query.cjk import contains_cjk
from tests.parity.strategies import (
    DIACRITIC_WORDS,
    GLUED_WORDS,
    GREEK_WORDS,
    PUNCTUATION,
    AppendEvent,
    Corpus,
    PutWindow,
    corpus_of,
)

#: The first timestamp (epoch ms, 2026-08-28); each message moves the clock a little.
BASE_TIME = 1_788_000_000_000
KEY_RESTS = ("main", "telegram:group:42", "cron:nightly", "discord:dm:ana", "slack:c042",
             "webchat")
MORE_GREEK = ("θάλασσα", "καλημέρα", "Ελλάδα", "συνάντηση", "ΛΌΓΟΣ", "λέξεις", "σοφός")
CREDENTIAL_LINES = (
    "SECRET_KEY = 'abc123'",
    "password: hunter2",
    "export OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234567890",
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature",
)
#: A word the generator never writes (the bench vocabulary's probe-only word).
ABSENT_WORD = "zyzzogeton"
_TOKEN = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class FlatMessage:
    """One message: a line of the flat messages form (`engine.ingest.flat`)."""

    session_key: str
    session_id: str
    message_id: str
    role: str
    timestamp: int
    text: str

    @property
    def agent_id(self) -> str:
        """The `<id>` of the key `agent:<id>:<rest>`."""
        return self.session_key.split(":")[1]

    def to_json(self) -> dict[str, Any]:
        """The flat line's object."""
        return {"sessionKey": self.session_key, "sessionId": self.session_id,
                "messageId": self.message_id, "role": self.role,
                "timestamp": self.timestamp, "text": self.text}


def write_flat_file(messages: Iterable[FlatMessage], path: Path) -> Path:
    """Write `messages` as a flat messages file (one JSON object a line) at `path`."""
    lines = (json.dumps(message.to_json(), ensure_ascii=False) for message in messages)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def agent_slice(messages: Sequence[FlatMessage], agent_id: str) -> list[FlatMessage]:
    """The messages of one agent, in file order."""
    return [message for message in messages if message.agent_id == agent_id]


# ---- texts -------------------------------------------------------------------------------


class TextDrawer:
    """Message texts from one generator; English words weighted by rank (Zipf)."""

    def __init__(self, generator: random.Random) -> None:
        self.generator = generator
        self.english_weights = [1.0 / (rank + 1) for rank in range(len(ENGLISH_WORDS))]

    def english(self, count: int) -> list[str]:
        return self.generator.choices(ENGLISH_WORDS, self.english_weights, k=count)

    def pick(self, words: Sequence[str], count: int = 1) -> list[str]:
        return [self.generator.choice(words) for _ in range(count)]

    def sentence(self, words: list[str]) -> str:
        words = words[:]
        if words and words[0][:1].isalpha() and self.generator.random() < 0.5:
            words[0] = words[0][:1].upper() + words[0][1:]
        ending = self.generator.choice((".", ".", "?", "!", ":", "…", ""))
        separator = self.generator.choice((" ", " ", " ", " ", "  ", "\n", ", "))
        return separator.join(words) + ending

    def latin(self) -> str:
        other = self.generator.choice((FRENCH_WORDS, GERMAN_WORDS, SPANISH_WORDS,
                                       VIETNAMESE_WORDS, DIACRITIC_WORDS))
        words = self.english(self.generator.randint(2, 8)) + self.pick(other, self.generator.randint(1, 3))
        self.generator.shuffle(words)
        return self.sentence(words)

    def greek(self) -> str:
        words = self.pick(GREEK_WORDS + MORE_GREEK, self.generator.randint(2, 5)) + self.english(2)
        self.generator.shuffle(words)
        return self.sentence(words)

    def cjk(self) -> str:
        style = self.generator.randrange(4)
        if style == 0:  # a Chinese run: several words, no spaces, one unicode61 token
            return "".join(self.pick(CHINESE_WORDS, self.generator.randint(3, 6))) + "。"
        if style == 1:  # Chinese words between Latin words, each its own token
            words = self.pick(CHINESE_WORDS, 2) + self.english(3)
            self.generator.shuffle(words)
            return " ".join(words)
        if style == 2:  # Japanese: a run, then a spaced word
            return "".join(self.pick(JAPANESE_WORDS, 3)) + "、" + self.pick(JAPANESE_WORDS)[0] + " " + " ".join(self.english(2))
        return " ".join(self.pick(KOREAN_WORDS, self.generator.randint(2, 4))) + "."

    def glued(self) -> str:
        words = self.english(3) + self.pick(GLUED_WORDS, 2) + self.pick(PUNCTUATION, 1)
        self.generator.shuffle(words)
        return " ".join(words)

    def long(self) -> str:
        vocabulary = self.english(4) + self.pick(FRENCH_WORDS + GREEK_WORDS + CHINESE_WORDS, 2)
        words = [self.generator.choice(vocabulary) for _ in range(self.generator.randint(50, 90))]
        return " ".join(words) + "."

    def message(self) -> str:
        kind = self.generator.choices(
            ("latin", "greek", "cjk", "glued", "long", "blank"), (10, 3, 4, 2, 2, 1))[0]
        if kind == "blank":
            return self.generator.choice(("", "   ", "\n\t ", "\u3000"))
        text = getattr(self, kind)()
        if self.generator.random() < 0.1:
            text = self.generator.choice(("  ", "\n", "\u3000", "\t")) + text + " \n"
        return text


def generate_messages(
    seed: int, agents: Sequence[str], *, credential_agent: str | None = None,
    upper_case_agent: str | None = None, keys_per_agent: tuple[int, int] = (2, 3),
) -> list[FlatMessage]:
    """A corpus for `agents`, in file order (each window's messages together); each agent
    gets a drawn number of keys in the inclusive range `keys_per_agent`; the
    `upper_case_agent` also gets a key with capitals (`agent:<id>:webchat:Ana`)."""
    generator = random.Random(seed)
    drawer = TextDrawer(generator)
    clock = BASE_TIME
    messages: list[FlatMessage] = []
    for agent in agents:
        rests = generator.sample(KEY_RESTS, generator.randint(*keys_per_agent))
        for key_number, rest in enumerate(rests):
            for window_number in range(generator.randint(1, 3)):
                session_id = f"{agent}-k{key_number}-w{window_number}"
                for position in range(generator.randint(8, 16)):
                    clock += generator.choice((0, 0, 1000, 1000, 7000, 60_000))
                    text = drawer.message()
                    if agent == credential_agent and generator.random() < 0.3:
                        text = generator.choice(CREDENTIAL_LINES) + " " + drawer.latin()
                    messages.append(FlatMessage(
                        f"agent:{agent}:{rest}", session_id, f"m{position:03d}",
                        "user" if position % 2 == 0 else "assistant", clock, text))
                clock += 3_600_000  # a reset starts the next window later
    if credential_agent is not None:
        messages.extend(_credential_window(credential_agent, clock))
    if upper_case_agent is not None:
        messages.extend(FlatMessage(f"agent:{upper_case_agent}:webchat:Ana", f"{upper_case_agent}-ana",
                                    f"a{number:03d}", ("user", "assistant")[number % 2],
                                    clock + 60_000 + number * 1000, drawer.latin())
                        for number in range(6))
    return messages


def _credential_window(agent: str, clock: int) -> list[FlatMessage]:
    """One window holding every credential line, so each is present whatever the draw."""
    return [FlatMessage(f"agent:{agent}:vault", f"{agent}-vault", f"c{number:03d}",
                        "assistant", clock + number * 1000, line)
            for number, line in enumerate(CREDENTIAL_LINES)]


# ---- flat corpus <-> parity Corpus ---------------------------------------------------------


def flat_corpus(messages: Sequence[FlatMessage]) -> Corpus:
    """The parity `Corpus` that writes what importing the flat file writes: one transaction;
    a window per new `sessionId` (its key's previous window put again as retained, the
    new one following it with reason `rollover`); each line its message event."""
    operations: list[PutWindow | AppendEvent] = []
    current: dict[str, SessionWindow] = {}
    last_message: dict[str, str] = {}
    for message in messages:
        if message.session_id not in last_message:
            previous = current.get(message.session_key)
            if previous is not None:
                operations.append(PutWindow(replace(previous, current=False)))
            window = SessionWindow(
                message.session_id, message.session_key,
                previous_session_id=previous.session_id if previous else None,
                reason="rollover" if previous else "initial", created_at=float(message.timestamp))
            current[message.session_key] = window
            operations.append(PutWindow(window))
        event = message_event({"messageId": message.message_id, "role": message.role,
                               "text": message.text, "timestamp": message.timestamp},
                              last_message.get(message.session_id))
        operations.append(AppendEvent(message.session_id, event))
        last_message[message.session_id] = message.message_id
    return corpus_of([operations])


def flat_messages(corpus: Corpus) -> list[FlatMessage]:
    """The flat lines of a corpus made only of windows and string-content message events
    (a reproducer's corpus), in append order; anything else is a `TypeError`."""
    keys: dict[str, str] = {}
    messages = []
    for transaction in corpus.transactions:
        for operation in transaction:
            if isinstance(operation, PutWindow):
                keys[operation.window.session_id] = operation.window.session_key
                continue
            event = getattr(operation, "event", None)
            message = event.get("message") if isinstance(event, dict) else None
            if not isinstance(operation, AppendEvent) or not isinstance(message, dict) \
                    or not isinstance(message.get("content"), str):
                raise TypeError(f"not a flat message: {operation!r}")
            stamp = event.get("timestamp", operation.created_at)
            messages.append(FlatMessage(keys[operation.session_id], operation.session_id,
                                        event["id"], message["role"], int(stamp),
                                        message["content"]))
    return messages


# ---- queries -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OracleQuery:
    """One query to ask in every scope: its text, match mode, and why it was drawn."""

    kind: str
    text: str
    match: str = "exact"


def words_of(text: str) -> list[str]:
    """The word-character runs of a text (underscore splits, as in `unicode61`).

    >>> words_of("per-session SECRET_KEY 会议 café")
    ['per', 'session', 'SECRET', 'KEY', '会议', 'café']
    """
    return _TOKEN.findall(text)


def fold(word: str) -> str:
    """Lower case without combining marks (what `remove_diacritics` makes of a word).

    >>> fold("Café"), fold("ΛΌΓΟΣ")
    ('cafe', 'λογοσ')
    """
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def generate_queries(messages: Sequence[FlatMessage], seed: int) -> list[OracleQuery]:
    """Queries from the corpus's own words: common and rare words, pairs, folded and
    re-cased forms, Greek, whole CJK tokens and CJK pieces inside longer runs, glued
    words, prefixes, credentials, an absent word, a quoted word and a blank query."""
    generator = random.Random(seed)
    texts = [message.text for message in messages if message.text.strip()]
    token_lists, frequency, spelled = _vocabulary(texts)
    latin = sorted(word for word in spelled if not contains_cjk(word) and word.isalpha())
    cjk_tokens = sorted({word for tokens in token_lists for word in tokens if contains_cjk(word)})
    queries = [OracleQuery("common", spelled[word]) for word, _ in frequency.most_common(3)]
    rare = [word for word in latin if frequency[word] == 1]
    queries += [OracleQuery("rare", spelled[word]) for word in generator.sample(rare, 4)]
    for tokens in generator.sample([tokens for tokens in token_lists if len(tokens) >= 3], 4):
        first, second = generator.sample(tokens, 2)
        queries.append(OracleQuery("two words", f"{first} {second}"))
    queries.append(OracleQuery("two words apart", " ".join(generator.sample(rare, 2))))
    accented = sorted(word for word in spelled.values() if fold(word) != word.casefold())
    for word in generator.sample(accented, 4):
        queries.append(OracleQuery("folded", fold(word)))
    queries.append(OracleQuery("upper case", generator.choice(accented).upper()))
    greek = sorted(word for word in spelled.values() if any("\u0370" <= char <= "\u03ff" or
                                                            "\u1f00" <= char <= "\u1fff" for char in word))
    for word in generator.sample(greek, 3):
        queries.append(OracleQuery("greek", generator.choice((word.upper(), word.lower(), fold(word)))))
    whole = [word for word in cjk_tokens if len(word) <= 3]
    queries += [OracleQuery("cjk whole token", word) for word in generator.sample(whole, 3)]
    inside = _cjk_pieces_inside_runs(cjk_tokens, set(cjk_tokens))
    queries += [OracleQuery("cjk inside a run", piece) for piece in generator.sample(inside, 3)]
    glued = sorted({word for text in texts for word in GLUED_WORDS if word in text.split()})
    queries += [OracleQuery("glued", word) for word in generator.sample(glued, min(3, len(glued)))]
    long_words = [spelled[word] for word in latin if len(word) >= 7 and frequency[word] >= 2]
    for word in generator.sample(long_words, 2):
        queries.append(OracleQuery("prefix", word[:4], match="prefix"))
    queries.append(OracleQuery("absent", ABSENT_WORD))
    queries.append(OracleQuery("quoted", f'"{spelled[frequency.most_common(1)[0][0]]}"'))
    queries.append(OracleQuery("blank", "   "))
    if any(line in text for text in texts for line in CREDENTIAL_LINES):
        queries += [OracleQuery("credential", "abc123"), OracleQuery("credential", "SECRET_KEY"),
                    OracleQuery("credential", "hunter2")]
    return queries


def agent_queries(messages: Sequence[FlatMessage], agents: Sequence[str], seed: int) -> list[OracleQuery]:
    """For each agent, queries from its own messages (so each agent's scope has hits): its
    most common word, a word it holds once, and two words of one of its messages."""
    generator = random.Random(seed)
    queries = []
    for agent in agents:
        texts = [message.text for message in messages if message.agent_id == agent and message.text.strip()]
        token_lists, frequency, spelled = _vocabulary(texts)
        queries.append(OracleQuery("agent's common", spelled[frequency.most_common(1)[0][0]]))
        once = sorted(word for word, count in frequency.items() if count == 1)
        queries.append(OracleQuery("agent's rare", spelled[generator.choice(once)]))
        tokens = generator.choice([tokens for tokens in token_lists if len(tokens) >= 3])
        queries.append(OracleQuery("agent's two words", " ".join(generator.sample(tokens, 2))))
    return queries


def _vocabulary(texts: Sequence[str]) -> tuple[list[list[str]], Counter[str], dict[str, str]]:
    """Each text's words; how many texts hold each folded word; its first spelling."""
    token_lists = [words_of(text) for text in texts]
    frequency = Counter(fold(word) for tokens in token_lists for word in set(tokens))
    spelled: dict[str, str] = {}
    for tokens in token_lists:
        for word in tokens:
            spelled.setdefault(fold(word), word)
    return token_lists, frequency, spelled


def _cjk_pieces_inside_runs(tokens: Sequence[str], whole: set[str]) -> list[str]:
    """Two-character pieces of long CJK runs that are never a whole token themselves."""
    pieces = {run[start:start + 2] for run in tokens if len(run) >= 6
              for start in range(1, len(run) - 2)}
    return sorted(piece for piece in pieces if piece not in whole and all(map(contains_cjk, piece)))


def scoped_requests(
    query: OracleQuery, agents: Sequence[str], generator: random.Random
) -> list[SearchRequest]:
    """The query in each agent's scope and across every agent (`sessionKeys: []`), each
    with a drawn variation (a limit, a role, newest first); across agents never asks for
    `order: "recent"` (insertion order is per agent database upstream)."""
    variations: list[dict[str, Any]] = [{}, {}, {"limit": 3}, {"limit": 25}, {"limit": 1},
                                        {"role": "user"}, {"order": "recent"}]
    requests = []
    for agent in agents:
        requests.append(SearchRequest(query.text, agent_id=agent, match=query.match,
                                      **generator.choice(variations)))
    across = generator.choice(variations[:-1])
    requests.append(SearchRequest(query.text, session_keys=(), match=query.match, **across))
    return requests
