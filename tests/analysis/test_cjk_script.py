"""Which characters count as CJK (`engine.analysis.cjk_script`), at every range boundary."""

from __future__ import annotations

import pytest

from engine.analysis.cjk_script import contains_cjk


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
