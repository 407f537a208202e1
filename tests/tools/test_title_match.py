"""The Control UI's title normaliser (behaviour.md §10.3, the seed's "Control UI search").

The seed's cases, the word rules the module docstring decides, and two properties: a
query made of a title's own words, with any separators and any case, finds the title;
the same query with one word the title lacks does not.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine.agent_tools.title_match import TitleQuery, identifier_matches, title_matches, words_of

TITLE = "Per-session communication controls in UI"


@pytest.mark.parametrize("query", [
    "per session communi", "per-session communication controls",
    "PER—SESSION   COMMUNICATION", "per.session/communication", "ui per", "  in  ",
    "controls, communication", "Ｐｅｒ session",
])
def test_the_seeds_queries_find_the_title(query: str) -> None:
    assert title_matches(TitleQuery.parse(query), TITLE)


@pytest.mark.parametrize("query", [
    "per session missing", "---", " — … ", "", "periodic", "per sess communication",
    "persession", "communi per",  # only the last word is a prefix
])
def test_queries_that_do_not_find_the_title(query: str) -> None:
    assert not title_matches(TitleQuery.parse(query), TITLE)


def test_the_message_search_neighbours_are_not_title_matches_either() -> None:
    query = TitleQuery.parse("per session communi")
    assert not title_matches(query, "Periodic sessions communication controls in UI")
    assert not title_matches(query, "Session communication controls in UI")


def test_identifiers_match_literally() -> None:
    key = "agent:main:communication"
    assert not identifier_matches(TitleQuery.parse("agent main communication"), [key])
    assert identifier_matches(TitleQuery.parse("agent:main:communication"), [key])
    assert identifier_matches(TitleQuery.parse("  AGENT:MAIN:COMM "), [key])
    assert identifier_matches(TitleQuery.parse("b8e4c1"), ["0b6f1c9e-3a52-4c1e-9d7a-2f5b8e4c1a90"])
    assert not identifier_matches(TitleQuery.parse("---"), ["agent:main:a---b"])
    assert not identifier_matches(TitleQuery.parse("main"), [None])


def test_words_split_on_every_kind_of_separator_and_ignore_format_characters() -> None:
    assert words_of("a-b—c_d.e:f'g\u00a0h\u3000i😀j\u200bk") == tuple("abcdefghijk")
    assert words_of("co\u00adop\u200dera\u200ete") == ("cooperate",)
    assert words_of("Café CAFÉ cafe\u0301") == ("café",) * 3
    assert words_of("") == ()


def test_cjk_query_words_match_inside_a_title_word() -> None:
    assert title_matches(TitleQuery.parse("纪要"), "会议纪要 2026")
    assert title_matches(TitleQuery.parse("メモ 2026"), "会議のメモ 2026")
    assert not title_matches(TitleQuery.parse("纪律"), "会议纪要")


# ----- properties ---------------------------------------------------------------------

#: Letters and digits of several scripts; the Turkic dotted and dotless i are left out
#: on purpose: `ı`.upper() is `I`, whose case fold is `i`, so random case cannot keep
#: them apart, in this normaliser or in Unicode's own caseless matching.
WORD_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEZ0123456789éßøÆΣσςДжЖ٣会议アイ한국"
SEPARATORS = " -—_.,:;/\\|()[]{}'\"!?…\t\n\u3000·•😀\u200b"

words = st.text(alphabet=WORD_ALPHABET, min_size=1, max_size=8)
separators = st.text(alphabet=SEPARATORS, min_size=1, max_size=3)


def random_case(data: st.DataObject, word: str) -> str:
    flags = data.draw(st.lists(st.booleans(), min_size=len(word), max_size=len(word)))
    return "".join(character.upper() if flag else character.lower()
                   for character, flag in zip(word, flags))


def joined(data: st.DataObject, parts: list[str]) -> str:
    text = data.draw(st.sampled_from(["", " ", "—"]))
    for part in parts:
        text += part + data.draw(separators)
    return text


@settings(max_examples=300, deadline=None)
@given(st.data(), st.lists(words, min_size=1, max_size=6))
def test_a_query_of_the_titles_own_words_finds_it(data: st.DataObject,
                                                  title_parts: list[str]) -> None:
    title = joined(data, title_parts)
    chosen = data.draw(st.lists(st.sampled_from(title_parts), min_size=1, max_size=6))
    query = joined(data, [random_case(data, word) for word in chosen])
    assert title_matches(TitleQuery.parse(query), title), (query, title)


@settings(max_examples=300, deadline=None)
@given(st.data(), st.lists(words, min_size=1, max_size=6), words)
def test_a_query_with_a_word_the_title_lacks_does_not_find_it(
        data: st.DataObject, title_parts: list[str], stranger: str) -> None:
    title = joined(data, title_parts)
    title_words = words_of(title)
    folded = words_of(stranger)[0]
    assume(not any(word.startswith(folded) or folded in word for word in title_words))
    chosen = data.draw(st.lists(st.sampled_from(title_parts), max_size=5))
    position = data.draw(st.integers(0, len(chosen)))
    chosen.insert(position, stranger)
    query = joined(data, [random_case(data, word) for word in chosen])
    assert not title_matches(TitleQuery.parse(query), title), (query, title)
