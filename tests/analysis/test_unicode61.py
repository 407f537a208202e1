"""Exact-output tests of the `unicode61` tokenizer: every example of tokenizers.md §1 and
behaviour.md §4.1, the options, offsets, truncation, and the generated tables' checksum.

Owns: the hand-written expectations (each was also run through the real SQLite 3.40.1 by
`tests/parity/test_fts5_tokens.py`). Must not touch: SQLite (see the parity tests) or ICU.
"""

from __future__ import annotations

import doctest
import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.tables import unicode61_checksum
from engine.analysis.tables import unicode61_data as data
from engine.analysis.unicode61 import Unicode61Tokenizer
from engine.analysis.unicode61_folding import MAX_TERM_BYTES, term_bytes
from engine.analysis.unicode61_patterns import (
    ascii_intervals,
    class_intervals,
    clip,
    compile_options,
)
from engine.errors import UsageError

DEFAULT = Unicode61Tokenizer()
RD0 = Unicode61Tokenizer(remove_diacritics=0)
RD2 = Unicode61Tokenizer(remove_diacritics=2)


# --------------------------------------------------------------------------------------
# §1.1 input decoding and the ASCII table


def test_ascii_token_characters_are_exactly_letters_and_digits() -> None:
    assert DEFAULT.terms("snake_case it's a-b a.b user@example.com X9") == [
        "snake", "case", "it", "s", "a", "b", "a", "b", "user", "example", "com", "x9",
    ]  # fmt: skip


def test_nul_is_an_ordinary_separator() -> None:
    assert DEFAULT.terms("a\x00b") == ["a", "b"]


def test_lone_surrogates_and_nonchar_ffff_read_as_replacement_separator() -> None:
    assert DEFAULT.terms("a\ud800b \udfffc x\ufffey z\uffff") == ["a", "b", "c", "x", "y", "z"]


# --------------------------------------------------------------------------------------
# §1.2 which code points are token characters


def test_emoji_after_unicode_6_1_are_tokens_and_older_emoji_separate() -> None:
    assert DEFAULT.terms("🤯 🥰 🤯🥰 👍🏽 😀 ❤ 👍") == ["🤯", "🥰", "🤯🥰", "🏽"]
    assert DEFAULT.terms("😀") == []


def test_later_assignments_count_as_unassigned_token_characters() -> None:
    assert DEFAULT.terms("\u2066 \u2069 \u061c \u20ba") == ["\u2066", "\u2069", "\u061c", "\u20ba"]


def test_noncharacters_are_tokens_except_bmp_fffe_ffff() -> None:
    assert DEFAULT.terms("\ufdd0 \U0001fffe \U0010ffff \ufffe") == [
        "\ufdd0", "\U0001fffe", "\U0010ffff",
    ]  # fmt: skip


def test_other_numbers_and_private_use_are_tokens() -> None:
    assert DEFAULT.terms("½ ² ① ³ ①②③") == ["½", "²", "①", "³", "①②③"]
    assert DEFAULT.terms("\ue000 \U000f0000 \U00100000") == ["\ue000", "\U000f0000", "\U00100000"]


def test_format_characters_and_variation_selector_split_words() -> None:
    assert DEFAULT.terms("a\u200db a\u200cb a\u2060b a\ufeffb a\u00adb a\ufe0fb") == [
        "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b",
    ]  # fmt: skip


def test_category_changes_since_unicode_6_1_follow_sqlite() -> None:
    # New Tai Lue and Vedic signs were Mc in 6.1 (separators); Mongolian U+1885 was Lo.
    assert DEFAULT.terms("a\u19b0b a\u19c8b a\u1cf2b a\u1885b") == [
        "a", "b", "a", "b", "a", "b", "a\u1885b",
    ]  # fmt: skip


# --------------------------------------------------------------------------------------
# §1.3 combining marks


