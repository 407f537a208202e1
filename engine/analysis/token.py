"""The immutable `Token` and the `Analyzer` interface every profile implements.

Owns: the value a tokenizer produces and the contract an analyzer keeps. Must not touch:
any tokenization rule (those live in the profile modules).

Invariants of a `Token` produced from a text `t`:
* `0 <= start < end <= len(t)` index the *original* `str` (code points), so
  `t[start:end]` is the source span of the token, whatever filters did to `text`;
* `byte_start`/`byte_end` are the same span in the UTF-8 encoding of `t` (what FTS5
  reports; lone surrogates count as the 3 bytes of U+FFFD);
* `position` is the token's 0-based index among the tokens of `t` for `unicode61` and
  `icu`, and the PostgreSQL position (from 1) for `pg`;
* tokens come in non-decreasing `start` order (`pg` compounds share a start with their
  first part, e.g. a hyphenated word and its first half, a URL and its host).

`Token` is a NamedTuple, not a frozen dataclass: every search imports this module (a
NamedTuple's class costs a fraction of a dataclass's to make), and a tokenizer makes one
per token, which a tuple does in one C call. It reads as the dataclass did (fields by
name, keywords, repr, immutable); unlike the dataclass it also equals, and sorts
against, a plain tuple of the same values, which nothing compares it with, and nothing
unpacks or indexes one.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

#: Token kinds. `unicode61` and `pg` tag everything `word` or `number`; `icu` also uses
#: `ideographic`, `kana`, `hangul` and `southeast-asian`; `pg` may add its parser type in
#: `Token.kind` as `pg:<alias>` (e.g. `pg:asciiword`).
TOKEN_KINDS = ("word", "number", "ideographic", "kana", "hangul", "southeast-asian")


class Token(NamedTuple):
    """One token: its indexed text, its position and where it came from in the source."""

    text: str
    position: int
    start: int
    end: int
    byte_start: int
    byte_end: int
    kind: str = "word"


class Analyzer(Protocol):
    """A named chain of stages, used identically at index time and at query time."""

    name: str

    def tokens(self, text: str) -> list[Token]:
        """All tokens of `text`, in order, with offsets into `text`."""
        ...

    def terms(self, text: str) -> list[str]:
        """Only the token texts, in order; equal to `[t.text for t in tokens(text)]`.

        Profiles may implement this with a faster path; the `tokens` version is its
        test oracle.
        """
        ...

    def describe(self) -> list[str]:
        """One line per stage, in the order the stages run."""
        ...


