"""Exact-output and property tests of the `icu` profile (`engine.analysis.icu_words`).

The hand-written cases are the phenomena of tokenizers.md §6 as ICU 77.1 (the version
pyproject pins) segments them; where ICU 77 differs from the ICU 72 figures in the spec
(email and `@mention`), the case says so. Version-sensitive dictionary output is also
covered, more broadly, by the golden files (`test_icu_golden.py`).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.icu_words import (
    IcuWordAnalyzer,
    fold_word,
    kind_of,
    replace_lone_surrogates,
    utf16_to_index_map,
)
from engine.errors import UsageError

ANALYZER = IcuWordAnalyzer()


def analyzes_to(text: str) -> list[tuple[str, int, int, str]]:
    """(term, start, end, kind) of every token of `text`."""
    return [(t.text, t.start, t.end, t.kind) for t in ANALYZER.tokens(text)]


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        # apostrophes and underscores stay inside one word
        ("don't", ["don't"]),
        ("rock'n'roll", ["rock'n'roll"]),
        ("l'été", ["l'ete"]),
        ("o’neil’s", ["o’neil’s"]),
        ("snake_case_name", ["snake_case_name"]),
        # `.` between letters or digits, number separators
        ("foo.bar node.js file.tar.gz", ["foo.bar", "node.js", "file.tar.gz"]),
        ("3.14159 1.2.3.4 v1.2.3", ["3.14159", "1.2.3.4", "v1.2.3"]),
        ("1,000,000 1.000.000,50", ["1,000,000", "1.000.000,50"]),
        # ICU 77 breaks at `@` (the spec's ICU 72 kept `john.doe@example.com` and `@mention`)
        ("john.doe@example.com", ["john.doe", "example.com"]),
        ("john.doe+tag@sub.example.co.uk", ["john.doe", "tag", "sub.example.co.uk"]),
        ("@mention", ["mention"]),
        ("http://www.example.com/path/page.html", ["http", "www.example.com", "path", "page.html"]),
        # dictionary segmentation of CJK
        ("中文字符测试", ["中文", "字符", "测试"]),
        ("東京都", ["東京", "都"]),
        ("日本語のテキスト", ["日本語", "の", "テキスト"]),
        ("中文English混合", ["中文", "english", "混合"]),
        # marks are stripped after segmentation, so marked words stay whole
        ("हिन्दी", ["हिनदी"]),
        ("שָׁלוֹם", ["שלום"]),
        ("السَّلَامُ", ["السلام"]),
        # not words at all
        ("😀 ½ ² ① \ue000 🤯🥰 👍🏽", []),
        # joiners and direction marks stay inside a word, and are removed from its term
        (
            "a\u200db a\u200cb a\u2060b a\ufeffb a\u00adb \u200fשלום\u200e",
            ["ab", "ab", "ab", "ab", "ab", "שלום"],
        ),
        # full case folding and mark stripping
        ("ﬁ ß ẞ ﬆ ŉ", ["fi", "ss", "ss", "st", "ʼn"]),
        ("σοφός ёлка Αθήναι", ["σοφοσ", "елка", "αθηναι"]),
        ("ΣΟΦΟΣ ς", ["σοφοσ", "σ"]),
        ("Ǆemal İstanbul", ["ǆemal", "istanbul"]),
        ("e\u0301cole ÉCOLE", ["ecole", "ecole"]),
    ],
)
def test_terms_of_the_spec_phenomena(text: str, terms: list[str]) -> None:
    assert ANALYZER.terms(text) == terms


def test_tokens_carry_kind_and_original_offsets() -> None:
    text = "Ünï 3.14 東京 ひらがな カタカナ 한국어 ภาษาไทย ລາວ"
    assert analyzes_to(text) == [
        ("uni", 0, 3, "word"),
        ("3.14", 4, 8, "number"),
        ("東京", 9, 11, "ideographic"),
        ("ひ", 12, 13, "kana"),
        ("ら", 13, 14, "kana"),
        ("か", 14, 15, "kana"),
        ("な", 15, 16, "kana"),
        ("カタカナ", 17, 21, "kana"),
        ("한국어", 22, 25, "hangul"),
        ("ภาษา", 26, 30, "southeast-asian"),
        ("ไทย", 30, 33, "southeast-asian"),
        ("ລາວ", 34, 37, "southeast-asian"),
    ]


def test_astral_characters_do_not_shift_later_offsets() -> None:
    # 😀 and 𝐀 are two UTF-16 units each but one str index.
    text = "😀😀 alpha 𝐀𝐁 beta 😀 gamma"
    tokens = ANALYZER.tokens(text)
    assert [(t.text, text[t.start : t.end]) for t in tokens] == [
        ("alpha", "alpha"),
        ("𝐀𝐁", "𝐀𝐁"),
        ("beta", "beta"),
        ("gamma", "gamma"),
    ]
    assert [(t.start, t.end) for t in tokens] == [(3, 8), (9, 11), (12, 16), (19, 24)]


def test_byte_offsets_are_utf8_and_a_lone_surrogate_counts_three_bytes() -> None:
    text = "é\ud800x 中文"
    assert [(t.text, t.start, t.end, t.byte_start, t.byte_end) for t in ANALYZER.tokens(text)] == [
        ("e", 0, 1, 0, 2),
        ("x", 2, 3, 5, 6),
        ("中文", 4, 6, 7, 13),
    ]


def test_a_mark_after_a_space_starts_no_token() -> None:
    assert analyzes_to(" \u0301x") == [("x", 2, 3, "word")]


def test_positions_count_kept_tokens_from_zero() -> None:
    tokens = ANALYZER.tokens("one, two... 😀 three")
    assert [(t.text, t.position) for t in tokens] == [("one", 0), ("two", 1), ("three", 2)]


def test_empty_and_separator_only_text_give_no_tokens() -> None:
    assert ANALYZER.tokens("") == []
    assert ANALYZER.tokens(" \t\n!?—…😀") == []


def test_fold_word_stages() -> None:
    assert fold_word("STRASSE") == fold_word("Straße") == "strasse"
    assert fold_word("Ǡ") == "a"  # NFD A + U+0307 + U+0304; both marks are Mn
    assert fold_word("\u0301") == ""  # only marks: nothing left
    assert fold_word("が") == "か"  # the voicing mark U+3099 is Mn under NFD


def test_kind_falls_back_on_rule_status_for_script_less_segments() -> None:
    assert kind_of("ー", 300) == "kana"
    assert kind_of("ー", 400) == "ideographic"
    assert kind_of("ー", 200) == "word"  # U+30FC is Common script


def test_describe_lists_the_stages_in_order() -> None:
    stage_names = [line.split(":", 1)[0] for line in ANALYZER.describe()]
    assert stage_names == ["decode", "split", "map offsets", "fold", "strip marks", "drop", "tag"]
    assert "locale root" in ANALYZER.describe()[1]


def test_locale_option() -> None:
    assert IcuWordAnalyzer(locale="ja").terms("東京都に行く") == IcuWordAnalyzer().terms(
        "東京都に行く"
    )
    assert "locale th" in IcuWordAnalyzer(locale="th").describe()[1]
    with pytest.raises(UsageError, match="unknown locale 'not a locale'"):
        IcuWordAnalyzer(locale="not a locale")


def test_utf16_map_inverts_utf16_lengths() -> None:
    text = "a😀b𝐀\U0010ffffc"
    index_of_unit = utf16_to_index_map(text)
    assert index_of_unit is not None
    for index in range(len(text) + 1):
        unit = len(text[:index].encode("utf-16-le")) // 2
        assert index_of_unit[unit] == index


# --- properties -----------------------------------------------------------------------

MIXED_ALPHABET = st.sampled_from(
    list("aZé ß.'’,-_@3١½\n\u0301\u200d\ud800\udfff😀𝐀中文東京ひカ한ภาษिन्שָلّ") + ["e\u0301", "👍🏽"]
)
MIXED_TEXT = st.lists(MIXED_ALPHABET, max_size=40).map("".join)


@settings(max_examples=150, deadline=None)
@given(MIXED_TEXT)
def test_offsets_are_in_bounds_ordered_and_fold_to_the_term(text: str) -> None:
    tokens = ANALYZER.tokens(text)
    clean = replace_lone_surrogates(text)
    previous_end = 0
    for position, token in enumerate(tokens):
        assert token.position == position
        assert previous_end <= token.start < token.end <= len(text)
        assert token.text == fold_word(clean[token.start : token.end]) != ""
        assert token.byte_start == len(clean[: token.start].encode("utf-8"))
        assert token.byte_end == len(clean[: token.end].encode("utf-8"))
        previous_end = token.end
    assert ANALYZER.terms(text) == [token.text for token in tokens]


@settings(max_examples=100, deadline=None)
@given(MIXED_TEXT)
def test_utf16_map_agrees_with_a_naive_count(text: str) -> None:
    clean = replace_lone_surrogates(text)
    index_of_unit = utf16_to_index_map(clean)
    for index in range(len(clean) + 1):
        unit = len(clean[:index].encode("utf-16-le")) // 2
        assert (unit if index_of_unit is None else index_of_unit[unit]) == index


@pytest.mark.parametrize(
    ("message", "query"),
    [
        ("明天下午三点开项目评审会议讨论排期", "会议"),
        ("日本語のテキストを検索できるようにしたいです", "テキスト"),
        ("ภาษาไทยง่ายนิดเดียว", "ไทย"),
    ],
)
def test_a_word_inside_a_cjk_or_thai_run_is_a_term_of_its_own(message: str, query: str) -> None:
    # behaviour.md §7.1: with unicode61 the whole run is one token, so `会议` matches
    # nothing; the icu profile indexes the run as words, and the query analyzes to one of them.
    query_terms = ANALYZER.terms(query)
    assert len(query_terms) == 1
    assert query_terms[0] in ANALYZER.terms(message)