def test_only_25_marks_continue_a_token() -> None:
    assert DEFAULT.terms("हिन्दी") == ["ह", "न", "द"]
    assert DEFAULT.terms("السَّلَامُ") == ["الس", "ل", "ام"]
    assert DEFAULT.terms("שָׁלוֹם") == ["ש", "לו", "ם"]
    assert DEFAULT.terms("ภาษาไทยง่าย") == ["ภาษาไทยง", "าย"]
    assert DEFAULT.terms("a\u0332b") == ["a", "b"]


def test_a_mark_cannot_start_a_token() -> None:
    assert DEFAULT.terms(" \u0301x") == ["x"]
    assert RD0.terms("\u0301\u0301 q\u0301") == ["q\u0301"]


# --------------------------------------------------------------------------------------
# §1.4 case folding


def test_simple_case_folding_of_unicode_6_1() -> None:
    assert RD0.terms("Σ ς ẞ ß ﬁ İ ı ǅ Ǆ \u212a \u2126 Ⅻ Ａ") == [
        "σ", "σ", "ß", "ß", "ﬁ", "İ", "ı", "ǆ", "ǆ", "k", "ω", "ⅻ", "ａ",
    ]  # fmt: skip


def test_foldings_added_after_unicode_6_1_are_not_applied() -> None:
    assert RD0.terms("Ꭰ ꭰ \u1c90 \u1fd3 \u1fe3 \ufb05") == [
        "Ꭰ", "ꭰ", "\u1c90", "\u1fd3", "\u1fe3", "\ufb05",
    ]  # fmt: skip


def test_supplementary_planes_fold_only_deseret() -> None:
    assert RD0.terms("\U00010400\U00010427 \U0001e900") == ["\U00010428\U0001044f", "\U0001e900"]


# --------------------------------------------------------------------------------------
# §1.5 remove_diacritics


def test_remove_diacritics_defaults_to_1_and_drops_marks() -> None:
    assert DEFAULT.remove_diacritics == 1
    assert DEFAULT.terms("cafe\u0301 café") == ["cafe", "cafe"]


def test_letters_with_two_marks_are_stripped_only_at_level_2() -> None:
    text = "ǖ ấ ệ ự ḗ"
    assert DEFAULT.terms(text) == ["ǖ", "ấ", "ệ", "ự", "ḗ"]
    assert RD2.terms(text) == ["u", "a", "e", "u", "e"]


def test_level_2_keeps_a_with_dot_and_macron() -> None:
    assert RD2.terms("Ǡ ǡ") == ["ǡ", "ǡ"]


def test_dotted_capital_i_strips_to_i() -> None:
    assert RD0.terms("İ") == ["İ"]
    assert DEFAULT.terms("İ") == ["i"]
    assert RD2.terms("İ") == ["i"]


def test_letters_without_a_mark_decomposition_are_kept() -> None:
    assert RD2.terms("ø ł đ ð þ æ œ ß ı ŉ ά ё") == [
        "ø", "ł", "đ", "ð", "þ", "æ", "œ", "ß", "ı", "ŉ", "ά", "ё",
    ]  # fmt: skip


def test_level_0_does_not_normalise() -> None:
    assert RD0.terms("café cafe\u0301") == ["café", "cafe\u0301"]


# --------------------------------------------------------------------------------------
# behaviour.md §4.1 (the session-search table uses remove_diacritics 2)


def test_session_search_examples() -> None:
    assert RD2.terms("Café naïve coöperate façade") == ["cafe", "naive", "cooperate", "facade"]
    assert RD2.terms("ΟΣ ος") == ["οσ", "οσ"]
    assert RD2.terms("work_team") == ["work", "team"]
    assert RD2.terms("明天下午三点开项目评审会议讨论排期") == ["明天下午三点开项目评审会议讨论排期"]
    assert RD2.terms("abc中文def") == ["abc中文def"]


# --------------------------------------------------------------------------------------
# §1.6 options


