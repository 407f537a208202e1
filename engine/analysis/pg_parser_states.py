"""The states and rules of PostgreSQL's `default` text-search parser, as data.

Owns: every state of the parser and its ordered rules (`STATES`), the tests a rule can
make, the steps it can take (`Step`) and its hooks. Must not touch: how the rules are run
(the machine, `pg_parser.py`), the character classes (`pg_character_classes.py`), or
anything outside `analysis`.

The behaviour was reverse-engineered with `ts_parse` and checked against the server; the
shape follows the upstream parser so that its quirks come out the same.

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
* Two tests run a nested parser on the rest of the text: "a host follows" (used after `@`)
  and "a URL path follows" (used after `host/`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntFlag


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
