"""Tests of the analysis entry point `engine.analysis.profiles`.

The `unicode61` and `pg` profile classes are written by other modules
(`engine/analysis/unicode61.py`, `engine/analysis/pg_profile.py`); the tests that build
them skip, naming the module, only while that module does not exist at all. An import
error inside an existing module fails the test.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.profiles import (
    PROFILE_NAMES,
    PROFILE_OPTIONS,
    SEARCH_PROFILE,
    ProfileConfig,
    ascii_preview,
    get_analyzer,
)
from engine.errors import UsageError

PROFILE_MODULES = {
    "unicode61": "engine.analysis.unicode61",
    "icu": "engine.analysis.icu_words",
    "pg": "engine.analysis.pg_profile",
}

MIXED_TEXT = (
    "Café crème, Straße! 中文字符测试 東京都 한국어 ภาษาไทย हिन्दी שָׁלוֹם 😀 don't 3.14"
    " state-of-the-art john.doe@example.com \ud800x"
)


def require_profile(name: str) -> None:
    """The module of profile `name` must exist: a missing one is a failure, never a skip."""
    module = PROFILE_MODULES[name]
    assert importlib.util.find_spec(module) is not None, f"{module} is missing"


def test_profile_names() -> None:
    assert PROFILE_NAMES == ("unicode61", "icu", "pg")
    assert set(PROFILE_OPTIONS) == set(PROFILE_NAMES)


def test_unknown_profile_names_the_valid_ones() -> None:
    with pytest.raises(UsageError) as raised:
        get_analyzer("simple")
    assert str(raised.value) == (
        "unknown analysis profile 'simple'; valid profiles: unicode61, icu, pg"
    )


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("icu", {"remove_diacritics": 2}, "icu profile: unknown option 'remove_diacritics'"),
        ("icu", {"remove_diacritics": 2}, "(it takes locale)"),
        ("pg", {"locale": "ja"}, "pg profile: unknown option 'locale' (it takes unaccent)"),
        ("unicode61", {"locale": "ja"}, "unicode61 profile: unknown option 'locale'"),
        ("unicode61", {"locale": "ja"}, "(it takes remove_diacritics, tokenchars, separators"),
        ("unicode61", {"remove_diacritics": 3}, "remove_diacritics must be 0, 1 or 2, not 3"),
        ("unicode61", {"remove_diacritics": True}, "remove_diacritics must be 0, 1 or 2, not True"),
        ("unicode61", {"remove_diacritics": "2"}, "remove_diacritics must be 0, 1 or 2, not '2'"),
        ("unicode61", {"tokenchars": 5}, "unicode61 profile: tokenchars must be a string"),
    ],
)
def test_bad_options_are_usage_errors(name: str, options: dict, message: str) -> None:
    with pytest.raises(UsageError) as raised:
        get_analyzer(name, **options)
    assert message in str(raised.value)


def test_search_profile_is_unicode61_with_remove_diacritics_2() -> None:
    assert SEARCH_PROFILE == ProfileConfig("unicode61", (("remove_diacritics", 2),))
    assert SEARCH_PROFILE.label() == "unicode61 remove_diacritics=2"
    assert hash(SEARCH_PROFILE) == hash(ProfileConfig("unicode61", (("remove_diacritics", 2),)))


def test_search_profile_builds_the_fts5_configuration() -> None:
    require_profile("unicode61")
    analyzer = SEARCH_PROFILE.analyzer()
    assert analyzer.name == "unicode61"
    # rd=2 strips stacked marks (ǖ → u), which rd=1 keeps; CJK runs stay one token.
    assert analyzer.terms("Café ǖ 中文字符测试") == ["cafe", "u", "中文字符测试"]
    assert get_analyzer("unicode61", remove_diacritics=1).terms("ǖ") == ["ǖ"]


def test_icu_profile_by_name() -> None:
    analyzer = get_analyzer("icu", locale="root")
    assert analyzer.name == "icu"
    assert analyzer.terms("中文字符测试") == ["中文", "字符", "测试"]


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_every_profile_keeps_the_analyzer_contract(name: str) -> None:
    require_profile(name)
    analyzer = get_analyzer(name)
    assert analyzer.name == name
    tokens = analyzer.tokens(MIXED_TEXT)
    assert tokens, "the mixed text has words in every profile"
    previous_start = 0
    for token in tokens:
        # Non-decreasing, not increasing: PostgreSQL emits a hyphenated word and then its
        # parts, and the first part starts where the word does.
        assert previous_start <= token.start < token.end <= len(MIXED_TEXT)
        span = MIXED_TEXT[token.start : token.end].replace("\ud800", "\ufffd")
        assert token.byte_end - token.byte_start == len(span.encode("utf-8"))
        previous_start = token.start
    assert analyzer.terms(MIXED_TEXT) == [token.text for token in tokens]


MIXED_CHARACTERS = st.sampled_from(
    list("aZé ß.'’,-_@/:<>&;0½\n\u200d\ud800😀中文ひ한ภि्שָلﬁ") + ["e\u0301", "👍🏽"]
)


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_every_profile_keeps_offsets_on_random_text(name: str) -> None:
    require_profile(name)
    analyzer = get_analyzer(name)

    @settings(max_examples=60, deadline=None)
    @given(st.lists(MIXED_CHARACTERS, max_size=30).map("".join))
    def check(text: str) -> None:
        tokens = analyzer.tokens(text)
        previous_start = 0
        for token in tokens:
            assert previous_start <= token.start < token.end <= len(text)
            span = text[token.start : token.end].replace("\ud800", "\ufffd")
            assert token.byte_end - token.byte_start == len(span.encode("utf-8"))
            previous_start = token.start
        assert analyzer.terms(text) == [token.text for token in tokens]

    check()


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_every_profile_describes_its_stages(name: str) -> None:
    require_profile(name)
    stages = get_analyzer(name).describe()
    assert len(stages) >= 2
    for stage in stages:
        assert isinstance(stage, str)
        assert ": " in stage, f"stage line {stage!r} should read 'name: what it does'"


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_index_time_and_query_time_analyzers_agree(name: str) -> None:
    require_profile(name)
    at_index_time = get_analyzer(name).terms(MIXED_TEXT)
    at_query_time = get_analyzer(name).terms(MIXED_TEXT)
    assert at_index_time == at_query_time


def test_ascii_preview_is_a_transliteration() -> None:
    assert ascii_preview("中文") == "Zhong Wen"
    assert ascii_preview("ελληνικά") == "ellenika"
    assert ascii_preview("cafe") == "cafe"


@pytest.mark.parametrize("module_name", ["engine.analysis.profiles", "engine.analysis.icu_words"])
def test_module_doctests_pass(module_name: str) -> None:
    # Plain `pytest` (the CI command) does not collect doctests from `engine/`.
    results = doctest.testmod(importlib.import_module(module_name))
    assert results.attempted > 0
    assert results.failed == 0


def test_unicode61_tokenizers_are_shared_by_options() -> None:
    """Every caller asking for the same `unicode61` options gets one tokenizer (its caches
    of pieces are kept once, not once a store partition), other options another; a value
    that equals another of a different type builds its own, and ICU's analyzers, which
    hold break iterators, are never shared."""
    shared = SEARCH_PROFILE.analyzer()
    assert get_analyzer("unicode61", remove_diacritics=2) is shared
    assert ProfileConfig("unicode61", (("remove_diacritics", 2),)).analyzer() is shared
    assert get_analyzer("unicode61") is get_analyzer("unicode61")
    assert get_analyzer("unicode61") is not shared
    floating = get_analyzer("unicode61", remove_diacritics=1.0)
    assert floating is not get_analyzer("unicode61", remove_diacritics=1)
    assert repr(floating.remove_diacritics) == "1.0"  # type: ignore[attr-defined]
    negative = get_analyzer("unicode61", remove_diacritics=-0.0)
    assert negative is not get_analyzer("unicode61", remove_diacritics=0.0)
    assert repr(negative.remove_diacritics) == "-0.0"  # type: ignore[attr-defined]
    assert shared.terms("Ünïcode 61") == ["unicode", "61"]
    with pytest.raises(UsageError, match="categories must be a string"):
        get_analyzer("unicode61", categories=["L*"])
    if importlib.util.find_spec("icu") is not None:
        assert get_analyzer("icu") is not get_analyzer("icu")