def test_ascii_tokenchars_and_separators_overwrite_the_table() -> None:
    tokenizer = Unicode61Tokenizer(tokenchars="-_", separators="x")
    assert tokenizer.terms("a-b_c axb") == ["a-b_c", "a", "b"]


def test_separators_then_tokenchars_order_is_tokenchars_first() -> None:
    # ASCII: the option applied last wins; this API applies tokenchars, then separators.
    assert Unicode61Tokenizer(tokenchars="-", separators="-").terms("a-b") == ["a", "b"]


def test_non_ascii_exceptions_flip_the_default() -> None:
    tokenizer = Unicode61Tokenizer(tokenchars="¿\U0001f600", separators="é")
    assert tokenizer.terms("¿qué? 😀x") == ["¿qu", "😀x"]


def test_the_25_marks_cannot_be_made_separators_or_starters() -> None:
    assert Unicode61Tokenizer(separators="\u0301").terms("e\u0301x") == ["ex"]
    assert Unicode61Tokenizer(tokenchars="\u0301").terms(" \u0301x") == ["x"]


def test_categories_option_selects_token_classes() -> None:
    tokenizer = Unicode61Tokenizer(categories="Lu Nd")
    assert tokenizer.terms("ABc12 Éé") == ["ab", "12", "e"]
    assert Unicode61Tokenizer(categories="So").terms("😀 a ©") == ["😀", "©"]


def test_categories_words_sqlite_ignores_enable_only_unassigned() -> None:
    assert Unicode61Tokenizer(categories="lu X*").terms("abc \u0378 \U0001f92f") == [
        "\u0378", "\U0001f92f",
    ]  # fmt: skip


def test_empty_categories_option_makes_no_token_characters() -> None:
    assert Unicode61Tokenizer(categories="").terms("abc \u0378 1") == []


@pytest.mark.parametrize("categories", ["L", "Lx", "N* M?", "Zz"])
def test_invalid_category_is_a_clear_error(categories: str) -> None:
    with pytest.raises(UsageError, match="invalid categories entry"):
        Unicode61Tokenizer(categories=categories)


@pytest.mark.parametrize("value", [3, -1, True, "1"])
def test_invalid_remove_diacritics_is_a_clear_error(value: object) -> None:
    with pytest.raises(UsageError, match="remove_diacritics must be 0, 1 or 2"):
        Unicode61Tokenizer(remove_diacritics=value)  # type: ignore[arg-type]


def test_nul_in_an_option_is_a_clear_error() -> None:
    with pytest.raises(UsageError, match="tokenchars must be a string without NUL"):
        Unicode61Tokenizer(tokenchars="a\x00")


def test_marks_made_token_characters_give_an_empty_term_with_a_position() -> None:
    tokenizer = Unicode61Tokenizer(categories="L* Mn")
    assert [(t.text, t.position) for t in tokenizer.tokens("a \u0301 b")] == [
        ("a", 0), ("", 1), ("b", 2),
    ]  # fmt: skip
    assert tokenizer.terms("a \u0301 b") == ["a", "", "b"]


# --------------------------------------------------------------------------------------
# §1.7 limits and offsets


def test_terms_are_truncated_to_32768_bytes() -> None:
    assert DEFAULT.terms("x" * 40000) == ["x" * MAX_TERM_BYTES]
    (cut,) = DEFAULT.terms("中" * 10923)  # 32,769 bytes: the cut splits the last 中
    assert term_bytes(cut) == ("中" * 10923).encode()[:MAX_TERM_BYTES]
    assert cut == "中" * 10922 + "\udce4\udcb8"


def test_a_truncated_query_term_equals_the_truncated_document_term() -> None:
    document_term = RD0.terms("É" * 20000)
    query_term = RD0.terms("é" * 16390)
    assert document_term == query_term


