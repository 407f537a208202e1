"""Hypothesis strategies shared by the parity tests: random multilingual corpora and requests.

Owns: the *corpus* value (a list of write transactions, each a list of operations on the
`BackendTransaction` protocol), `load_corpus` (replays one corpus into any backend), the
corpus strategy and the query / request strategies drawn from a corpus. Must not touch:
engine internals; a corpus reaches a backend only through `transaction()`, `put_window`,
`append_event` and `delete_session`.

What a corpus contains (each item is something the differential tests must see handled
identically by every backend):

* several agents in one store (so several partitions: each agent's own, `global` and
  `unknown` in `main`'s), including `work_team` and `workxteam` (GLOB must keep `_`
  literal), the reserved keys `global` and `unknown`, and keys with more `:` parts;
* physical resets: a key owns a chain of windows (`previous_session_id`, reason `reset`,
  `rollover`, ...); when a new window starts, the previous one is put again with
  `current=False`; retained windows may be `archived`;
* inside a window: a `session` header, chained messages (explicit `parentId`, or no
  `parentId` key: "continue the leaf"), new branches (a parent that is not the leaf),
  rewinds and branch switches (`leaf` events, `targetId` null included), logical resets and
  compactions with `firstKeptEntryId`, side appends (`appendMode: "side"`), opaque events
  (`model_change`, `custom`);
* messages that must not be indexed: tool results, system messages, thinking / image /
  toolCall blocks, blank text, a blank `content` string hiding a `text` field;
* timestamps as numbers (often repeated, to exercise the tie-breaks), ISO strings,
  unparsable strings and none (the store's `created_at` is the fallback);
* message ids that repeat across windows, carry spaces (trimmed) or non-ASCII letters
  (UTF-8 byte collation);
* text: ASCII with punctuation, diacritics (`Café`, `naïve`), Greek with final sigma, CJK
  runs (Han, Kana, Hangul), emoji (ZWJ sequences and modifiers), lone surrogates, NUL
  and other controls, words glued by `_ - . '`, sentence starts after `.` and `:`, and
  long messages (more than 48 tokens, so the snippet window moves).

Everything is drawn by hypothesis, so failures shrink; the tests pin the seed
(`derandomize=True`) and keep example counts small.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from engine.model import SearchRequest, SessionWindow, owner_agent_id

#: Examples per parity run; raise it locally for a deeper search (PARITY_EXAMPLES=2000).
PARITY_EXAMPLES = int(os.environ.get("PARITY_EXAMPLES", "80"))

#: Pinned seed, no example database, modest counts: the same examples on every run.
PARITY_SETTINGS = settings(
    max_examples=PARITY_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
)

# ---- the corpus value -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PutWindow:
    """`put_window(window)`."""

    window: SessionWindow


@dataclass(frozen=True, slots=True)
class AppendEvent:
    """`append_event(session_id, event, created_at)`."""

    session_id: str
    event: dict[str, Any] = field(compare=False)
    created_at: float = 0.0


@dataclass(frozen=True, slots=True)
class DeleteSession:
    """`delete_session(session_key)`."""

    session_key: str


Operation = PutWindow | AppendEvent | DeleteSession


@dataclass(frozen=True, slots=True)
class Corpus:
    """Write transactions in commit order, plus what the query strategies draw from."""

    transactions: tuple[tuple[Operation, ...], ...]
    texts: tuple[str, ...] = ()
    session_keys: tuple[str, ...] = ()
    session_ids: tuple[str, ...] = ()
    agent_ids: tuple[str, ...] = ()

    def describe(self) -> str:
        """A readable listing (hypothesis prints it when a test fails)."""
        lines = []
        for number, transaction in enumerate(self.transactions):
            for operation in transaction:
                lines.append(f"tx{number}: {operation!r}"
                             + (f" {operation.event!r}" if isinstance(operation, AppendEvent) else ""))
        return "\n".join(lines)


def load_corpus(backend: Any, corpus: Corpus) -> None:
    """Replay every transaction of `corpus` into `backend` (any `Backend`)."""
    for transaction_operations in corpus.transactions:
        with backend.transaction() as transaction:
            for operation in transaction_operations:
                if isinstance(operation, PutWindow):
                    transaction.put_window(operation.window)
                elif isinstance(operation, AppendEvent):
                    transaction.append_event(operation.session_id, operation.event,
                                             operation.created_at)
                else:
                    transaction.delete_session(operation.session_key)


def corpus_of(transactions: Sequence[Sequence[Operation]]) -> Corpus:
    """A `Corpus` from hand-written transactions (regression tests), with its draw lists."""
    texts: list[str] = []
    keys: list[str] = []
    ids: list[str] = []
    for transaction in transactions:
        for operation in transaction:
            if isinstance(operation, PutWindow):
                keys.append(operation.window.session_key)
                ids.append(operation.window.session_id)
            elif isinstance(operation, AppendEvent):
                texts.extend(_texts_of(operation.event))
    agents = [key.split(":")[1] for key in keys if key.startswith("agent:") and key.count(":") >= 2]
    return Corpus(
        tuple(tuple(transaction) for transaction in transactions),
        tuple(texts), tuple(dict.fromkeys(keys)), tuple(dict.fromkeys(ids)),
        tuple(dict.fromkeys(agents)),
    )


def _texts_of(event: dict[str, Any]) -> list[str]:
    message = event.get("message")
    if not isinstance(message, dict):
        return []
    found = []
    if isinstance(message.get("content"), str):
        found.append(message["content"])
    if isinstance(message.get("text"), str):
        found.append(message["text"])
    if isinstance(message.get("content"), list):
        found.extend(block.get("text") for block in message["content"]
                     if isinstance(block, dict) and isinstance(block.get("text"), str))
    return found


# ---- vocabulary -------------------------------------------------------------------------

#: Words drawn often, so that many messages share them (ties, truncation, bm25 idf < 0).
COMMON_WORDS = ("saffron", "the", "deploy", "会议", "Café", "saffron.", "THE:")
ASCII_WORDS = (
    "saffron", "ballast", "deploy", "deployment", "communication", "commun", "session",
    "per", "the", "a", "x", "y", "ab", "abc", "OR", "or", "NOT", "NEAR", "and", "fix",
    "Friday", "needle", "payload", "common", "alpha", "beta", "gamma", "42", "3", "2026",
)
GLUED_WORDS = (
    "per-session", "don't", "a.b", "work_team", "e-mail", "v1.2.3", "x_y_z", "it's",
    "foo/bar", "key=value", "C++", "#tag", "@user", "$HOME", "50%", "done!",
)
DIACRITIC_WORDS = ("café", "Café", "CAFE", "naïve", "coöperate", "façade", "épée", "résumé",
                   "crème", "Ångström", "Łódź", "straße", "İstanbul", "ǅemal")
GREEK_WORDS = ("ΟΣ", "ος", "σοφία", "Αθήνα", "λόγος", "ΣΟΦΙΑ", "ἄνθρωπος")
CJK_RUNS = (
    "明天下午三点开项目评审会议讨论排期", "会议", "東京都", "ひらがなテキスト", "カタカナ",
    "한국어문장", "日本語の文章です", "中文", "漢字かな交じり文", "서울특별시",
)
EMOJI = ("🙂", "🚀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "❤️", "🧪")
ODD_PIECES = ("\ud800", "\udfff", "\x00", "\x1f", "\u200b", "\u00ad", "\ufeff", "\ue000",
              "\U000f0000", "①", "Ⅻ", "½", "𝔘𝔫𝔦", "𐐀", "ﬁ", "ǈ")
PUNCTUATION = (".", ":", "...", "—", "-", '"', "'", "*", "(", ")", ",", "!", "?", "…", "«»")
SEPARATORS = (" ", " ", " ", " ", "  ", "\n", "\t", ", ", ". ", ": ", " — ", "\u3000",
              " .\n", ":\t", "\u00a0")

KEY_POOL = (
    "agent:main:main", "agent:main:other", "agent:main:telegram:group:42",
    "agent:work_team:main", "agent:workxteam:main", "agent:owner:main", "agent:ops:cron:nightly",
    "global", "unknown",
)
REASONS = ("reset", "rollover", "compaction", "recovery", "switch", "fork", "rewind")
ID_PREFIXES = ("m", "m", "m", "M", "é", "msg-", "Z", " m")
TIMESTAMP_POOL = (0, 1, 5, 10, 10, 20, 1700000000000, 1700000000000, 1.5, -3)
ISO_POOL = ("2026-11-30T07:44:48Z", "2026-11-30T07:44:48.500+01:00", "2026-11-30",
            "Mon, 30 Nov 2026 07:44:48 GMT", "not a date", "")


def _word_pools() -> st.SearchStrategy[str]:
    common = st.sampled_from(COMMON_WORDS)
    return st.one_of(
        common,
        common,
        common,
        st.sampled_from(ASCII_WORDS),
        st.sampled_from(ASCII_WORDS),
        st.sampled_from(GLUED_WORDS),
        st.sampled_from(DIACRITIC_WORDS),
        st.sampled_from(GREEK_WORDS),
        st.sampled_from(CJK_RUNS),
        st.sampled_from(EMOJI),
        st.sampled_from(ODD_PIECES),
        st.sampled_from(PUNCTUATION),
        st.sampled_from(ASCII_WORDS).map(lambda word: word + "会议"),
        st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x24F), min_size=1, max_size=6),
    )


@st.composite
def message_texts(draw: st.DrawFn) -> str:
    """A message text: short (1–8 words) or long (49–130 words, sentence marks included)."""
    long = draw(st.integers(0, 5)) == 0
    count = draw(st.integers(49, 130)) if long else draw(st.integers(1, 8))
    if long:
        # Long texts repeat a small drawn vocabulary so hits recur inside the message.
        vocabulary = draw(st.lists(_word_pools(), min_size=2, max_size=8))
        words = [vocabulary[draw(st.integers(0, len(vocabulary) - 1))] for _ in range(count)]
    else:
        words = draw(st.lists(_word_pools(), min_size=count, max_size=count))
        if draw(st.sampled_from((False, True, True))):
            # Many short messages share a common word: several rows per query, ties, cuts.
            words.insert(draw(st.integers(0, len(words))), draw(st.sampled_from(COMMON_WORDS)))
    pieces = []
    for index, word in enumerate(words):
        if index:
            pieces.append(draw(st.sampled_from(SEPARATORS)))
        pieces.append(word)
    text = "".join(pieces)
    if draw(st.integers(0, 6)) == 0:
        text = draw(st.sampled_from(("  ", "\n", "\u3000", ". ", ": "))) + text + " "
    return text


# ---- one window's events ----------------------------------------------------------------


@st.composite
def message_payload(draw: st.DrawFn) -> tuple[dict[str, Any], list[str]]:
    """A `message` object (role + content) and the texts it carries (for query drawing)."""
    role = draw(st.sampled_from(("user", "assistant") * 4 + ("toolResult", "system")))
    text = draw(message_texts())
    shape = draw(st.sampled_from(("string",) * 6 + ("blocks",) * 2 + ("text_field", "blank")))
    if shape == "string":
        return {"role": role, "content": text}, [text]
    if shape == "text_field":
        return {"role": role, "text": text}, [text]
    if shape == "blank":
        # A blank content string does not fall through to `text`: nothing is indexed.
        return {"role": role, "content": "  ", "text": text}, []
    blocks: list[dict[str, Any]] = []
    texts = [text]
    for kind in draw(st.lists(st.sampled_from(
            ("text", "text", "input_text", "output_text", "thinking", "image", "toolCall", "blank")),
            min_size=1, max_size=4)):
        if kind in ("text", "input_text", "output_text"):
            piece = draw(message_texts())
            blocks.append({"type": kind, "text": piece})
            texts.append(piece)
        elif kind == "thinking":
            blocks.append({"type": "thinking", "thinking": "hidden reasoning saffron " + text})
        elif kind == "image":
            blocks.append({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
        elif kind == "toolCall":
            blocks.append({"type": "toolCall", "id": "call1", "name": "search",
                           "arguments": {"query": text}})
        else:
            blocks.append({"type": "text", "text": " \n "})
    blocks.append({"type": "text", "text": text})
    return {"role": role, "content": blocks}, texts


@st.composite
def window_events(
    draw: st.DrawFn, session_id: str, id_prefix: str | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """The events of one window (tree entries, rewinds, resets, side appends) and its texts.

    Entry ids are `<prefix><n>`; pass `id_prefix` to keep them apart from earlier events."""
    events: list[dict[str, Any]] = []
    texts: list[str] = []
    entries: list[str] = []  # raw ids of tree entries, in order
    messages: list[str] = []
    leaf: str | None = None
    prefix = id_prefix if id_prefix is not None else draw(st.sampled_from(ID_PREFIXES))
    if draw(st.integers(0, 3)) == 0:
        events.append({"type": "session", "version": 3, "id": f"uuid-{session_id}",
                       "timestamp": "2026-11-30T07:00:00Z", "cwd": "/work"})
    for counter in range(1, draw(st.integers(2, 10)) + 1):
        kind = draw(st.sampled_from(("message",) * 8 + ("side", "leaf", "reset", "compaction", "other", "branch")))
        if kind in ("message", "side", "branch"):
            entry_id = f"{prefix}{counter}"
            payload, payload_texts = draw(message_payload())
            event: dict[str, Any] = {"type": "message", "id": entry_id}
            if kind == "branch" and entries:
                event["parentId"] = draw(st.sampled_from(entries))
            elif kind == "side" and entries:
                event["parentId"] = draw(st.sampled_from(entries))
                event["appendMode"] = "side"
            elif draw(st.integers(0, 5)) == 0:
                pass  # no parentId key: continues the current leaf
            else:
                event["parentId"] = leaf
            stamp = draw(st.sampled_from(("pool", "pool", "pool", "iso", "none")))
            if stamp == "pool":
                event["timestamp"] = draw(st.sampled_from(TIMESTAMP_POOL))
            elif stamp == "iso":
                event["timestamp"] = draw(st.sampled_from(ISO_POOL))
            event["message"] = payload
            events.append(event)
            texts.extend(payload_texts)
            entries.append(entry_id)
            messages.append(entry_id)
            if event.get("appendMode") != "side":
                leaf = entry_id
        elif kind == "leaf" and entries:
            target = draw(st.one_of(st.sampled_from(entries), st.none()))
            events.append({"type": "leaf", "id": f"{prefix}leaf{counter}", "parentId": leaf, "targetId": target})
            leaf = target
        elif kind in ("reset", "compaction") and messages:
            entry_id = f"{prefix}{kind}{counter}"
            event = {"type": kind, "id": entry_id, "parentId": leaf,
                     "firstKeptEntryId": draw(st.sampled_from(messages))}
            if kind == "compaction":
                event.update(summary="compacted saffron summary", tokensBefore=1234)
            events.append(event)
            entries.append(entry_id)
            leaf = entry_id
        elif kind == "other":
            entry_id = f"{prefix}other{counter}"
            event_type = draw(st.sampled_from(("model_change", "custom", "model-snapshot-opaque")))
            events.append({"type": event_type, "id": entry_id, "parentId": leaf,
                           "data": {"model": "sonnet-4.6 saffron"}})
            entries.append(entry_id)
            if event_type != "model-snapshot-opaque":
                leaf = entry_id
    return events, texts


# ---- whole corpora ----------------------------------------------------------------------


@st.composite
def corpora(draw: st.DrawFn, max_keys: int = 4) -> Corpus:
    """Several keys, each a chain of 1–3 windows, their events interleaved in transactions."""
    keys = draw(st.lists(st.sampled_from(KEY_POOL), min_size=1, max_size=max_keys, unique=True))
    if len(keys) < max_keys and draw(st.booleans()):
        # Most corpora span several partitions: add a key of another agent when all the
        # keys drawn belong to one.
        owners = {owner_agent_id(key) for key in keys}
        others = [key for key in KEY_POOL if owner_agent_id(key) not in owners]
        if len(owners) == 1 and others:
            keys.append(draw(st.sampled_from(others)))
    # Per key: a list of transactions (each a list of operations), in the key's own order.
    streams: list[list[list[Operation]]] = []
    all_texts: list[str] = []
    session_ids: list[str] = []
    clock = 1000.0
    final_windows: dict[str, SessionWindow] = {}  # each window as its last put leaves it
    for key_number, key in enumerate(keys):
        stream: list[list[Operation]] = []
        previous: SessionWindow | None = None
        for window_number in range(draw(st.integers(1, 3))):
            session_id = f"s{key_number}-{window_number}"
            session_ids.append(session_id)
            window = SessionWindow(
                session_id, key,
                previous_session_id=previous.session_id if previous else None,
                reason=draw(st.sampled_from(REASONS)) if previous else "initial",
                current=True,
            )
            opening: list[Operation] = []
            if previous is not None:
                retired = replace(previous, current=False, archived=draw(st.integers(0, 7)) == 0)
                opening.append(PutWindow(retired))
                final_windows[retired.session_id] = retired
            final_windows[session_id] = window
            opening.append(PutWindow(window))
            events, texts = draw(window_events(session_id))
            all_texts.extend(texts)
            # The opening transaction may already carry the first events.
            batch = draw(st.integers(0, 3))
            position = 0
            for event in events[:batch]:
                clock += draw(st.sampled_from((0.0, 1.0, 7.5)))
                opening.append(AppendEvent(session_id, event, clock))
            position = batch
            stream.append(opening)
            while position < len(events):
                size = draw(st.integers(1, 3))
                group: list[Operation] = []
                for event in events[position:position + size]:
                    clock += draw(st.sampled_from((0.0, 1.0, 7.5)))
                    group.append(AppendEvent(session_id, event, clock))
                stream.append(group)
                position += size
            previous = window
        streams.append(stream)
    # Interleave the keys' transaction streams (each stream keeps its own order).
    transactions: list[tuple[Operation, ...]] = []
    cursors = [0] * len(streams)
    while any(cursor < len(stream) for cursor, stream in zip(cursors, streams, strict=True)):
        open_streams = [index for index, stream in enumerate(streams) if cursors[index] < len(stream)]
        chosen = open_streams[draw(st.integers(0, len(open_streams) - 1))]
        transactions.append(tuple(streams[chosen][cursors[chosen]]))
        cursors[chosen] += 1
    if draw(st.sampled_from((False,) * 4 + (True,))):
        # A later metadata change: a cold window restored, a window archived, or a window
        # moved under another key of its agent's partition (the scope must follow the
        # window's current key; a window never moves to another agent's partition).
        chosen = final_windows[draw(st.sampled_from(sorted(final_windows)))]
        change = draw(st.sampled_from(("restore", "archive", "move")))
        if change == "move":
            moved_to = draw(st.sampled_from([key for key in KEY_POOL if owner_agent_id(key)
                                             == owner_agent_id(chosen.session_key)]))
            if moved_to not in keys:
                keys.append(moved_to)
            transactions.append((PutWindow(replace(chosen, session_key=moved_to)),))
        else:
            transactions.append((PutWindow(replace(chosen, archived=change == "archive")),))
    if len(keys) > 1 and draw(st.integers(0, 5)) == 0:
        transactions.append((DeleteSession(draw(st.sampled_from(keys))),))
    agents = sorted({key.split(":")[1] for key in keys if key.startswith("agent:")})
    return Corpus(tuple(transactions), tuple(all_texts), tuple(keys), tuple(session_ids), tuple(agents))


# ---- queries ----------------------------------------------------------------------------

PUNCTUATION_TERMS = ('"', "-", "---", "*", ".", "…", '""', "''", ":", "()", "^", "-.-")
INNER_PUNCTUATION_TERMS = ("per-session", "don't", "a.b", "work_team", "e-mail", "v1.2", "it's",
                           "foo/bar", "Café-crème", "会议-saffron")
QUOTE_TERMS = ('"', '""x""', '"saffron"', 'say"hi', '"OR"', '""')
OPERATOR_TERMS = ("OR", "NOT", "NEAR", "AND", "NEAR(a", "b)", "saffron*", "^saffron", "text:saffron",
                  "col:x", "+", "{a}")
SHORT_TERMS = ("a", "x", "ab", "abc", "é", "σ", "ος", "の", "会", "会议", "한", "42", "3", "🙂", "y", "OR")
QUERY_SEPARATORS = (" ", " ", "  ", "\t", "\u3000", "\u00a0", "\n")


def _corpus_words(corpus: Corpus) -> list[str]:
    words = [word for text in corpus.texts for word in text.split()]
    return words or list(ASCII_WORDS)


def _cjk_runs(corpus: Corpus) -> list[str]:
    runs: list[str] = []
    for text in corpus.texts:
        run = ""
        for character in text + " ":
            if _is_plain_cjk(character):
                run += character
            else:
                if run:
                    runs.append(run)
                run = ""
    return runs or list(CJK_RUNS)


def _is_plain_cjk(character: str) -> bool:
    """Han, Hiragana, Katakana and Hangul syllables: CJK under any reasonable definition."""
    code = ord(character)
    return 0x4E00 <= code <= 0x9FFF or 0x3040 <= code <= 0x30FF or 0xAC00 <= code <= 0xD7AF


@st.composite
def cut(draw: st.DrawFn, text: str, low: int, high: int) -> str:
    """A substring of `text` of `low`..`high` code points (all of it when shorter)."""
    if len(text) <= low:
        return text
    size = draw(st.integers(low, min(high, len(text))))
    start = draw(st.integers(0, len(text) - size))
    return text[start:start + size]


def query_terms(corpus: Corpus) -> st.SearchStrategy[str]:
    """One query term of any of the kinds the issue names, drawn against `corpus`.

    Corpus words and their prefixes are weighted up so that most requests find rows."""
    words = _corpus_words(corpus)
    tokens = _corpus_tokens(corpus)
    runs = _cjk_runs(corpus)
    texts = list(corpus.texts) or list(ASCII_WORDS)
    corpus_word = st.sampled_from(words)
    corpus_token = st.sampled_from(tokens)
    return st.one_of(
        st.sampled_from(COMMON_WORDS),                                         # shared by many rows
        st.sampled_from(COMMON_WORDS),
        corpus_token,                                                          # clean corpus words
        corpus_word,                                                           # words as written
        corpus_token,
        corpus_token.map(lambda word: word[: max(1, len(word) // 2)]),        # prefixes
        corpus_word.flatmap(lambda word: cut(word, 1, 6)),                     # pieces of words
        st.sampled_from(texts).flatmap(lambda text: cut(text, 2, 12)),        # spans with punctuation
        st.sampled_from(runs).flatmap(lambda run: cut(run, 1, 4)),             # CJK substrings
        st.sampled_from(runs).flatmap(lambda run: cut(run, 1, 4)),
        st.sampled_from(SHORT_TERMS),                                          # 1-3 characters
        st.sampled_from(INNER_PUNCTUATION_TERMS),
        st.sampled_from(PUNCTUATION_TERMS),
        st.sampled_from(QUOTE_TERMS),
        st.sampled_from(OPERATOR_TERMS),
        st.sampled_from(("zzzz", "qqq", "saffronx")),                         # absent words
    ).filter(lambda term: term.strip() != "")


def _corpus_tokens(corpus: Corpus) -> list[str]:
    """Runs of word characters in the corpus (`\\w+`): words without their punctuation."""
    tokens = [token for text in corpus.texts for token in re.findall(r"\w+", text)]
    return tokens or list(ASCII_WORDS)


@st.composite
def queries(draw: st.DrawFn, corpus: Corpus) -> str:
    """1–3 terms joined by JavaScript whitespace, sometimes padded; rarely blank (an error)."""
    shape = draw(st.sampled_from(
        ("one",) * 12 + ("together",) * 6 + ("two",) * 3 + ("three",) * 2 + ("blank",) * 2
        + ("cjk",) * 3))
    if shape == "blank":
        return draw(st.sampled_from(("   ", "\u3000", "\t\n")))
    if shape == "cjk":
        # A piece cut out of a CJK run: never a whole token, so only the retry can find it.
        return draw(st.sampled_from(_cjk_runs(corpus)).flatmap(lambda run: cut(run, 1, 4)))
    if shape == "together":
        # Two or three words of the same message, so that the AND can be satisfied.
        text = draw(st.sampled_from(list(corpus.texts) or [" ".join(ASCII_WORDS)]))
        words = re.findall(r"\w+", text) or ASCII_WORDS
        terms = draw(st.lists(st.sampled_from(words), min_size=2, max_size=3))
    else:
        count = {"one": 1, "two": 2, "three": 3}[shape]
        terms = draw(st.lists(query_terms(corpus), min_size=count, max_size=count))
    pieces = [terms[0]]
    for term in terms[1:]:
        pieces.append(draw(st.sampled_from(QUERY_SEPARATORS)))
        pieces.append(term)
    query = "".join(pieces)
    if draw(st.sampled_from((False,) * 7 + (True,))):
        query = " " + query + "\u3000"
    return query


@st.composite
def requests(draw: st.DrawFn, corpus: Corpus) -> SearchRequest:
    """A store-level request: query, scope (agent, explicit keys of one or several agents'
    partitions, [] for every partition, sessionId), role, order, match mode and a limit of
    1..30 (the policy clamps it to 25)."""
    agents = list(corpus.agent_ids) or ["main"]
    keys = list(corpus.session_keys) or ["agent:main:main"]
    scope = draw(st.sampled_from(("agent",) * 4 + ("all",) * 4 + ("keys",) * 3
                                 + ("agents' keys",) * 2 + ("none", "odd")))
    session_keys: tuple[str, ...] | None = None
    agent_id: str | None = draw(st.sampled_from(agents))
    if scope == "all":
        session_keys = ()
    elif scope == "keys":
        session_keys = tuple(draw(st.lists(st.sampled_from(keys), min_size=1, max_size=3, unique=True)))
    elif scope == "agents' keys":
        # One key of every partition the corpus has, in a drawn order.
        by_owner = {owner_agent_id(key): key for key in keys}
        session_keys = tuple(draw(st.permutations(sorted(by_owner.values()))))
    elif scope == "none":
        agent_id = None  # the default agent, `main`
    elif scope == "odd":
        agent_id, session_keys = draw(st.sampled_from((
            ("nobody", None), ("work", None), ("main", ("agent:missing:main", "global")),
            ("main", ("agent:main:main",)), ("..", None), ("", None), ("a/b", None),
            ("main", ("agent:..:main", "unknown")))))
    session_id = None
    if draw(st.sampled_from((False,) * 5 + (True,))):
        session_id = draw(st.sampled_from(list(corpus.session_ids) + ["missing-window"]))
    return SearchRequest(
        query=draw(queries(corpus)),
        agent_id=agent_id,
        limit=draw(st.one_of(st.none(), st.integers(1, 30), st.sampled_from((1, 2, 3)),
                             st.just(1))),
        session_keys=session_keys,
        session_id=session_id,
        role=draw(st.sampled_from((None,) * 4 + ("user", "assistant"))),
        match=draw(st.sampled_from(("exact", "prefix"))),
        order=draw(st.sampled_from(("relevance", "relevance", "recent"))),
    )


@st.composite
def corpus_and_requests(draw: st.DrawFn, max_requests: int = 8) -> tuple[Corpus, list[SearchRequest]]:
    """A corpus and several requests drawn against it."""
    corpus = draw(corpora())
    return corpus, draw(st.lists(requests(corpus), min_size=1, max_size=max_requests))


# ---- what a run exercised ----------------------------------------------------------------

#: Outcome kinds every default parity run must have compared at least once, so that a
#: change to the strategies cannot quietly make the differential tests vacuous.
REQUIRED_COVERAGE = (
    "hits", "several windows", "truncated", "excerpt cut", "substring retry",
    "archived excluded", "rejected",
)


def tally_outcome(tally: Counter[str], outcome: Any, *, prefix: str = "") -> None:
    """Count what one compared outcome (a `SearchResult` or an error tuple) exercised."""
    tally[prefix + "compared"] += 1
    if not hasattr(outcome, "hits"):
        tally[prefix + "rejected"] += 1
        return
    kinds = {
        "hits": bool(outcome.hits),
        "several windows": len({hit.session_id for hit in outcome.hits}) > 1,
        "truncated": outcome.truncated,
        "indexing": outcome.indexing,
        "archived excluded": outcome.archived_transcripts_excluded > 0,
        "excerpt cut": any(" … " in hit.snippet for hit in outcome.hits),
        "substring retry": any(hit.score == 0.0 for hit in outcome.hits),
        "several partitions": len({owner_agent_id(hit.session_key) for hit in outcome.hits}) > 1,
    }
    for kind, present in kinds.items():
        if present:
            tally[prefix + kind] += 1
