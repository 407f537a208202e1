"""Title search for the Control UI: words separated by punctuation and whitespace.

Owns: what a word of a title or a query is, how a query matches a title (`TitleQuery`,
`title_matches`), and the literal match of identifier fields (`identifier_matches`).
Must not touch: which sessions are searched (`engine.agent_tools.palette_scope`), transcript
search (the kernel), or ordering (`engine.agent_tools.ui_search`). Pure functions only.

The seed (its "Control UI search" section, behaviour.md §10.3) fixes the behaviour;
OpenClaw has no normaliser to follow, so the rules are designed here:

1. Fold. Query and title are compared after Unicode compatibility caseless folding
   (Unicode §3.13, D146: NFKD of casefold of NFKD of casefold of NFD), written back in
   NFC. So `PER` = `per`, `Straße` = `STRASSE`, `ﬁle` = `file` and fullwidth `ＵＩ` = `UI`,
   and a decomposed `é` equals the composed one. Diacritics stay significant (`cafe` does
   not find "Café"): the seed asks for case-insensitivity only, and OpenClaw's earlier
   rule was a plain lower-case test.
2. Words. A word is a maximal run of letters, marks and numbers (general categories L*,
   M*, N*); every other character separates words: punctuation (`-`, `—`, `_`, `.`,
   `'`, `:`), symbols and emoji, spaces of every kind, controls. Format characters (Cf:
   soft hyphen, zero-width joiners, direction marks) are ignored inside words, except
   ZERO WIDTH SPACE, which separates as its name says. Why categories rather than ICU
   word boundaries: ICU keeps `don't`, `3.14` and `session.title` as one word, but the
   seed wants punctuation to separate words, in the title and the query alike, so that
   `per-session`, `per session` and `PER—SESSION` read the same.
3. Match. Every query word must match some word of the title: the last query word as a
   prefix of it, every other one in full. Order and repetition do not matter (like the
   message search's AND of words). A query word written only in CJK characters
   (`engine.analysis.cjk_script`) matches a title word that contains it anywhere:
   Chinese and Japanese titles have no spaces, so a whole title is often one word, and
   only its first characters could otherwise be found (the same reason the transcript
   search retries CJK terms as substrings).
4. A query without a word (`---`, `  `, `…`) matches nothing: no title, no identifier.
5. Identifiers (session key, sessionId) are matched literally: the whole query, trimmed,
   must occur in the identifier (caseless, without folding punctuation), so
   `agent:main:comm` finds key `agent:main:communication` but `agent main communication`
   does not.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from engine.analysis.cjk_script import is_cjk_character
from engine.model import js_trim

ZERO_WIDTH_SPACE = "\u200b"


def fold(text: str) -> str:
    """Compatibility caseless folding (rule 1 of the module docstring), in NFC.

    >>> fold("PER—Session"), fold("Straße"), fold("ＵＩ"), fold("e\\u0301") == fold("é")
    ('per—session', 'strasse', 'ui', True)
    """
    decomposed = unicodedata.normalize("NFD", text)
    once = unicodedata.normalize("NFKD", decomposed.casefold())
    twice = unicodedata.normalize("NFKD", once.casefold())
    return unicodedata.normalize("NFC", twice)


def _is_word_character(character: str) -> bool:
    return unicodedata.category(character)[0] in "LMN"


@lru_cache(maxsize=4096)
def words_of(text: str) -> tuple[str, ...]:
    """The folded words of `text` (rule 2), in order.

    >>> words_of("Per-session communication controls in UI")
    ('per', 'session', 'communication', 'controls', 'in', 'ui')
    >>> words_of("PER—SESSION   COMMUNICATION"), words_of("work_team: don't")
    (('per', 'session', 'communication'), ('work', 'team', 'don', 't'))
    >>> words_of("co\\u00adoperate a\\u200bb 会议纪要"), words_of("--- …")
    (('cooperate', 'a', 'b', '会议纪要'), ())
    """
    words: list[str] = []
    current: list[str] = []
    for character in fold(text):
        if _is_word_character(character):
            current.append(character)
        elif unicodedata.category(character) == "Cf" and character != ZERO_WIDTH_SPACE:
            continue
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    return tuple(words)


def _all_cjk(word: str) -> bool:
    return all(is_cjk_character(character) for character in word)


@dataclass(frozen=True, slots=True)
class TitleQuery:
    """A palette query, read once: its folded words and its trimmed, folded literal text
    (for identifiers)."""

    words: tuple[str, ...]
    literal: str

    @classmethod
    def parse(cls, query: str) -> TitleQuery:
        """Read a query.

        >>> TitleQuery.parse("  per session communi ")
        TitleQuery(words=('per', 'session', 'communi'), literal='per session communi')
        >>> TitleQuery.parse("Agent:Main:X").literal
        'agent:main:x'
        """
        trimmed = js_trim(query)
        return cls(words_of(trimmed), trimmed.casefold())

    @property
    def empty(self) -> bool:
        """Whether the query has no word, so that it matches nothing (rule 4)."""
        return not self.words


def word_matches(query_word: str, title_word: str, *, last: bool) -> bool:
    """Whether one query word matches one title word (rule 3).

    >>> word_matches("communi", "communication", last=True)
    True
    >>> word_matches("communi", "communication", last=False), word_matches("per", "periodic", last=False)
    (False, False)
    >>> word_matches("纪要", "会议纪要", last=False)
    True
    """
    if query_word == title_word:
        return True
    if _all_cjk(query_word):
        return query_word in title_word
    return last and title_word.startswith(query_word)


def title_matches(query: TitleQuery, title: str | None) -> bool:
    """Whether every query word matches a word of `title` (rules 3 and 4).

    >>> title = "Per-session communication controls in UI"
    >>> [title_matches(TitleQuery.parse(text), title) for text in (
    ...     "per session communi", "per-session communication controls",
    ...     "PER—SESSION   COMMUNICATION", "per session missing", "---", "periodic")]
    [True, True, True, False, False, False]
    >>> title_matches(TitleQuery.parse("per session communi"),
    ...               "Periodic sessions communication controls in UI")
    False
    """
    if query.empty or not title:
        return False
    title_words = words_of(title)
    last = len(query.words) - 1
    return all(
        any(word_matches(word, title_word, last=position == last) for title_word in title_words)
        for position, word in enumerate(query.words)
    )


def identifier_matches(query: TitleQuery, identifiers: Iterable[str | None]) -> bool:
    """Whether the query's literal text occurs in one of `identifiers` (rule 5).

    >>> key = "agent:main:communication"
    >>> identifier_matches(TitleQuery.parse("agent main communication"), [key])
    False
    >>> identifier_matches(TitleQuery.parse("Agent:Main:Comm"), [key])
    True
    >>> identifier_matches(TitleQuery.parse(":::"), [key])  # no word: matches nothing
    False
    """
    if query.empty:
        return False
    return any(identifier is not None and query.literal in identifier.casefold()
               for identifier in identifiers)
