"""The SQLite FTS5 `unicode61` tokenizer, rule for rule as SQLite 3.40.1 runs it.

Owns: the tokenizer (`Unicode61Tokenizer`): splitting a text into tokens with positions and
offsets, and describing its configuration. Its rules live in siblings, one concept each:
how a code point is read (`unicode61_code_points.py`), folding it (Unicode 6.1 simple case
folding, `remove_diacritics` 0/1/2) and the 32,768-byte term limit (`unicode61_folding.py`),
the `tokenchars`/`separators`/`categories` options (`unicode61_options.py`), and the
compiled fast path (`unicode61_patterns.py`) (tokenizers.md §1). Must not touch: ICU (every
table comes from the generated `engine.analysis.tables.unicode61_data`), query parsing,
storage or scoring.

Two implementations of the same rules live here:
* `Unicode61Tokenizer.tokens` walks the text one code point at a time, the way
  `fts5UnicodeTokenize` in `fts5_tokenize.c` walks UTF-8. It is the clear version and the
  test oracle.
* `Unicode61Tokenizer.terms`, `token_spans` and `spans` find token runs with a compiled regular
  expression (its character classes are computed from the same per-code-point rule) and fold
  each distinct raw token once with `str.translate`, through a cache. The first 20,000
  characters of non-ASCII text a process meets are walked by the clear version instead,
  since compiling the non-ASCII patterns costs as much (`CompiledTokenizer.walks_instead`).

Decisions this module documents (the real SQLite agrees with each; see the parity tests):
* Lone surrogates, U+FFFE and U+FFFF are read as U+FFFD (`unicode61_code_points.py`), and
  a term longer than 32,768 UTF-8 bytes is cut to 32,768 bytes (`unicode61_folding.py`);
  each module says how.
* A token whose every code point folds to nothing (possible only when a `categories` option
  makes the 25 marks token characters) is the empty term `""`. It still takes a position,
  as in FTS5 (whose `fts5vocab` shows it as NULL).
* `Token.kind` is `"number"` when every code point of the source span has the Unicode 6.1
  category `Nd` (decimal digits of any script), otherwise `"word"`.
* The `categories` option is parsed as SQLite 3.40.1 parses it (`unicode61_options.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain

from engine.analysis.tables import unicode61_data as data
from engine.analysis.token import Token
from engine.analysis.unicode61_code_points import category_of, effective_code_point, utf8_width
from engine.analysis.unicode61_folding import MAX_TERM_BYTES, fold_code_point, truncate_term
from engine.analysis.unicode61_options import DEFAULT_CATEGORIES, resolve_options
from engine.analysis.unicode61_patterns import compile_options, merge_intervals


#: The most entries each cache of a tokenizer holds (`Unicode61Tokenizer(cache_entries=)`):
#: enough for the words a corpus repeats, and never more however large the corpus grows.
CACHE_ENTRIES = 32_768


class Unicode61Tokenizer:
    """SQLite 3.40.1 FTS5 `unicode61` with the given options (tokenizers.md §1).

    >>> tokenizer = Unicode61Tokenizer(remove_diacritics=2)
    >>> tokenizer.terms("Café naïve work_team 🤯🥰 😀")
    ['cafe', 'naive', 'work', 'team', '🤯🥰']
    >>> [(t.text, t.position, t.start, t.end, t.byte_start, t.byte_end)
    ...  for t in tokenizer.tokens("Ünïcode 61")]
    [('unicode', 0, 0, 7, 0, 9), ('61', 1, 8, 10, 10, 12)]
    """

    name = "unicode61"

    def __init__(
        self,
        remove_diacritics: int = 1,
        tokenchars: str = "",
        separators: str = "",
        categories: str | None = None,
        cache_entries: int = CACHE_ENTRIES,
    ) -> None:
        """`cache_entries`: the most entries each of its caches holds (the pieces'
        terms, `PieceTerms`, and the fold cache of raw tokens, `CompiledTokenizer.fold_all`);
        any whole number from 1 gives the same terms."""
        self.options = resolve_options(remove_diacritics, tokenchars, separators, categories)
        self.remove_diacritics = remove_diacritics
        self.tokenchars = tokenchars
        self.separators = separators
        self.categories = categories
        self._compiled = compile_options(self.options)
        ascii_table = self.options.ascii_token_characters
        #: ASCII text may be lowered before splitting (the fast `terms`) when unicode61's
        #: folding of ASCII is exactly `str.lower` and every letter is a token character
        #: exactly when its lower case is (true unless tokenchars/separators say otherwise).
        self._ascii_lower_first = all(
            ascii_table[code_point] == ascii_table[code_point + 32]
            for code_point in range(ord("A"), ord("Z") + 1)
        ) and all(
            fold_code_point(code_point, remove_diacritics) == chr(code_point).lower()
            for code_point in range(128)
        )
        #: `bytes.translate` table of the fastest ASCII path (None: not allowed): a token
        #: character to its folded (lower) self, any other byte to a space, so that
        #: `str.split` finds exactly the runs the ASCII pattern finds. Allowed when
        #: lowering first is, and no character `str.split` splits at is a token
        #: character (a `tokenchars` option could make a tab one).
        self._ascii_split_table: bytes | None = None
        self.cache_entries = cache_entries
        self._piece_terms = PieceTerms(self._general_terms, cache_entries)
        if self._ascii_lower_first and not any(
                ascii_table[code_point] for code_point in range(128) if chr(code_point).isspace()):
            self._ascii_split_table = bytes(
                code_point if code_point >= 128  # a byte of a non-ASCII character: kept
                else ord(chr(code_point).lower()) if ascii_table[code_point]
                else 0x20 for code_point in range(256))

    # -- the clear version ------------------------------------------------------------

    def tokens(self, text: str) -> list[Token]:
        """Walk `text` one code point at a time, as `fts5UnicodeTokenize` walks UTF-8."""
        options = self.options
        tokens: list[Token] = []
        index = 0
        byte_offset = 0
        length = len(text)
        while True:
            while index < length and not options.starts_token(ord(text[index])):
                byte_offset += utf8_width(effective_code_point(ord(text[index])))
                index += 1
            if index >= length:
                return tokens
            start, byte_start = index, byte_offset
            pieces: list[str] = []
            while index < length and options.continues_token(ord(text[index])):
                code_point = effective_code_point(ord(text[index]))
                pieces.append(fold_code_point(code_point, options.remove_diacritics))
                byte_offset += utf8_width(code_point)
                index += 1
            span = text[start:index]
            is_number = all(category_of(ord(character)) == "Nd" for character in span)
            tokens.append(
                Token(
                    text=truncate_term("".join(pieces)),
                    position=len(tokens),
                    start=start,
                    end=index,
                    byte_start=byte_start,
                    byte_end=byte_offset,
                    kind="number" if is_number else "word",
                )
            )

    # -- the fast version -------------------------------------------------------------

    def terms(self, text: str) -> list[str]:
        """The folded terms of `text`; equal to `[t.text for t in self.tokens(text)]`."""
        if self._ascii_lower_first and text.isascii() and len(text) <= MAX_TERM_BYTES:
            # ASCII terms fold by lowering and are never long enough to be cut; one
            # translate of the bytes folds and blanks in C, and `split` cuts the runs
            # (the pattern's `findall` is the same answer, twice as slow).
            table = self._ascii_split_table
            if table is not None:
                return text.encode("ascii").translate(table).decode("ascii").split()
            return self._compiled.ascii_pattern.findall(text.lower())
        table = self._ascii_split_table
        if table is not None and len(text) <= MAX_TERM_BYTES // 4:
            return self._pieces_terms(text, table)
        return self._general_terms(text)

    def _general_terms(self, text: str) -> list[str]:
        """`terms` of any text: the pattern of its code points, or the clear walk."""
        if self._compiled.walks_instead(text):
            return [token.text for token in self.tokens(text)]
        pattern, prepared = self._compiled.prepare(text)
        return self._compiled.fold_all(pattern.findall(prepared), self.cache_entries)

    def _pieces_terms(self, text: str, table: bytes) -> list[str]:
        """`terms` of a text holding non-ASCII characters, most of it ASCII as a rule:
        its UTF-8 bytes are cut at ASCII separators by the ASCII path's translate and
        split (a separator never belongs to a token, so no token spans two pieces); a
        piece of ASCII only is one term (lowered by the translate), a piece holding a
        non-ASCII character is split by the general path (`_general_terms`; ASCII
        letters fold to their lower case either way). Each piece's terms are looked up
        in C through a cache of pieces (`PieceTerms`: natural text repeats its words).
        Too short for a term to be cut (`MAX_TERM_BYTES`), which the caller checks."""
        pieces = text.encode("utf-8", "surrogatepass").translate(table).decode(
            "utf-8", "surrogatepass").split()
        cache = self._piece_terms
        if len(cache) >= cache.entries:
            cache.clear()
        return list(chain.from_iterable(map(cache.__getitem__, pieces)))

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) per token, indexing `text`: `token_spans` without folding the
        terms (an excerpt needs only where its tokens are)."""
        if self._compiled.walks_instead(text):
            return [(token.start, token.end) for token in self.tokens(text)]
        pattern, prepared = self._compiled.prepare(text)
        return [match.span() for match in pattern.finditer(prepared)]

    def token_spans(self, text: str) -> list[tuple[str, int, int]]:
        """(term, start, end) per token, `start`/`end` indexing `text`."""
        if self._compiled.walks_instead(text):
            return [(token.text, token.start, token.end) for token in self.tokens(text)]
        pattern, prepared = self._compiled.prepare(text)
        matches = list(pattern.finditer(prepared))
        folded = self._compiled.fold_all([match.group() for match in matches], self.cache_entries)
        return [
            (term, match.start(), match.end()) for term, match in zip(folded, matches, strict=True)
        ]

    # -- description ------------------------------------------------------------------

    def fts5_tokenize_option(self) -> str:
        """The equivalent FTS5 `tokenize` argument, e.g. for `CREATE VIRTUAL TABLE`.

        >>> Unicode61Tokenizer(2, tokenchars="'-").fts5_tokenize_option()
        "unicode61 remove_diacritics 2 tokenchars '''-'"
        """
        parts = [f"unicode61 remove_diacritics {self.remove_diacritics}"]
        if self.categories is not None:
            parts.append(f"categories {quote_option(self.categories)}")
        if self.tokenchars:
            parts.append(f"tokenchars {quote_option(self.tokenchars)}")
        if self.separators:
            parts.append(f"separators {quote_option(self.separators)}")
        return " ".join(parts)

    def describe(self) -> list[str]:
        """One line per stage, in the order the stages run."""
        categories = DEFAULT_CATEGORIES if self.categories is None else self.categories
        mode = {
            0: "keep diacritics",
            1: "strip one diacritic from Latin letters (remove_diacritics 1)",
            2: "strip any number of diacritics from Latin letters (remove_diacritics 2)",
        }[self.remove_diacritics]
        return [
            "decode: code points; lone surrogates, U+FFFE and U+FFFF read as U+FFFD",
            (
                f"split: token characters = Unicode 6.1 categories {categories!r} + Cn "
                f"(SQLite {data.SQLITE_VERSION} table); ASCII token characters "
                f"{ascii_summary(self.options.ascii_token_characters)!r}; "
                f"{len(self.options.exceptions)} non-ASCII exceptions"
            ),
            "continue: 25 combining marks (U+0300..U+0331) continue a token, never start one",
            "fold: Unicode 6.1 simple case folding (BMP + Deseret)",
            f"diacritics: {mode}",
            f"truncate: terms to {MAX_TERM_BYTES} UTF-8 bytes (FTS5_MAX_TOKEN_SIZE)",
        ]

    def __repr__(self) -> str:
        return f"Unicode61Tokenizer({self.fts5_tokenize_option()!r})"