def test_tokens_report_positions_and_both_offsets() -> None:
    tokens = RD2.tokens("Ünïcode 61, 東京🤯!")
    assert [(t.text, t.position, t.start, t.end, t.byte_start, t.byte_end, t.kind) for t in tokens] == [
        ("unicode", 0, 0, 7, 0, 9, "word"),
        ("61", 1, 8, 10, 10, 12, "number"),
        ("東京🤯", 2, 12, 15, 14, 24, "word"),
    ]  # fmt: skip


def test_offsets_cover_the_original_span_of_a_folded_token() -> None:
    text = "xx e\u0301te\u0301 yy"
    (_, token, _) = DEFAULT.tokens(text)
    assert (token.text, text[token.start : token.end]) == ("ete", "e\u0301te\u0301")


def test_number_kind_needs_every_code_point_to_be_a_decimal_digit() -> None:
    kinds = [(t.text, t.kind) for t in DEFAULT.tokens("2024 ٣٤٥ ½ 12ab")]
    assert kinds == [("2024", "number"), ("٣٤٥", "number"), ("½", "word"), ("12ab", "word")]


# --------------------------------------------------------------------------------------
# The fast path agrees with the clear version

CONFIGURATIONS = [
    RD0,
    DEFAULT,
    RD2,
    Unicode61Tokenizer(2, tokenchars="-_'¿😀", separators="xéß"),
    Unicode61Tokenizer(1, categories="L* N* Co Mn"),
    Unicode61Tokenizer(0, categories="So P* Cc", separators="."),
]
TEXT = st.text(
    alphabet=st.one_of(
        st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()),
        st.sampled_from("aZ09 _-.é\u0301\u0308Σς😀🤯\ud800\udfff\x00"),
    ),
    max_size=40,
)


@pytest.mark.parametrize("tokenizer", CONFIGURATIONS, ids=repr)
@settings(max_examples=150, deadline=None)
@given(text=TEXT)
def test_fast_terms_and_spans_equal_the_clear_tokens(
    tokenizer: Unicode61Tokenizer, text: str
) -> None:
    tokens = tokenizer.tokens(text)
    assert tokenizer.terms(text) == [token.text for token in tokens]
    assert tokenizer.token_spans(text) == [(t.text, t.start, t.end) for t in tokens]
    assert tokenizer.spans(text) == [(t.start, t.end) for t in tokens]
    assert [t.position for t in tokens] == list(range(len(tokens)))
    for token in tokens:
        span = text[token.start : token.end]
        assert token.byte_end - token.byte_start == len(span.encode("utf-8", "surrogatepass"))


# --------------------------------------------------------------------------------------
# Description and the generated tables


def test_describe_lists_the_stages_in_order() -> None:
    lines = RD2.describe()
    assert [line.split(":")[0] for line in lines] == [
        "decode", "split", "continue", "fold", "diacritics", "truncate",
    ]  # fmt: skip
    assert "'0-9A-Za-z'" in lines[1]
    assert RD2.name == "unicode61"


def test_fts5_tokenize_option_round_trips_the_options() -> None:
    tokenizer = Unicode61Tokenizer(0, tokenchars="'", separators="é", categories="L*")
    assert tokenizer.fts5_tokenize_option() == (
        "unicode61 remove_diacritics 0 categories 'L*' tokenchars '''' separators 'é'"
    )


def test_generated_tables_match_their_recorded_checksum() -> None:
    strip_complex = {**data.DIACRITIC_STRIP_SIMPLE, **data.DIACRITIC_STRIP_COMPLEX_EXTRA}
    recomputed = unicode61_checksum(
        data.CATEGORY_RANGE_STARTS,
        data.CATEGORY_RANGE_NAMES,
        data.CASE_FOLD,
        data.DIACRITIC_STRIP_SIMPLE,
        strip_complex,
        data.CONTINUATION_MARKS,
    )
    assert recomputed == data.DATA_CHECKSUM
    assert data.DATA_CHECKSUM in (data.__doc__ or "")


