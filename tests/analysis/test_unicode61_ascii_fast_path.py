"""The ASCII shortcut of `Unicode61Tokenizer.terms` (lower, then split) equals the clear
`tokens`, for the options that allow it and for those that must not use it."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.unicode61 import Unicode61Tokenizer

OPTIONS = [
    {}, {"remove_diacritics": 0}, {"remove_diacritics": 2}, {"tokenchars": "'-_"},
    {"separators": "Xe"}, {"tokenchars": "q"}, {"separators": "a"}, {"categories": "L* N*"},
    {"categories": "Lu"}, {"tokenchars": "\t"}, {"tokenchars": "\x1c "}, {"separators": "\x1f"},
]
ASCII_TEXT = st.text(alphabet=string.printable + "\x00\x7f\x1c\x1d\x1e\x1f", max_size=60)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@settings(max_examples=80, deadline=None)
@given(text=ASCII_TEXT)
def test_ascii_terms_equal_the_clear_tokens(options: dict[str, object], text: str) -> None:
    tokenizer = Unicode61Tokenizer(**options)  # type: ignore[arg-type]
    assert tokenizer.terms(text) == [token.text for token in tokenizer.tokens(text)]


def test_the_shortcut_is_off_when_case_pairs_split_differently() -> None:
    assert Unicode61Tokenizer()._ascii_lower_first is True
    assert Unicode61Tokenizer(separators="X")._ascii_lower_first is False
    assert Unicode61Tokenizer(categories="Lu")._ascii_lower_first is False
    assert Unicode61Tokenizer(separators="X").terms("aXb AxB") == ["a", "b", "axb"]


def test_the_split_path_is_off_when_a_split_character_is_a_token_character() -> None:
    """`str.split` also cuts at tabs and at \\x1c..\\x1f: such a token character keeps
    the pattern (the tests above check both paths against the clear walk)."""
    assert Unicode61Tokenizer()._ascii_split_table is not None
    assert Unicode61Tokenizer(tokenchars="\x1d")._ascii_split_table is None
    assert Unicode61Tokenizer(tokenchars="\x1d").terms("a\x1db c") == ["a\x1db", "c"]
    assert Unicode61Tokenizer().terms("a\x1db\tC") == ["a", "b", "c"]


#: Mostly ASCII with non-ASCII letters, marks (U+0300..U+0331 continue a token, U+0332
#: does not), non-ASCII separators, supplementary characters and lone surrogates.
MIXED_TEXT = st.text(alphabet=st.one_of(
    st.sampled_from(string.printable + "\x1c\x1f"),
    st.sampled_from("éÉßİıǅ¿¡«»—\u00a0\u0301\u0331\u0332\u2066🤯😀𝐀\ud800\udfffΣσς中文"),
    st.characters(max_codepoint=0x2FFFF)), max_size=60)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@settings(max_examples=80, deadline=None)
@given(text=MIXED_TEXT)
def test_terms_of_mixed_text_cut_at_ascii_separators_equal_the_clear_tokens(
        options: dict[str, object], text: str) -> None:
    """Non-ASCII text is cut into pieces at ASCII separators, each piece's terms cached:
    the same terms as the clear walk, on a first call and on a second (cached) one."""
    tokenizer = Unicode61Tokenizer(**options)  # type: ignore[arg-type]
    expected = [token.text for token in tokenizer.tokens(text)]
    assert tokenizer.terms(text) == expected
    assert tokenizer.terms(text) == expected
    patterned = Unicode61Tokenizer(**options)  # type: ignore[arg-type]
    patterned._compiled.clear_budget = 0  # the pieces split by the patterns, not walked
    assert patterned.terms(text) == expected
