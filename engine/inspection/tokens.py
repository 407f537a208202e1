"""The analysis profiles as a teaching view reads them: names, options, tokens.

Owns: nothing of its own but the list of what a tokenizer view needs of
`engine.analysis` (the profiles, their options, the search profile, the token value and
its ASCII preview), so that such a view depends on this wing only. Must not touch:
tokenization (the analysis stage's).
"""

from __future__ import annotations

from engine.analysis.profiles import (
    PROFILE_NAMES,
    PROFILE_OPTIONS,
    SEARCH_PROFILE,
    ProfileConfig,
    ascii_preview,
)
from engine.analysis.token import Token

__all__ = ["PROFILE_NAMES", "PROFILE_OPTIONS", "SEARCH_PROFILE", "ProfileConfig", "Token",
           "ascii_preview"]