def test_generated_tables_name_their_sources() -> None:
    assert data.GENERATOR == "engine.analysis.tables.generate"
    assert (data.ICU_VERSION, data.UNICODE_VERSION, data.SQLITE_VERSION) == (
        "77.1", "16.0", "3.40.1",
    )  # fmt: skip
    assert len(data.CONTINUATION_MARKS) == 25
    assert len(data.DIACRITIC_STRIP_SIMPLE) + len(data.DIACRITIC_STRIP_COMPLEX_EXTRA) == 513


def test_category_changes_that_flip_token_status_are_the_23_of_the_spec() -> None:
    token_classes = {"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No", "Co", "Cn"}
    flipped = [
        code_point
        for first, last, rule, sqlite in data.CATEGORY_CHANGES_FROM_ICU
        for code_point in range(first, last + 1)
        if (rule in token_classes) != (sqlite in token_classes)
    ]
    expected = [*range(0x1885, 0x1887), *range(0x19B0, 0x19C1), 0x19C8, 0x19C9, 0x1CF2, 0x1CF3]
    assert flipped == expected


def test_non_ascii_fold_pairs_number_1029() -> None:
    assert sum(1 for code_point in data.CASE_FOLD if code_point >= 0x80) == 1029


@pytest.mark.parametrize(
    "module_name",
    [
        "engine.analysis.unicode61", "engine.analysis.unicode61_code_points",
        "engine.analysis.unicode61_folding", "engine.analysis.unicode61_options",
        "engine.analysis.unicode61_patterns", "engine.analysis.tables",
        "engine.analysis.tables.generate",
    ],
)
def test_module_examples_hold(module_name: str) -> None:
    if module_name.endswith("generate"):
        pytest.importorskip("icu", reason="the generator needs PyICU")
    module = importlib.import_module(module_name)
    outcome = doctest.testmod(module)
    assert (outcome.failed, outcome.attempted > 0) == (0, True)


def fresh_tokenizer(budget: int) -> Unicode61Tokenizer:
    """A tokenizer with its own compiled patterns (none compiled yet) and walk budget."""
    tokenizer = Unicode61Tokenizer(remove_diacritics=2)
    tokenizer._compiled = compile_options.__wrapped__(tokenizer.options)
    tokenizer._compiled.clear_budget = budget
    return tokenizer


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=6), st.integers(0, 40))
def test_the_walk_before_compiling_gives_the_same_tokens(texts: list[str], budget: int) -> None:
    """Texts walked while the budget lasts and split by the compiled pattern after it
    both equal the clear tokens."""
    tokenizer = fresh_tokenizer(budget)
    for text in texts:
        tokens = tokenizer.tokens(text)
        assert tokenizer.spans(text) == [(t.start, t.end) for t in tokens]
        assert tokenizer.token_spans(text) == [(t.text, t.start, t.end) for t in tokens]
        assert tokenizer.terms(text) == [t.text for t in tokens]


def test_a_pattern_is_compiled_only_once_the_walk_budget_is_spent() -> None:
    tokenizer = fresh_tokenizer(budget=12)
    compiled = tokenizer._compiled
    assert tokenizer.spans("Déjà vu") == [(0, 4), (5, 7)]  # 7 characters walked
    assert compiled._bmp_pattern is None and compiled.clear_budget == 5
    assert tokenizer.terms("plain ascii text") == ["plain", "ascii", "text"]  # never walked
    assert compiled.clear_budget == 5
    # A text is cut at ASCII separators first: its piece "informação" is longer than
    # what is left
    assert tokenizer.terms("informação sabe") == ["informacao", "sabe"]
    assert compiled._bmp_pattern is not None and compiled.clear_budget == 0


@pytest.mark.parametrize("tokenizer", CONFIGURATIONS, ids=repr)
def test_the_ascii_classes_are_the_full_classes_cut_at_ascii(tokenizer: Unicode61Tokenizer) -> None:
    full = class_intervals(tokenizer.options)
    assert ascii_intervals(tokenizer.options) == clip(full, below=0x80)
