"""UTF-16 lengths and surrogate-safe cuts (`truncateUtf16Safe`, the 500/300 bounds)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.results.bounds import bound_snippet, truncate_utf16_safe, utf16_length

ASTRAL = "\U00010400"


def javascript_truncate(text: str, units: int) -> str:
    """An independent model: slice the UTF-16 code units, drop a final high surrogate."""
    code_units = text.encode("utf-16-le", "surrogatepass")
    kept = code_units[: 2 * units]
    if len(kept) >= 2 and 0xD800 <= int.from_bytes(kept[-2:], "little") <= 0xDBFF and len(code_units) > 2 * units:
        kept = kept[:-2]
    return kept.decode("utf-16-le", "surrogatepass")


@pytest.mark.parametrize(
    ("text", "length"), [("", 0), ("abc", 3), (ASTRAL, 2), ("a" + ASTRAL * 3, 7), ("\ud800", 1)]
)
def test_utf16_length(text: str, length: int) -> None:
    assert utf16_length(text) == length


@pytest.mark.parametrize(
    ("text", "units", "kept"),
    [
        ("abcdef", 3, "abc"),
        ("ab" + ASTRAL, 3, "ab"),
        ("ab" + ASTRAL, 4, "ab" + ASTRAL),
        ("ab\ud800cd", 3, "ab"),
        ("ab\udc00cd", 3, "ab\udc00"),
        ("abc", 10, "abc"),
        ("abc", 0, ""),
    ],
)
def test_truncate_utf16_safe(text: str, units: int, kept: str) -> None:
    assert truncate_utf16_safe(text, units) == kept


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(["a", "é", "会", ASTRAL, "\U0001f92f", " "]), max_size=30),
       units=st.integers(min_value=0, max_value=40))
def test_truncate_matches_a_utf16_slice(text: str, units: int) -> None:
    assert truncate_utf16_safe(text, units) == javascript_truncate(text, units)


def test_bound_snippet_at_500_units() -> None:
    assert bound_snippet("x" * 500) == "x" * 500
    assert bound_snippet("x" * 501) == "x" * 500 + "…"
    astral = "saffron " + ASTRAL * 400
    bounded = bound_snippet(astral)
    assert bounded == "saffron " + ASTRAL * 246 + "…"
    assert utf16_length(bounded) == 501


def test_the_tool_bound_of_300_cuts_a_pair_to_299_plus_ellipsis() -> None:
    bounded = bound_snippet("x" + ASTRAL * 200, 300)
    assert bounded == "x" + ASTRAL * 149 + "…"
    assert utf16_length(bounded) == 300
