"""`session-search tokenize`: show what a profile does to a text, token by token.

Owns: the `tokenize` command's arguments and its two outputs: a plain teaching view (the
profile and its stages, the text with every token's span marked under it, and an aligned
table) and `--json` (`{"profile", "options", "stages", "tokens"}`). Must not touch: any
tokenization rule; the analyzer comes from `engine.analysis.profiles.get_analyzer`, the
same entry point indexing and querying use.

Plain output, for `session-search tokenize --profile icu "Café 東京都"`::

    profile: icu
    stages:
      1. decode: ...
    text:  Café 東京都
           ^^^^ ~~~~^^
    pos  term  start  end  bytes  kind         source  ascii
    ...

Span marks alternate `^` and `~`, so adjacent tokens (segmented CJK words) stay apart.
Columns are aligned by terminal display width (East Asian wide characters take two
columns, combining marks none). Invisible characters are made visible: C0 controls as
control pictures (`␊`), format characters and lone surrogates as `⟨U+200D⟩`.

Input: TEXT, or `-` for standard input read as UTF-8 (invalid bytes become U+FFFD; the
text is analyzed exactly as read, trailing newline included). Output strings never hold
lone surrogates (they print as U+FFFD).
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from typing import Any

from engine.cli.commands import add_command
from engine.cli.json_output import print_json
from engine.errors import UsageError
from engine.inspection.tokens import (
    PROFILE_NAMES,
    PROFILE_OPTIONS,
    SEARCH_PROFILE,
    ProfileConfig,
    Token,
    ascii_preview,
    printable,
    token_record,
)

#: Wrap the marked source text at this many display columns.
MARKED_TEXT_COLUMNS = 100
SPAN_MARKS = ("^", "~")
TABLE_HEADERS = ("pos", "term", "start", "end", "bytes", "kind", "source", "ascii")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `tokenize` command."""
    parser = add_command(
        subparsers, "tokenize",
        description=(
            "Show each token of TEXT: its term, position, string offsets (start, end),"
            " UTF-8 byte span, kind and source text, after the profile's stages."
        ),
        examples=["session-search tokenize 'Café crème, ΟΣ ος'",
                  "session-search tokenize --profile icu '東京タワー'"],
    )
    parser.add_argument(
        "text",
        metavar="TEXT",
        help="the text to analyze, or - for stdin (put -- before a TEXT that starts with -)",
    )
    parser.add_argument(
        "--profile",
        choices=PROFILE_NAMES,
        default=SEARCH_PROFILE.name,
        help=f"analysis profile (default: {SEARCH_PROFILE.name})",
    )
    parser.add_argument(
        "--remove-diacritics",
        type=int,
        choices=(0, 1, 2),
        default=None,
        help="unicode61 only (default: 2, what session search uses; FTS5's own default is 1)",
    )
    parser.add_argument("--tokenchars", default=None, help="unicode61 only: extra token characters")
    parser.add_argument("--separators", default=None, help="unicode61 only: extra separators")
    parser.add_argument("--locale", default=None, help="icu only: ICU locale (default: root)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Analyze the text and print the tokens; 0 on success."""
    config = profile_config(args)
    analyzer = config.analyzer()  # validates the options before any input is read
    text = read_text(args.text)
    tokens = analyzer.tokens(text)
    stages = analyzer.describe()
    if args.json:
        print_json(
            {
                "profile": config.name,
                "options": dict(config.options),
                "stages": stages,
                "tokens": [token_record(text, token) for token in tokens],
            }
        )
    else:
        sys.stdout.write(render_plain(config, stages, text, tokens) + "\n")
    return 0


def profile_config(args: argparse.Namespace) -> ProfileConfig:
    """The profile and options the arguments ask for; UsageError for misplaced options."""
    options: dict[str, Any] = {}
    for option in ("remove_diacritics", "tokenchars", "separators", "locale"):
        value = getattr(args, option)
        if value is None:
            continue
        if option not in PROFILE_OPTIONS[args.profile]:
            flag = "--" + option.replace("_", "-")
            raise UsageError(f"{flag} does not apply to the {args.profile} profile")
        options[option] = value
    if args.profile == SEARCH_PROFILE.name:
        options = {**dict(SEARCH_PROFILE.options), **options}
    return ProfileConfig(args.profile, tuple(options.items()))


def read_text(argument: str) -> str:
    """TEXT itself, or standard input decoded as UTF-8 when TEXT is `-`."""
    if argument != "-":
        return argument
    return sys.stdin.buffer.read().decode("utf-8", errors="replace")


# --- plain output ---------------------------------------------------------------------


def visible(character: str) -> str:
    """How one character is shown: invisible ones get a visible stand-in.

    >>> visible("a"), visible("\\n"), visible("\\u200d"), visible("\\ud800")
    ('a', '␊', '⟨U+200D⟩', '⟨U+D800⟩')
    """
    code = ord(character)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "␡"
    if unicodedata.category(character) in ("Cf", "Cs", "Zl", "Zp"):
        return f"⟨U+{code:04X}⟩"
    return character


def display_width(text: str) -> int:
    """Terminal columns `text` takes: wide East Asian characters 2, combining marks 0.

    >>> display_width("abc"), display_width("東京"), display_width("e\\u0301")
    (3, 4, 1)
    """
    width = 0
    for character in text:
        if unicodedata.combining(character) or unicodedata.category(character) in ("Mn", "Me"):
            continue
        width += 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1
    return width


def shown(text: str) -> str:
    """A whole string with every character made visible."""
    return "".join(visible(character) for character in text)


def mark_spans(text: str, tokens: list[Token], columns: int = MARKED_TEXT_COLUMNS) -> list[str]:
    """The text in lines of at most `columns`, each followed by its span-mark line.

    >>> from engine.inspection.tokens import Token
    >>> spans = [Token("ab", 0, 0, 2, 0, 2), Token("c", 1, 3, 4, 3, 4)]
    >>> mark_spans("ab c!", spans)
    ['ab c!', '^^ ~']
    """
    mark_of_index: dict[int, str] = {}
    for number, token in enumerate(tokens):
        # Later tokens overwrite earlier ones: PostgreSQL's hyphenated-word parts are
        # marked over the whole compound they come after.
        for index in range(token.start, token.end):
            mark_of_index[index] = SPAN_MARKS[number % 2]
    lines: list[str] = []
    text_line, mark_line, width = "", "", 0
    for index, character in enumerate(text):
        glyph = visible(character)
        glyph_width = display_width(glyph)
        if width + glyph_width > columns and text_line:
            lines.extend([text_line.rstrip(), mark_line.rstrip()])
            text_line, mark_line, width = "", "", 0
        text_line += glyph
        mark_line += mark_of_index.get(index, " ") * glyph_width
        width += glyph_width
    if text_line:
        lines.extend([text_line.rstrip(), mark_line.rstrip()])
    return lines


def align(headers: tuple[str, ...], rows: list[list[str]]) -> list[str]:
    """Left-aligned columns padded by display width (wide CJK cells stay aligned).

    >>> align(("a", "b"), [["東京", "x"], ["y", "z"]])
    ['a     b', '----  -', '東京  x', 'y     z']
    """
    widths = [display_width(header) for header in headers]
    for row in rows:
        for column, cell in enumerate(row):
            widths[column] = max(widths[column], display_width(cell))

    def line(cells: list[str] | tuple[str, ...]) -> str:
        padded = (cell + " " * (w - display_width(cell)) for cell, w in zip(cells, widths))
        return "  ".join(padded).rstrip()

    return [line(headers), "  ".join("-" * w for w in widths), *(line(row) for row in rows)]


def table_row(text: str, token: Token) -> list[str]:
    """One table row; `ascii` is left blank when it equals the term."""
    term = shown(printable(token.text))
    ascii_form = ascii_preview(printable(token.text))
    return [
        str(token.position),
        term,
        str(token.start),
        str(token.end),
        f"{token.byte_start}-{token.byte_end}",
        token.kind,
        shown(text[token.start : token.end]),
        "" if ascii_form == token.text else ascii_form,
    ]


def render_plain(config: ProfileConfig, stages: list[str], text: str, tokens: list[Token]) -> str:
    """The whole teaching view as one string (no trailing newline)."""
    lines = [f"profile: {config.label()}", "stages:"]
    lines.extend(f"  {number}. {stage}" for number, stage in enumerate(stages, start=1))
    lines.append("")
    marked_lines = mark_spans(text, tokens) or ["(empty)"]
    lines.extend(
        ("text:  " if index == 0 else "       ") + marked
        for index, marked in enumerate(marked_lines)
    )
    lines.append("")
    if tokens:
        lines.extend(align(TABLE_HEADERS, [table_row(text, token) for token in tokens]))
    lines.append(f"{len(tokens)} token{'s' if len(tokens) != 1 else ''}")
    return "\n".join(lines)
