"""The CJK gram index: grams, candidate sets, and lazy building versus upkeep."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.index.cjk_grams import CjkGramIndex, cjk_grams, cjk_grams_clear
from engine.index.inverted_index import InvertedIndex
from engine.model import IndexEntry
from engine.query.cjk import substring_matches

ALPHABET = "a会议评审\x00한국ア𠀀\u4dc0 "


@settings(max_examples=150, deadline=None)
@given(st.text(st.sampled_from(ALPHABET), max_size=30))
def test_regex_grams_equal_the_character_loop(text):
    assert sorted(cjk_grams(text)) == sorted(cjk_grams_clear(text))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(st.sampled_from(ALPHABET), max_size=12), max_size=10),
       st.text(st.sampled_from(ALPHABET), min_size=1, max_size=4))
def test_candidates_never_miss_a_match(texts, needle):
    grams = CjkGramIndex()
    for doc_id, text in enumerate(texts):
        grams.add(doc_id, text)
    candidates = grams.candidates(needle)
    matching = {doc_id for doc_id, text in enumerate(texts) if substring_matches(text, needle)}
    if candidates is None:
        visible = needle.split("\x00", 1)[0]
        assert not any(character in "会议评审한국ア𠀀" for character in visible)
    else:
        assert matching <= candidates


def test_lazy_build_equals_upkeep_after_adds_and_deletes():
    index = InvertedIndex()
    texts = ["会议 one", "评审会议", "ア한국", "plain"]
    for number, text in enumerate(texts):
        index.add_entry(IndexEntry("w", f"m{number}", "user", 0.0, text, number), [text])
    kept = index.cjk_grams  # built now, then maintained
    index.delete_document(1)
    index.add_entry(IndexEntry("w", "m4", "user", 0.0, "会议 again", 4), ["x"])
    fresh = CjkGramIndex()
    for record in index.documents():
        fresh.add(record.doc_id, record.text)
    for needle in ("会议", "会", "评审", "ア한", "국"):
        assert kept.candidates(needle) == fresh.candidates(needle)
    assert kept.candidates("会议") == {0, 4}