class PieceTerms(dict[str, tuple[str, ...]]):
    """The terms of a piece of text cut at ASCII separators, made on a miss: the piece
    itself when it is ASCII, else what `split` (the general path) makes of it. Holds at
    most `entries` pieces: a miss past them is made and not kept (the caller empties a
    full cache before a text).

    >>> pieces = PieceTerms(lambda piece: piece.replace("\u00bf", " ").split(), entries=1)
    >>> pieces["word"], pieces["\u00bfqu\u00e9"], len(pieces)
    (('word',), ('qué',), 1)
    """

    def __init__(self, split: Callable[[str], list[str]], entries: int) -> None:
        super().__init__()
        self.split = split
        self.entries = entries

    def __missing__(self, piece: str) -> tuple[str, ...]:
        terms = (piece,) if piece.isascii() else tuple(self.split(piece))
        if len(self) < self.entries:
            self[piece] = terms
        return terms


def quote_option(value: str) -> str:
    """Quote an FTS5 tokenizer argument: wrap in `'` and double every `'`.

    >>> quote_option("it's")
    "'it''s'"
    """
    return "'" + value.replace("'", "''") + "'"


def ascii_summary(table: tuple[bool, ...]) -> str:
    """The ASCII token characters as a compact range list.

    >>> ascii_summary(tuple(chr(i).isalnum() for i in range(128)))
    '0-9A-Za-z'
    """
    intervals = merge_intervals((i, i) for i in range(128) if table[i])
    return "".join(
        chr(low) if low == high else f"{chr(low)}-{chr(high)}" for low, high in intervals
    )
