"""Which characters count as CJK (`engine.analysis.cjk_script`), at every range boundary;
`contains_cjk` against its clear version."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.analysis.cjk_script import CJK_RANGES, contains_cjk, contains_cjk_clear


@pytest.mark.parametrize(
    "character",
    ["\u1100", "\u11ff", "\u3005", "\u3007", "\u3041", "\u30ff", "\u3131", "\u318e", "\u31f0",
     "\u3400", "\u4dbf", "\u4e00", "\u9fff", "\ua960", "\uac00", "\ud7a3", "\ud7fb", "\uf900",
     "\ufaff", "\uff66", "\uff9f", "\uffa0", "\uffdc", "\U00020000", "\U0002a6df", "\U00030000",
     "\U000323af"],
    ids=lambda character: f"U+{ord(character):04X}",
)
def test_cjk_characters(character: str) -> None:
    assert contains_cjk(character) is True


@pytest.mark.parametrize(
    "character",
    ["a", "é", "Σ", "\u3000", "\u3001", "\u300c", "\u4dc0", "\u4dff", "\uff21", "\uffe0", "\u10ff",
     "\u1200", "😀", "\U0001f92f", "\U00040000", "0"],
    ids=lambda character: f"U+{ord(character):04X}",
)
def test_not_cjk(character: str) -> None:
    assert contains_cjk(character) is False


#: Every range's edges and their neighbours, and a few characters of no range.
EDGES = sorted({chr(code) for low, high in CJK_RANGES for code in (low - 1, low, high, high + 1)
                if not 0xD800 <= code <= 0xDFFF} | set("aé Σ😀\x00"))


@given(st.text(st.one_of(st.sampled_from(EDGES), st.characters()), max_size=12))
def test_contains_cjk_is_its_clear_version(text: str) -> None:
    assert contains_cjk(text) is contains_cjk_clear(text)


@pytest.mark.slow
def test_contains_cjk_is_its_clear_version_at_every_code_point() -> None:
    differing = [code for code in range(0x110000)
                 if contains_cjk(chr(code)) is not contains_cjk_clear(chr(code))]
    assert differing == []
