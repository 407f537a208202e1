"""The one entry point to text analysis: named profiles and their options.

Owns: the profile names (`unicode61`, `icu`, `pg`), which options each accepts, building
the analyzer for a name, and `SEARCH_PROFILE`, the configuration session search indexes
and queries with. Must not touch: any tokenization rule (those live in `unicode61.py` and
its `unicode61_*.py` siblings, `icu_words.py`, and `pg_profile.py` with the `pg_*.py` parser
modules), storage, scoring.

Rule: the same analyzer (same name, same options) is used at index time and at query
time; callers get it from `get_analyzer` (or `SEARCH_PROFILE.analyzer()`) in both places
and never build a profile class themselves (a `unicode61` tokenizer is shared by every
caller asking for the same options). Every analyzer is a visible chain of stages:
`describe()` returns one line per stage, in the order they run.

The profile modules are imported lazily, inside the builder of each profile, so that a
program using only `unicode61` never loads ICU, and so that this module imports even
while one of the profile modules is missing.

`ascii_preview` (below) is the one place `unidecode` is used: it gives an ASCII
transliteration of a term for teaching output (the `tokenize` command's `ascii` column).
It is never used to index or to query.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from engine.errors import EngineError, UsageError

if TYPE_CHECKING:  # an annotation only: the analyzers' module loads when one is made
    from engine.analysis.token import Analyzer

#: The profile names, in the order help texts list them.
PROFILE_NAMES: tuple[str, ...] = ("unicode61", "icu", "pg")

#: The options each profile accepts (keyword arguments of `get_analyzer`).
PROFILE_OPTIONS: Mapping[str, tuple[str, ...]] = {
    "unicode61": ("remove_diacritics", "tokenchars", "separators", "categories"),
    "icu": ("locale",),
    "pg": ("unaccent",),
}


def _build_unicode61(options: Mapping[str, Any]) -> Analyzer:
    remove_diacritics = options.get("remove_diacritics", 1)
    if isinstance(remove_diacritics, bool) or remove_diacritics not in (0, 1, 2):
        raise UsageError(
            f"unicode61 profile: remove_diacritics must be 0, 1 or 2, not {remove_diacritics!r}"
        )
    for text_option in ("tokenchars", "separators"):
        if not isinstance(options.get(text_option, ""), str):
            raise UsageError(f"unicode61 profile: {text_option} must be a string")
    # Keyed by each value's repr too: `remove_diacritics=1.0` equals 1 (and -0.0 equals
    # 0.0) but prints apart.
    key = tuple(sorted((option, repr(value), value) for option, value in options.items()))
    try:
        return _shared_unicode61(key)
    except TypeError:  # an unhashable value: its own tokenizer (which judges the value)
        return _unicode61(key)


def _unicode61(key: tuple[tuple[str, str, Any], ...]) -> Analyzer:
    from engine.analysis.unicode61 import Unicode61Tokenizer

    return Unicode61Tokenizer(**{option: value for option, _, value in key})


#: One `unicode61` tokenizer per set of options, shared by every caller: its terms
#: depend on its options alone, and each keeps caches of the pieces and tokens it met (up
#: to `CACHE_ENTRIES` entries each), which a tokenizer per caller repeated (a store opens
#: a reference index an agent, each with full caches of its own).
_shared_unicode61 = lru_cache(maxsize=32)(_unicode61)


def _build_icu(options: Mapping[str, Any]) -> Analyzer:
    from engine.analysis.icu_words import IcuWordAnalyzer

    return IcuWordAnalyzer(**options)


def _build_pg(options: Mapping[str, Any]) -> Analyzer:
    from engine.analysis.pg_profile import PgSimpleUnaccentAnalyzer

    return PgSimpleUnaccentAnalyzer(**options)


_BUILDERS: Mapping[str, Callable[[Mapping[str, Any]], Analyzer]] = {
    "unicode61": _build_unicode61,
    "icu": _build_icu,
    "pg": _build_pg,
}


def get_analyzer(name: str, **options: Any) -> Analyzer:
    """The analyzer of profile `name` with `options`; UsageError for anything unknown.

    >>> get_analyzer("icu").terms("Straße 東京都")
    ['strasse', '東京', '都']
    >>> get_analyzer("lucene")
    Traceback (most recent call last):
    ...
    engine.errors.UsageError: unknown analysis profile 'lucene'; valid profiles: unicode61, icu, pg
    >>> get_analyzer("pg", remove_diacritics=2)
    Traceback (most recent call last):
    ...
    engine.errors.UsageError: pg profile: unknown option 'remove_diacritics' (it takes unaccent)
    """
    if name not in _BUILDERS:
        raise UsageError(
            f"unknown analysis profile {name!r}; valid profiles: {', '.join(PROFILE_NAMES)}"
        )
    accepted = PROFILE_OPTIONS[name]
    for option in options:
        if option not in accepted:
            takes = f"it takes {', '.join(accepted)}" if accepted else "it takes no options"
            raise UsageError(f"{name} profile: unknown option {option!r} ({takes})")
    try:
        return _BUILDERS[name](options)
    except ModuleNotFoundError as error:
        # A profile module (or PyICU for `icu`) is missing from this installation.
        raise EngineError(f"the {name} analysis profile is unavailable: {error}") from error


class ProfileConfig(NamedTuple):
    """A profile name with its options: a value that can be stored, compared and built.

    A NamedTuple, not a frozen dataclass: every search imports this module, and a
    NamedTuple's class costs a fraction of a dataclass's to make. It reads and prints as
    the dataclass did, and two profiles compare as before; unlike the dataclass it also
    equals a plain tuple of the same values, which nothing compares it with.
    """

    name: str
    options: tuple[tuple[str, Any], ...] = ()

    def analyzer(self) -> Analyzer:
        """Build the analyzer this configuration names (`get_analyzer(name, **options)`)."""
        return get_analyzer(self.name, **dict(self.options))

    def label(self) -> str:
        """A short readable form, e.g. `unicode61 remove_diacritics=2`.

        >>> SEARCH_PROFILE.label()
        'unicode61 remove_diacritics=2'
        """
        parts = [self.name]
        for key, value in self.options:
            parts.append(f"{key}={value!r}" if isinstance(value, str) else f"{key}={value}")
        return " ".join(parts)


#: What session search indexes and queries with: FTS5 `unicode61 remove_diacritics 2`
#: (seed spec: "SQLite search uses its Unicode word tokenizer with diacritic removal").
SEARCH_PROFILE = ProfileConfig("unicode61", (("remove_diacritics", 2),))

#: What the PostgreSQL backend indexes and queries with: the `simple` configuration with
#: `unaccent` as a dictionary on every token (seed: "PostgreSQL search uses the simple
#: text configuration with unaccent"; why per token: `engine.backends.postgres`).
POSTGRES_PROFILE = ProfileConfig("pg", (("unaccent", "dictionary"),))


def ascii_preview(term: str) -> str:
    """An ASCII transliteration of `term` for teaching output only (via `unidecode`).

    Never used for indexing or querying: it only helps a reader see what a term in an
    unfamiliar script sounds like.

    >>> ascii_preview("straße"), ascii_preview("東京"), ascii_preview("ภาษา")
    ('strasse', 'Dong Jing', 'phaasaa')
    """
    from unidecode import unidecode

    return unidecode(term).strip()
