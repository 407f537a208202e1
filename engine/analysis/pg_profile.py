"""The `pg` profile: `to_tsvector('simple', unaccent(text))` of PostgreSQL 15, in Python, and
its per-token flavour, the configuration the PostgreSQL backend indexes with.

Owns: the pipeline whole-text unaccent → `default` parser → `simple` mapping → per-character
lowercase → positions → tsvector, and the offsets of each token in the original text; and
the same pipeline with unaccent applied to each token instead (`unaccent="dictionary"`).
Must not touch: the parser's rules (`pg_parser.py`, `pg_parser_states.py`,
`pg_character_classes.py`), the unaccent map (`unaccent.py`), query syntax (`pg_query.py`),
or the profile registry (`profiles.py`).

Locale assumption: a UTF8 database with `LC_CTYPE = C.UTF-8` (glibc 2.36 locale data,
Unicode 14.0); checked against PostgreSQL 15.20 (the specification measured 15.18).

Two flavours (the `unaccent` option):

* `function` (the default): `to_tsvector('simple', unaccent(text))`, as tokenizers.md §4
  describes it: `unaccent()` runs on the whole text first, so it can change token
  boundaries (`«quote»` becomes `<<quote>>`, a tag, and is lost; `½` becomes `1/2`);
* `dictionary`: `to_tsvector(cfg, text)` for a configuration copied from `simple` whose
  every mapped token type goes through the `unaccent` dictionary, then `simple`. The
  parser reads the original text; each mapped token is unaccented (the same per-code-point
  map: the function calls the dictionary), then lowercased. The byte limit is measured on
  the parser token, before unaccent. This is what `engine.backends.postgres` creates
  (its package docstring says why), checked against the server by
  `tests/parity/test_pg_dictionary_profile.py`.

The rules (tokenizers.md §4):

* `unaccent()` runs on the whole text first (flavour `function`), or on each token
  (flavour `dictionary`).
* The `simple` configuration maps every parser token type except `blank`, `tag`,
  `protocol` and `entity`; unmapped tokens are dropped and take no position.
* A mapped token longer than 2047 bytes (UTF-8, measured after unaccent and before
  lowercasing) is dropped without a position (PostgreSQL: "word is too long to be indexed",
  "Words longer than 2047 characters are ignored"). Measured on 15.20: a 2047-byte token is
  kept and a 2048-byte one dropped (tokenizers.md §4.5 says "≥ 2047"; the server wins).
* Each remaining token takes the next position, from 1, capped at 16383 (a hyphenated word
  and each of its parts are separate tokens).
* The lexeme is the token lowercased code point by code point (glibc `towlower`; never
  `str.lower()` on a whole word: no final sigma, and `İ` U+0130 becomes `i`).
* Flavour `dictionary`: a token that unaccent deletes whole (U+0345 alone: a combining mark
  that is Alphabetic, so it can start a word) reaches `simple` empty, which PostgreSQL
  treats as a stop word: it takes its position and gives no lexeme. `tokens` lists it
  (text `''`, so that a token's index is its position minus one); `terms` and `tsvector`
  leave it out.
* The tsvector keeps, per lexeme, its distinct positions in increasing order, at most 255;
  lexemes are ordered by their UTF-8 bytes. Its size, computed as PostgreSQL does, must stay
  within 1,048,575 bytes, or `InputError` carries PostgreSQL's message.

Offsets: `Token.start`/`end` index the ORIGINAL text. Because unaccent changes lengths
(`ß` → `ss`, U+0301 → nothing), the analyzer keeps a map from each unaccented character back
to the original character that produced it; a token's span is the smallest original span
whose characters produced it (see `UnaccentedText.original_span`). Byte offsets are the same
span in UTF-8 (a lone surrogate counts 3 bytes). Token starts never decrease, but several
tokens can share one: a hyphenated word and its first part, or a URL and its host.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.analysis.pg_parser import DefaultParser
from engine.analysis.pg_token_types import TOKEN_ALIASES, ParsedToken
from engine.analysis.tables.pg_char_classes import LOWERCASE_EXCEPTIONS, PROBED_SERVER_VERSION
from engine.analysis.token import Token
from engine.analysis.unaccent import rule_count, unaccent, unaccent_with_sources
from engine.errors import InputError, UsageError

#: Token types the `simple` configuration does not index.
UNMAPPED_ALIASES = frozenset({"blank", "tag", "protocol", "entity"})
#: A parser token longer than this (bytes) is not indexed.
MAX_TOKEN_BYTES = 2047
#: Positions are clamped to this value.
MAX_POSITION = 16383
#: A lexeme keeps at most this many positions in a tsvector.
MAX_POSITIONS_PER_LEXEME = 255
#: The largest lexeme a tsvector entry can hold (11-bit length field).
MAX_LEXEME_BYTES = 2047
#: The largest tsvector string area, in bytes.
MAX_TSVECTOR_BYTES = 1048575


def utf8_length(text: str) -> int:
    """UTF-8 length in bytes, a lone surrogate counting as 3 bytes (its U+FFFD).

    >>> utf8_length("aé中😀")
    10
    """
    return len(text.encode("utf-8", "surrogatepass"))


def lowercase(word: str) -> str:
    """Lowercase one code point at a time, as glibc `towlower` in C.UTF-8.

    >>> lowercase("ΣΟΦΟΣ"), lowercase("İSTANBUL"), lowercase("ẞß")
    ('σοφοσ', 'istanbul', 'ßß')
    """
    return "".join(
        LOWERCASE_EXCEPTIONS.get(ord(character)) or character.lower() for character in word
    )


@dataclass(frozen=True, slots=True)
class _Indexed:
    """A mapped, short-enough parser token of the unaccented text, with its position."""

    parsed: ParsedToken
    text: str
    lexeme: str
    position: int


#: The `unaccent` option's values: the whole-text function, or a dictionary per token.
UNACCENT_FLAVOURS = ("function", "dictionary")


class PgSimpleUnaccentAnalyzer:
    """`to_tsvector('simple', unaccent(text))` as tokens, terms, and a tsvector; with
    `unaccent="dictionary"`, the per-token configuration's.

    >>> analyzer = PgSimpleUnaccentAnalyzer()
    >>> analyzer.terms("Café state-of-the-art")
    ['cafe', 'state-of-the-art', 'state', 'of', 'the', 'art']
    >>> analyzer.tsvector("a b a")
    {'a': [1, 3], 'b': [2]}
    >>> analyzer.terms("«Bonjour» ½"), PgSimpleUnaccentAnalyzer("dictionary").terms("«Bonjour» ½")
    (['1/2'], ['bonjour'])
    """

    name = "pg"

    def __init__(self, unaccent: str = "function") -> None:
        if unaccent not in UNACCENT_FLAVOURS:
            raise UsageError(f"pg profile: unaccent must be one of "
                             f"{', '.join(UNACCENT_FLAVOURS)}, not {unaccent!r}")
        self.unaccent = unaccent
        self._per_token = unaccent == "dictionary"

    def _parsed_text(self, text: str) -> str:
        """What the parser reads: the unaccented text, or the text itself."""
        return text if self._per_token else unaccent_with_sources(text).text

    def parse(self, text: str) -> list[tuple[str, str]]:
        """`ts_parse('default', unaccent(text))` (flavour `dictionary`: of `text`) as
        (alias, token text) pairs."""
        plain = self._parsed_text(text)
        return [
            (token.alias, plain[token.start:token.end])
            for token in DefaultParser(plain).tokens()
        ]

    def _indexed(self, plain: str) -> list[_Indexed]:
        indexed: list[_Indexed] = []
        position = 0
        for parsed in DefaultParser(plain).tokens():
            if TOKEN_ALIASES[parsed.type_id] in UNMAPPED_ALIASES:
                continue
            token_text = plain[parsed.start:parsed.end]
            if utf8_length(token_text) > MAX_TOKEN_BYTES:
                continue
            lexeme = lowercase(unaccent(token_text) if self._per_token else token_text)
            if utf8_length(lexeme) > MAX_LEXEME_BYTES:
                raise InputError(
                    f"word of {utf8_length(token_text)} bytes grows to "
                    f"{utf8_length(lexeme)} bytes when lowercased; PostgreSQL 15 would store "
                    f"a corrupt tsvector (max {MAX_LEXEME_BYTES} bytes per lexeme)"
                )
            position += 1
            indexed.append(_Indexed(parsed, token_text, lexeme, min(position, MAX_POSITION)))
        return indexed

    def tokens(self, text: str) -> list[Token]:
        """Every indexed token, with its PostgreSQL position and its original-text span.

        Every occurrence is listed, also beyond 255 per lexeme (the tsvector drops those).
        """
        mapped = None if self._per_token else unaccent_with_sources(text)
        byte_offsets = _ByteOffsets(text)
        result: list[Token] = []
        for item in self._indexed(text if mapped is None else mapped.text):
            if mapped is None:
                start, end = item.parsed.start, item.parsed.end
            else:
                start, end = mapped.original_span(item.parsed.start, item.parsed.end)
            result.append(
                Token(
                    text=item.lexeme,
                    position=item.position,
                    start=start,
                    end=end,
                    byte_start=byte_offsets.at(start),
                    byte_end=byte_offsets.at(end),
                    kind=f"pg:{item.parsed.alias}",
                )
            )
        return result

    def terms(self, text: str) -> list[str]:
        """The lexemes in text order (the `tokens` texts, without building offsets)."""
        return [item.lexeme for item in self._indexed(self._parsed_text(text)) if item.lexeme]

    def tsvector(self, text: str) -> dict[str, list[int]]:
        """`to_tsvector('simple', unaccent(text))`: lexeme → positions, lexemes in byte order.

        Raises `InputError` with PostgreSQL's wording when the tsvector would be too long.
        """
        plain = self._parsed_text(text)
        positions: dict[str, list[int]] = {}
        for item in self._indexed(plain):
            if item.lexeme:
                positions.setdefault(item.lexeme, []).append(item.position)
        vector: dict[str, list[int]] = {}
        for lexeme in sorted(positions, key=lambda word: word.encode("utf-8", "surrogatepass")):
            distinct = sorted(set(positions[lexeme]))
            vector[lexeme] = distinct[:MAX_POSITIONS_PER_LEXEME]
        size = tsvector_size(vector)
        if size > MAX_TSVECTOR_BYTES:
            raise InputError(
                f"string is too long for tsvector ({size} bytes, max {MAX_TSVECTOR_BYTES} bytes)"
            )
        return vector

    def describe(self) -> list[str]:
        version = PROBED_SERVER_VERSION.split()[0]
        where = "each token (dictionary)" if self._per_token else "whole text"
        return [
            f"unaccent: {where}, PostgreSQL 15 unaccent.rules ({rule_count()} rules)",
            f"parser: PostgreSQL default parser, C.UTF-8 (glibc 2.36, Unicode 14), {version}",
            "map: simple configuration; drop blank, tag, protocol, entity tokens",
            f"length: drop tokens longer than {MAX_TOKEN_BYTES} bytes, without a position",
            "lowercase: per code point (glibc towlower; U+0130 -> i; no final sigma)",
            f"positions: from 1, capped at {MAX_POSITION}; {MAX_POSITIONS_PER_LEXEME} per lexeme",
            "tsvector: lexemes sorted by UTF-8 bytes, distinct positions in order",
        ]


def tsvector_size(vector: dict[str, list[int]]) -> int:
    """The string-area size PostgreSQL checks against 1,048,575 bytes: per lexeme its
    bytes, then (when it has positions) alignment to 2 and 2 + 2 bytes per position.

    >>> tsvector_size({"a": [1], "bc": [2, 3]})
    14
    """
    size = 0
    for lexeme, positions in vector.items():
        size += utf8_length(lexeme)
        if positions:
            size += size % 2
            size += 2 + 2 * len(positions)
    return size


class _ByteOffsets:
    """UTF-8 byte offset of each character index of a text (computed once, on demand)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._offsets: list[int] | None = None

    def at(self, index: int) -> int:
        if self._offsets is None:
            offsets = [0]
            total = 0
            for character in self._text:
                code_point = ord(character)
                total += (
                    1 if code_point < 0x80 else 2 if code_point < 0x800
                    else 3 if code_point < 0x10000 else 4
                )
                offsets.append(total)
            self._offsets = offsets
        return self._offsets[index]
