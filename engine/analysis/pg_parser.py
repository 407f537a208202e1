"""The PostgreSQL 15 `default` text-search parser, as a pure-Python state machine.

Owns: splitting a text into the typed tokens `ts_parse('default', text)` returns (alias and
text), with the character-class provider that decides what a letter, a digit, a space and a
"special" (word-continuing, zero-width) character are. Must not touch: unaccent, lowercasing,
positions or the tsvector (those live in `pg_profile.py`), and anything outside `analysis`.

Locale assumption: a UTF8 database with `LC_CTYPE = C.UTF-8` (glibc 2.36, Unicode 14.0), as
probed from PostgreSQL 15.20 by `tables/generate_pg.py`. Another glibc, or a `C` locale,
changes the classes (see tokenizers.md §4.2); only C.UTF-8 is modelled (the analyzer's
lowercasing is C.UTF-8's too).

How the machine works (the behaviour was reverse-engineered with `ts_parse` and checked
against the server; the shape follows the upstream parser so that its quirks come out the
same):

* The parser reads code points left to right. Its state is a *stack of frames*; a frame is a
  read position, the length of the token so far, a state name, and (for a frame that saved a
  checkpoint) the index of the rule that saved it.
* Each state has an ordered list of rules. A rule is a test on the current character (or on
  end of input, or a look-ahead sub-parse) and what to do when it matches. The first rule
  whose test passes fires. Its effects, in order:
  - an optional hook runs (script/style tag tracking, or rewinding the read position);
  - ``EMIT``: the token so far (from where this call started) is the result, with the
    rule's token type; the frame's token length restarts at 0;
  - at most one stack operation: ``BACKTRACK`` (drop the top frame and retry the frame
    below, starting at the rule after the one that saved it), ``SAVE`` (keep the current
    frame as a checkpoint and continue on a copy), ``FORGET_ONE`` (drop the checkpoint just
    below the top), ``FORGET_ALL`` (drop every checkpoint), ``MERGE`` (fold the top frame's
    position into the checkpoint below and drop the top);
  - the top frame moves to the rule's next state, if it names one;
  - the call ends after an ``EMIT``, or at end of input (unless the rule says ``STAY``);
  - otherwise, unless the rule was ``BACKTRACK`` or ``STAY``, the frame consumes the
    character.
* One call returns one token (or nothing at the end); the next call starts where the top
  frame stands, in the state the previous call left it.
* Two tests run a nested parser on the rest of the text: "a host follows" (used after `@`)
  and "a URL path follows" (used after `host/`).

Token types, by id (as `ts_token_type('default')`): 1 asciiword, 2 word, 3 numword, 4 email,
5 url, 6 host, 7 sfloat, 8 version, 9 hword_numpart, 10 hword_part, 11 hword_asciipart,
12 blank, 13 tag, 14 protocol, 15 numhword, 16 asciihword, 17 hword, 18 url_path, 19 file,
20 float, 21 int, 22 uint, 23 entity.

Input that PostgreSQL text cannot hold (U+0000, lone surrogates) is accepted here and acts
like any other non-letter separator; the PostgreSQL backend must clean such text before it
reaches the server.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from enum import IntFlag
from functools import lru_cache
from itertools import pairwise
from typing import Protocol

from engine.analysis.tables import pg_char_classes

#: Token type aliases indexed by PostgreSQL's numeric token id.
TOKEN_ALIASES: tuple[str, ...] = (
    "",
    "asciiword", "word", "numword", "email", "url", "host", "sfloat", "version",
    "hword_numpart", "hword_part", "hword_asciipart", "blank", "tag", "protocol",
    "numhword", "asciihword", "hword", "url_path", "file", "float", "int", "uint", "entity",
)
TOKEN_IDS: dict[str, int] = {alias: index for index, alias in enumerate(TOKEN_ALIASES) if alias}

# Character classes (one per code point; the sets are disjoint).
OTHER, LETTER, DIGIT, SPECIAL, SPACE = 0, 1, 2, 3, 4

MAX_CODE_POINT = 0x10FFFF
URL_FORBIDDEN = frozenset('"<>\\^`{|}')
HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


class CharacterClasses(Protocol):
    """What the parser asks about a code point (the locale's `isw*()` classes)."""

    def class_of(self, code_point: int) -> int:
        """One of OTHER, LETTER, DIGIT, SPECIAL, SPACE."""
        ...


@dataclass(frozen=True, slots=True)
class RangeTableClasses:
    """Classes looked up in sorted inclusive ranges (letters, specials, spaces); digits are
    ASCII `0-9` only.

    >>> classes = c_utf8_classes()
    >>> [classes.class_of(ord(c)) for c in "a1\\u0301 \\u00a0\\u0661"]
    [1, 2, 3, 4, 0, 1]
    """

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    kinds: tuple[int, ...]

    def class_of(self, code_point: int) -> int:
        if 0x30 <= code_point <= 0x39:
            return DIGIT
        index = bisect_right(self.starts, code_point) - 1
        if index >= 0 and code_point <= self.ends[index]:
            return self.kinds[index]
        return OTHER


def _range_table(tagged: list[tuple[int, int, int]]) -> RangeTableClasses:
    tagged.sort()
    for (_, last, _), (next_first, _, _) in pairwise(tagged):
        if next_first <= last:
            raise ValueError(f"overlapping class ranges at U+{next_first:04X}")
    return RangeTableClasses(
        starts=tuple(first for first, _, _ in tagged),
        ends=tuple(last for _, last, _ in tagged),
        kinds=tuple(kind for _, _, kind in tagged),
    )


@lru_cache(maxsize=1)
def c_utf8_classes() -> RangeTableClasses:
    """The C.UTF-8 classes probed from the server (the default provider)."""
    tagged = [(first, last, LETTER) for first, last in pg_char_classes.ALPHA_RANGES]
    tagged += [(first, last, SPECIAL) for first, last in pg_char_classes.SPECIAL_RANGES]
    tagged += [(first, last, SPACE) for first, last in pg_char_classes.SPACE_RANGES]
    return _range_table(tagged)


# ---------------------------------------------------------------------------------------
# Rules


class Step(IntFlag):
    """What a rule does besides choosing the next state (see the module docstring)."""

    CONSUME = 0
    EMIT = 1
    BACKTRACK = 2
    SAVE = 4
    STAY = 8
    FORGET_ONE = 16
    MERGE = 32
    FORGET_ALL = 64


# Symbolic tests; a one-character string is the test "the current character is exactly
# this ASCII character".
END = "<end>"
ANY = "<any>"
IS_LETTER = "<letter>"
IS_ASCII_LETTER = "<ascii-letter>"
IS_DIGIT = "<digit>"
IS_ALNUM = "<alnum>"
IS_NOT_ALNUM = "<not-alnum>"
IS_SPACE = "<space>"
IS_SPECIAL = "<special>"
IS_HEX = "<hex>"
IS_URL_CHAR = "<url-char>"
IGNORING = "<inside-script-or-style>"
HOST_WANTED = "<host-wanted>"
HOST_FOLLOWS = "<host-follows>"
URL_PATH_FOLLOWS = "<url-path-follows>"

# Hooks.
TRACK_SCRIPT_TAGS = "track-script-tags"
REWIND_FOR_URL = "rewind-for-url"
REWIND_FOR_PARTS = "rewind-for-parts"
REWIND_FOR_VERSION = "rewind-for-version"


@dataclass(frozen=True, slots=True)
class Rule:
    """Test, then steps (`Step` bits as a plain int, for speed), next state, token, hook."""

    test: str
    step: int = 0
    then: str | None = None
    emits: str | None = None
    hook: str | None = None


def on(test: str, then: str | None = None, step: Step = Step.CONSUME,
       emits: str | None = None, hook: str | None = None) -> Rule:
    return Rule(test, int(step), then, emits, hook)


def save(test: str, then: str) -> Rule:
    return Rule(test, int(Step.SAVE), then)


def backtrack(test: str = ANY) -> Rule:
    return Rule(test, int(Step.BACKTRACK))


def emit(test: str, alias: str, then: str = "base", step: Step = Step.CONSUME,
         hook: str | None = None) -> Rule:
    return Rule(test, int(step | Step.EMIT), then, alias, hook)


# The step bits as plain ints for the machine's inner loop.
_EMIT, _BACKTRACK, _SAVE = int(Step.EMIT), int(Step.BACKTRACK), int(Step.SAVE)
_STAY, _FORGET_ONE = int(Step.STAY), int(Step.FORGET_ONE)
_MERGE, _FORGET_ALL = int(Step.MERGE), int(Step.FORGET_ALL)


F1, FALL = Step.FORGET_ONE, Step.FORGET_ALL

# The states. Comments say what has been read when the state is current.
STATES: dict[str, tuple[Rule, ...]] = {
    # Between tokens.
    "base": (
        on(END), save("<", "tag_first"), on(IGNORING, "blank"),
        on(IS_ASCII_LETTER, "ascii_word"), on(IS_LETTER, "word"), on(IS_DIGIT, "unsigned_int"),
        save("-", "signed_int_first"), save("+", "signed_int_first"),
        save("&", "entity_first"), save("~", "file_tilde"), save("/", "file_first"),
        save(".", "dot_path_first"), on(ANY, "blank"),
    ),
    # Letters and ASCII digits mixed.
    "num_word": (
        emit(END, "numword"), on(IS_ALNUM, "num_word"), on(IS_SPECIAL, "num_word"),
        save("@", "email"), save("/", "file_first"), save(".", "file_next"),
        save("-", "hyphen_num_word_first"), emit(ANY, "numword"),
    ),
    # ASCII letters only.
    "ascii_word": (
        emit(END, "asciiword"), on(IS_ASCII_LETTER),
        save(".", "host_first_domain"), save(".", "file_next"),
        save("-", "host_first_alnum"), save("-", "hyphen_ascii_word_first"),
        save("_", "host_first_alnum"), save("@", "email"), save(":", "protocol_first"),
        save("/", "file_first"), save(IS_DIGIT, "host"), on(IS_DIGIT, "num_word"),
        on(IS_LETTER, "word"), on(IS_SPECIAL, "word"), emit(ANY, "asciiword"),
    ),
    # Letters (some non-ASCII) and specials.
    "word": (
        emit(END, "word"), on(IS_LETTER), on(IS_SPECIAL), on(IS_DIGIT, "num_word"),
        save("-", "hyphen_word_first"), emit(ANY, "word"),
    ),
    "unsigned_int": (
        emit(END, "uint"), on(IS_DIGIT),
        save(".", "host_first_domain"), save(".", "unsigned_decimal_first"),
        save("e", "mantissa_first"), save("E", "mantissa_first"),
        save("-", "host_first_alnum"), save("_", "host_first_alnum"), save("@", "email"),
        save(IS_ASCII_LETTER, "host"), on(IS_LETTER, "num_word"), on(IS_SPECIAL, "num_word"),
        save("/", "file_first"), emit(ANY, "uint"),
    ),
    # A sign; a digit must follow.
    "signed_int_first": (backtrack(END), on(IS_DIGIT, "signed_int", F1), backtrack()),
    "signed_int": (
        emit(END, "int"), on(IS_DIGIT), save(".", "decimal_first"),
        save("e", "mantissa_first"), save("E", "mantissa_first"), emit(ANY, "int"),
    ),
    # Separators (and everything inside <script>/<style>).
    "blank": (
        emit(END, "blank"), emit("<", "blank"), on(IGNORING),
        emit("-", "blank"), emit("+", "blank"), emit("&", "blank"), emit("/", "blank"),
        on(IS_NOT_ALNUM, "blank"), emit(ANY, "blank"),
    ),
    "unsigned_decimal_first": (
        backtrack(END), on(IS_DIGIT, "unsigned_decimal", F1), backtrack(),
    ),
    "unsigned_decimal": (
        emit(END, "float"), on(IS_DIGIT, "unsigned_decimal"), save(".", "version_first"),
        save("e", "mantissa_first"), save("E", "mantissa_first"), emit(ANY, "float"),
    ),
    "decimal_first": (backtrack(END), on(IS_DIGIT, "decimal", F1), backtrack()),
    "decimal": (
        emit(END, "float"), on(IS_DIGIT, "decimal"), save(".", "signed_version"),
        save("e", "mantissa_first"), save("E", "mantissa_first"), emit(ANY, "float"),
    ),
    # "-1.2." + digit: a signed number cannot be a version; restart the token so that the
    # sign comes out as a blank and the digits as a version.
    "signed_version": (
        backtrack(END),
        on(IS_DIGIT, "signed_version_sign", Step.STAY, hook=REWIND_FOR_VERSION),
        backtrack(),
    ),
    "signed_version_sign": (
        backtrack(END), emit(IS_DIGIT, "blank", "unsigned_int", FALL), on(ANY),
    ),
    "version_first": (backtrack(END), on(IS_DIGIT, "version", F1), backtrack()),
    "version": (
        emit(END, "version"), on(IS_DIGIT, "version"), save(".", "version_first"),
        emit(ANY, "version"),
    ),
    "mantissa_first": (
        backtrack(END), on(IS_DIGIT, "mantissa", F1),
        on("+", "mantissa_sign"), on("-", "mantissa_sign"), backtrack(),
    ),
    "mantissa_sign": (backtrack(END), on(IS_DIGIT, "mantissa", F1), backtrack()),
    "mantissa": (emit(END, "sfloat"), on(IS_DIGIT, "mantissa"), emit(ANY, "sfloat")),
    # XML entities: &name; &#123; &#x1F;
    "entity_first": (
        backtrack(END), on("#", "entity_number_first"), on(IS_ASCII_LETTER, "entity"),
        on(":", "entity"), on("_", "entity"), backtrack(),
    ),
    "entity": (
        backtrack(END), on(IS_ALNUM, "entity"), on(":", "entity"), on("_", "entity"),
        on(".", "entity"), on("-", "entity"), on(";", "entity_end"), backtrack(),
    ),
    "entity_number_first": (
        backtrack(END), on("x", "entity_hex_first"), on("X", "entity_hex_first"),
        on(IS_DIGIT, "entity_number"), backtrack(),
    ),
    "entity_hex_first": (backtrack(END), on(IS_HEX, "entity_hex"), backtrack()),
    "entity_number": (
        backtrack(END), on(IS_DIGIT, "entity_number"), on(";", "entity_end"), backtrack(),
    ),
    "entity_hex": (
        backtrack(END), on(IS_HEX, "entity_hex"), on(";", "entity_end"), backtrack(),
    ),
    "entity_end": (emit(ANY, "entity", step=F1),),
    # Tags, comments, <?xml ...>, <!DOCTYPE ...>.
    "tag_first": (
        backtrack(END), save("/", "tag_close_first"), save("!", "comment_first"),
        save("?", "xml_begin"), save(IS_ASCII_LETTER, "tag_name"), save(":", "tag_name"),
        save("_", "tag_name"), backtrack(),
    ),
    "xml_begin": (backtrack(END), on("x", "tag"), backtrack()),
    "tag_close_first": (backtrack(END), on(IS_ASCII_LETTER, "tag_name"), backtrack()),
    "tag_name": (
        backtrack(END), on("/", "tag_self_closing"),
        on(">", "tag_end", hook=TRACK_SCRIPT_TAGS), on(IS_SPACE, "tag", hook=TRACK_SCRIPT_TAGS),
        on(IS_ALNUM), on(":"), on("_"), on("."), on("-"), backtrack(),
    ),
    "tag_self_closing": (backtrack(END), on(">", "tag_end"), backtrack()),
    "tag": (
        backtrack(END), on(">", "tag_end", hook=TRACK_SCRIPT_TAGS),
        on("'", "tag_single_quoted"), on('"', "tag_double_quoted"),
        on(IS_ASCII_LETTER), on(IS_DIGIT), on("="), on("-"), on("_"), on("#"), on("/"),
        on(":"), on("."), on("&"), on("?"), on("%"), on("~"),
        on(IS_SPACE, hook=TRACK_SCRIPT_TAGS), backtrack(),
    ),
    "tag_single_quoted": (
        backtrack(END), save("\\", "tag_escaped"), on("'", "tag"),
        on(ANY, "tag_single_quoted"),
    ),
    "tag_double_quoted": (
        backtrack(END), save("\\", "tag_escaped"), on('"', "tag"),
        on(ANY, "tag_double_quoted"),
    ),
    "tag_escaped": (backtrack(END), on(ANY, step=Step.MERGE)),
    "tag_end": (emit(ANY, "tag", step=FALL),),
    "comment_first": (
        backtrack(END), on("-", "comment_second_dash"), on("D", "tag"), on("d", "tag"),
        backtrack(),
    ),
    "comment_second_dash": (backtrack(END), on("-", "comment"), backtrack()),
    "comment": (backtrack(END), on("-", "comment_closing_dash"), on(ANY)),
    "comment_closing_dash": (backtrack(END), on("-", "comment_closing"), on(ANY, "comment")),
    "comment_closing": (
        backtrack(END), on("-"), on(">", "comment_end"), on(ANY, "comment"),
    ),
    "comment_end": (emit(ANY, "tag", step=FALL),),
    # Hosts: labels of ASCII letters/digits joined by '.', '-', '_'; optional :port.
    "host_first_domain": (
        backtrack(END), on(IS_ASCII_LETTER, "host_domain_second"), on(IS_DIGIT, "host"),
        backtrack(),
    ),
    "host_domain_second": (
        backtrack(END), on(IS_ASCII_LETTER, "host_domain"), save(IS_DIGIT, "host"),
        save("-", "host_first_alnum"), save("_", "host_first_alnum"),
        save(".", "host_first_domain"), save("@", "email"), backtrack(),
    ),
    "host_domain": (
        emit(END, "host", step=FALL), on(IS_ASCII_LETTER, "host_domain"),
        save(IS_DIGIT, "host"), save(":", "port_first"), save("-", "host_first_alnum"),
        save("_", "host_first_alnum"), save(".", "host_first_domain"), save("@", "email"),
        backtrack(IS_DIGIT), emit(HOST_WANTED, "host", "url_path_start", FALL),
        save("/", "full_url"), emit(ANY, "host", step=FALL),
    ),
    "port_first": (backtrack(END), on(IS_DIGIT, "port"), backtrack()),
    "port": (
        emit(END, "host", step=FALL), on(IS_DIGIT, "port"),
        emit(HOST_WANTED, "host", "url_path_start", FALL), save("/", "full_url"),
        emit(ANY, "host", step=FALL),
    ),
    "host_first_alnum": (
        backtrack(END), on(IS_DIGIT, "host"), on(IS_ASCII_LETTER, "host"), backtrack(),
    ),
    "host": (
        backtrack(END), on(IS_DIGIT, "host"), on(IS_ASCII_LETTER, "host"),
        save("@", "email"), save(".", "host_first_domain"), save("-", "host_first_alnum"),
        save("_", "host_first_alnum"), backtrack(),
    ),
    "email": (
        backtrack(HOST_WANTED), emit(HOST_FOLLOWS, "email", step=FALL), backtrack(),
    ),
    # File paths.
    "file_first": (
        backtrack(END), on(IS_ASCII_LETTER, "file"), on(IS_DIGIT, "file"),
        on(".", "path_first"), on("_", "file"), save("~", "file_tilde"), backtrack(),
    ),
    "file_tilde": (
        backtrack(END), on(IS_ASCII_LETTER, "file"), on(IS_DIGIT, "file"), on("_", "file"),
        on("/", "file_first"), backtrack(),
    ),
    "path_first": (
        backtrack(END), on(IS_ASCII_LETTER, "file"), on(IS_DIGIT, "file"), on("_", "file"),
        on(".", "path_second"), on("/", "file_first"), backtrack(),
    ),
    "dot_path_first": (
        backtrack(END), on(".", "path_second"), on("/", "file_first"), backtrack(),
    ),
    "path_second": (
        emit(END, "file", step=F1), save("/", "file_first"), emit("/", "file", step=F1),
        emit(IS_SPACE, "file", step=F1), backtrack(),
    ),
    "file": (
        emit(END, "file"), on(IS_ASCII_LETTER, "file"), on(IS_DIGIT, "file"),
        save(".", "file_next"), on("_", "file"), on("-", "file"), save("/", "file_first"),
        emit(ANY, "file"),
    ),
    "file_next": (
        backtrack(END), on(IS_ASCII_LETTER, "file", F1), on(IS_DIGIT, "file", F1),
        on("_", "file", F1), backtrack(),
    ),
    # URLs: host + path; the path alone after the host has been reported.
    "url_path_first": (backtrack(END), on(IS_URL_CHAR, "url_path"), backtrack()),
    "url_path_start": (on(ANY, "url_path"),),
    "url_path": (emit(END, "url_path"), on(IS_URL_CHAR, "url_path"), emit(ANY, "url_path")),
    "full_url": (
        backtrack(END),
        emit(URL_PATH_FOLLOWS, "url", step=FALL, hook=REWIND_FOR_URL),
        backtrack(),
    ),
    "protocol_first": (backtrack(END), on("/", "protocol_second"), backtrack()),
    "protocol_second": (backtrack(END), on("/", "protocol_end"), backtrack()),
    "protocol_end": (emit(ANY, "protocol", step=FALL),),
    # Hyphenated words: first the whole word, then (rewound) its parts.
    "hyphen_ascii_word_first": (
        backtrack(END), on(IS_ASCII_LETTER, "hyphen_ascii_word"),
        on(IS_LETTER, "hyphen_word"), on(IS_DIGIT, "hyphen_digits"), backtrack(),
    ),
    "hyphen_ascii_word": (
        emit(END, "asciihword", "hyphen_parts", FALL, REWIND_FOR_PARTS),
        on(IS_ASCII_LETTER, "hyphen_ascii_word"), on(IS_LETTER, "hyphen_word"),
        on(IS_SPECIAL, "hyphen_word"), on(IS_DIGIT, "hyphen_num_word"),
        save("-", "hyphen_ascii_word_first"),
        emit(ANY, "asciihword", "hyphen_parts", FALL, REWIND_FOR_PARTS),
    ),
    "hyphen_word_first": (
        backtrack(END), on(IS_LETTER, "hyphen_word"), on(IS_DIGIT, "hyphen_digits"),
        backtrack(),
    ),
    "hyphen_word": (
        emit(END, "hword", "hyphen_parts", FALL, REWIND_FOR_PARTS),
        on(IS_LETTER, "hyphen_word"), on(IS_SPECIAL, "hyphen_word"),
        on(IS_DIGIT, "hyphen_num_word"), save("-", "hyphen_word_first"),
        emit(ANY, "hword", "hyphen_parts", FALL, REWIND_FOR_PARTS),
    ),
    "hyphen_num_word_first": (
        backtrack(END), on(IS_LETTER, "hyphen_num_word"), on(IS_DIGIT, "hyphen_digits"),
        backtrack(),
    ),
    "hyphen_num_word": (
        emit(END, "numhword", "hyphen_parts", FALL, REWIND_FOR_PARTS),
        on(IS_ALNUM, "hyphen_num_word"), on(IS_SPECIAL, "hyphen_num_word"),
        save("-", "hyphen_num_word_first"),
        emit(ANY, "numhword", "hyphen_parts", FALL, REWIND_FOR_PARTS),
    ),
    # After "-" + digits: a letter must come before the part ends.
    "hyphen_digits": (
        backtrack(END), on(IS_DIGIT, "hyphen_digits"), on(IS_LETTER, "hyphen_num_word"),
        on(IS_SPECIAL, "hyphen_num_word"), backtrack(),
    ),
    # Re-reading a hyphenated word part by part.
    "hyphen_parts": (
        on(END, "base", Step.STAY), on(IS_ASCII_LETTER, "hyphen_ascii_part"),
        on(IS_LETTER, "hyphen_word_part"), save(IS_DIGIT, "hyphen_unsigned_int"),
        save("-", "hyphen_parts_hyphen"), on(ANY, "base", Step.STAY),
    ),
    "hyphen_parts_hyphen": (
        backtrack(END), emit(IS_ALNUM, "blank", "hyphen_parts", F1),
        emit(IS_SPECIAL, "blank", "hyphen_parts", F1), backtrack(),
    ),
    "hyphen_word_part": (
        emit(END, "hword_part"), on(IS_LETTER, "hyphen_word_part"),
        on(IS_SPECIAL, "hyphen_word_part"), on(IS_DIGIT, "hyphen_num_part"),
        emit(ANY, "hword_part", "hyphen_parts"),
    ),
    "hyphen_ascii_part": (
        emit(END, "hword_asciipart"), on(IS_ASCII_LETTER, "hyphen_ascii_part"),
        on(IS_LETTER, "hyphen_word_part"), on(IS_SPECIAL, "hyphen_word_part"),
        on(IS_DIGIT, "hyphen_num_part"), emit(ANY, "hword_asciipart", "hyphen_parts"),
    ),
    "hyphen_num_part": (
        emit(END, "hword_numpart"), on(IS_ALNUM, "hyphen_num_part"),
        on(IS_SPECIAL, "hyphen_num_part"), emit(ANY, "hword_numpart", "hyphen_parts"),
    ),
    "hyphen_unsigned_int": (
        backtrack(END), on(IS_DIGIT), on(IS_LETTER, "hyphen_num_part", F1),
        on(IS_SPECIAL, "hyphen_num_part", F1), backtrack(),
    ),
}


def _check_states() -> None:
    for name, rules in STATES.items():
        if rules[-1].test != ANY:
            raise AssertionError(f"state {name} has no fallback rule")
        for rule in rules:
            if rule.then is not None and rule.then not in STATES:
                raise AssertionError(f"state {name} goes to unknown state {rule.then}")


_check_states()

#: States whose tests have side effects or look ahead (host wanted, sub-parses).
DYNAMIC_STATES = frozenset(
    name for name, rules in STATES.items()
    if any(rule.test in (HOST_WANTED, HOST_FOLLOWS, URL_PATH_FOLLOWS) for rule in rules)
)
#: (state, ignoring, class, ASCII character or None) -> index of the rule that fires.
_SELECTION_MEMO: dict[tuple, int] = {}


# ---------------------------------------------------------------------------------------
# The machine


@dataclass(slots=True)
class Frame:
    """One stack entry: where we are, how long the token is, which state, where we saved."""

    position: int
    length: int
    state: str
    saved_at: int | None = None

    def copy(self) -> Frame:
        return Frame(self.position, self.length, self.state, None)


@dataclass(frozen=True, slots=True)
class ParsedToken:
    """A token of the parser: its type id, and its span in the parsed text."""

    type_id: int
    start: int
    end: int

    @property
    def alias(self) -> str:
        return TOKEN_ALIASES[self.type_id]


class DefaultParser:
    """One pass of the `default` parser over one text (create one per text)."""

    def __init__(self, text: str, classes: CharacterClasses | None = None,
                 start: int = 0, initial_states: tuple[str, ...] = ("base",),
                 use_memo: bool = True) -> None:
        self.text = text
        self.code_points = [ord(character) for character in text]
        self.size = len(text)
        self.classes = classes or c_utf8_classes()
        self._class_cache: dict[int, int] = {}
        self.stack = [Frame(start, 0, state) for state in initial_states]
        self.ignoring = False
        self.host_wanted = False
        self.use_memo = use_memo

    # -- character tests ------------------------------------------------------------
    def _class_at(self, position: int) -> int:
        code_point = self.code_points[position]
        cached = self._class_cache.get(code_point)
        if cached is None:
            cached = self.classes.class_of(code_point)
            self._class_cache[code_point] = cached
        return cached

    def _passes(self, test: str, frame: Frame) -> bool:
        position = frame.position
        at_end = position >= self.size
        if test == ANY:
            return True
        if test == END:
            return at_end
        if len(test) == 1:
            return not at_end and self.text[position] == test
        if test == HOST_WANTED:
            if self.host_wanted:
                self.host_wanted = False
                return True
            return False
        if test == IGNORING:
            return self.ignoring
        if test == HOST_FOLLOWS:
            return self._sub_parse(frame, ("base",), {TOKEN_IDS["host"]}, want_host=True)
        if test == URL_PATH_FOLLOWS:
            return self._sub_parse(frame, ("base", "url_path_first"), {TOKEN_IDS["url_path"]})
        if at_end:
            return test == IS_NOT_ALNUM
        kind = self._class_at(position)
        if test == IS_LETTER:
            return kind == LETTER
        if test == IS_ASCII_LETTER:
            return kind == LETTER and self.code_points[position] < 0x80
        if test == IS_DIGIT:
            return kind == DIGIT
        if test == IS_ALNUM:
            return kind == LETTER or kind == DIGIT
        if test == IS_NOT_ALNUM:
            return kind != LETTER and kind != DIGIT
        if test == IS_SPACE:
            return kind == SPACE
        if test == IS_SPECIAL:
            return kind == SPECIAL
        if test == IS_HEX:
            return self.text[position] in HEX_DIGITS
        if test == IS_URL_CHAR:
            code_point = self.code_points[position]
            return 0x20 < code_point < 0x7F and self.text[position] not in URL_FORBIDDEN
        raise AssertionError(f"unknown test {test}")

    def _sub_parse(self, frame: Frame, states: tuple[str, ...], wanted: set[int],
                   want_host: bool = False) -> bool:
        """Run a nested parser from the current position; on a token of a wanted type,
        the current frame swallows it."""
        nested = DefaultParser.__new__(DefaultParser)
        nested.text = self.text
        nested.code_points = self.code_points
        nested.size = self.size
        nested.classes = self.classes
        nested._class_cache = self._class_cache
        nested.stack = [Frame(frame.position, 0, state) for state in states]
        nested.ignoring = False
        nested.host_wanted = want_host
        nested.use_memo = self.use_memo
        token = nested.next_token()
        if token is None or token.type_id not in wanted:
            return False
        frame.position += token.end - token.start
        frame.length += token.end - token.start
        return True

    def _first_passing(self, rules: tuple[Rule, ...], start: int, frame: Frame) -> int:
        """The clear version: the index of the first rule from `start` whose test passes."""
        index = start
        while not self._passes(rules[index].test, frame):
            index += 1
        return index

    def _select(self, rules: tuple[Rule, ...], frame: Frame) -> int:
        """The rule that fires when a state is entered fresh, memoized.

        Outside the states with side-effecting or look-ahead tests, the first passing rule
        depends only on the state, the script/style flag, and the current character's class
        (plus the character itself when it is ASCII, the only characters tested literally),
        so the answer of `_first_passing` is cached under that key. `use_memo=False` turns
        the cache off; the tests compare both.
        """
        if not self.use_memo or frame.state in DYNAMIC_STATES:
            return self._first_passing(rules, 0, frame)
        position = frame.position
        if position >= self.size:
            key: tuple = (frame.state, self.ignoring, END)
        else:
            code_point = self.code_points[position]
            key = (
                frame.state, self.ignoring, self._class_at(position),
                self.text[position] if code_point < 0x80 else None,
            )
        index = _SELECTION_MEMO.get(key)
        if index is None:
            index = self._first_passing(rules, 0, frame)
            _SELECTION_MEMO[key] = index
        return index

    # -- hooks ----------------------------------------------------------------------
    def _run_hook(self, hook: str, frame: Frame, token_start: int) -> None:
        if hook == TRACK_SCRIPT_TAGS:
            so_far = self.text[token_start:token_start + frame.length].lower()
            if so_far in ("</script", "</style"):
                self.ignoring = False
            elif so_far in ("<script", "<style"):
                self.ignoring = True
        elif hook == REWIND_FOR_URL:
            self.host_wanted = True
            frame.position -= frame.length
        elif hook == REWIND_FOR_PARTS:
            frame.position -= frame.length
        elif hook == REWIND_FOR_VERSION:
            frame.position -= frame.length
            frame.length = 0

    # -- one token ------------------------------------------------------------------
    def next_token(self) -> ParsedToken | None:
        """The next token (blanks included), or None at the end of the text."""
        top = self.stack[-1]
        if top.position >= self.size:
            return None
        token_start = top.position
        top.saved_at = None
        result: ParsedToken | None = None
        rule: Rule | None = None
        while top.position <= self.size:
            rules = STATES[top.state]
            if top.saved_at is not None:
                index = self._first_passing(rules, top.saved_at + 1, top)
                top.saved_at = None
            else:
                index = self._select(rules, top)
            rule = rules[index]
            step = rule.step
            if rule.hook is not None:
                self._run_hook(rule.hook, top, token_start)
            if step & _EMIT:
                result = ParsedToken(
                    TOKEN_IDS[rule.emits], token_start, token_start + top.length
                )
                top.length = 0
            if step & _BACKTRACK:
                self.stack.pop()
                top = self.stack[-1]
            elif step & _SAVE:
                top.saved_at = index
                top = top.copy()
                self.stack.append(top)
            elif step & _FORGET_ONE:
                del self.stack[-2]
            elif step & _FORGET_ALL:
                del self.stack[:-1]
            elif step & _MERGE:
                merged = self.stack.pop()
                top = self.stack[-1]
                top.position = merged.position
                top.length = merged.length
            if rule.then is not None:
                top.state = rule.then
            if step & _EMIT or (top.position >= self.size and not step & _STAY):
                break
            if step & (_STAY | _BACKTRACK):
                continue
            if top.position < self.size:
                top.position += 1
                top.length += 1
        if rule is not None and rule.step & _EMIT:
            return result
        return None

    def tokens(self) -> list[ParsedToken]:
        """Every token of the text, in order, like `ts_parse('default', text)`."""
        found: list[ParsedToken] = []
        while True:
            token = self.next_token()
            if token is None:
                return found
            found.append(token)


def parse(text: str, classes: CharacterClasses | None = None) -> list[tuple[str, str]]:
    """`ts_parse('default', text)` as (alias, token text) pairs.

    >>> parse("co-op2 x-1")
    [('numhword', 'co-op2'), ('hword_asciipart', 'co'), ('blank', '-'), \
('hword_numpart', 'op2'), ('blank', ' '), ('asciiword', 'x'), ('int', '-1')]
    >>> parse("http://a.io/p?q=1")
    [('protocol', 'http://'), ('url', 'a.io/p?q=1'), ('host', 'a.io'), ('url_path', '/p?q=1')]
    """
    return [
        (token.alias, text[token.start:token.end])
        for token in DefaultParser(text, classes).tokens()
    ]

