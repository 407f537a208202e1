"""The token types of PostgreSQL's `default` text-search parser, and the typed token it returns.

Owns: the token type ids and aliases (as `ts_token_type('default')`) and `ParsedToken`, a
token's type and its span in the parsed text. Must not touch: how tokens are found
(`pg_parser.py`, `pg_parser_states.py`) or what becomes of them (`pg_profile.py`).

Token types, by id (as `ts_token_type('default')`): 1 asciiword, 2 word, 3 numword, 4 email,
5 url, 6 host, 7 sfloat, 8 version, 9 hword_numpart, 10 hword_part, 11 hword_asciipart,
12 blank, 13 tag, 14 protocol, 15 numhword, 16 asciihword, 17 hword, 18 url_path, 19 file,
20 float, 21 int, 22 uint, 23 entity.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Token type aliases indexed by PostgreSQL's numeric token id.
TOKEN_ALIASES: tuple[str, ...] = (
    "",
    "asciiword", "word", "numword", "email", "url", "host", "sfloat", "version",
    "hword_numpart", "hword_part", "hword_asciipart", "blank", "tag", "protocol",
    "numhword", "asciihword", "hword", "url_path", "file", "float", "int", "uint", "entity",
)
TOKEN_IDS: dict[str, int] = {alias: index for index, alias in enumerate(TOKEN_ALIASES) if alias}


@dataclass(frozen=True, slots=True)
class ParsedToken:
    """A token of the parser: its type id, and its span in the parsed text."""

    type_id: int
    start: int
    end: int

    @property
    def alias(self) -> str:
        return TOKEN_ALIASES[self.type_id]
