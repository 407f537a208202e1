"""How command results look on standard output: readable text by default, JSON with `--json`.

Owns: the two readable outputs and the cell formats every command shares (times, scores,
byte counts, one-line excerpts). Must not touch: engine state, or
what a command shows (each command module decides its lines and tables and hands them
to an `Output`).

Rules:

* `--json` prints one JSON document, for programs: that printer is
  `engine.cli.json_output`, kept apart so that `search --json` does not load the
  readable outputs (and their value classes) at start-up.
* Readable output goes through the `Output` that `open_output()` picks:
  * standard output is a terminal: `TerminalOutput`, drawn by rich. Tables fit the
    terminal's width (`$COLUMNS`, else the terminal's own, as `--help` measures it):
    long cells wrap inside their column instead of running past the edge. Matched terms
    in excerpts are coloured, unless `$NO_COLOR` is set to anything but the empty string
    (no-color.org), which turns every escape sequence off;
  * anything else (a pipe, a file): `PlainOutput`, plain text with no escape sequences,
    one line per table row so that `grep` and `cut` see whole rows; rich is not imported,
    so a script pays nothing for it.
* Every command's `--color auto|always|never` (`COLOR_CHOICES`) overrides that choice of
  colour, not of layout: `auto` is the rule above; `never` turns colour off on a
  terminal too; `always` colours matched terms even in a pipe (the plain layout, the
  spans wrapped in the same SGR sequences rich writes, for `less -R`) and even when
  `$NO_COLOR` is set (a flag beats the variable, as no-color.org asks).
* Shared cell formats: times as ISO-8601 in UTC (`format_time`), scores with three
  decimals (`format_score`), byte counts in binary units (`format_bytes`), excerpts on
  one line with control characters made visible (`one_line`).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TextIO

from engine.cli.commands import COLOR_CHOICES, terminal_columns

#: How rich styles a matched term on a colour terminal.
MATCH_STYLE = "bold yellow"
#: How rich styles table headers on a colour terminal.
HEADER_STYLE = "bold"
#: The SGR sequences rich writes for `MATCH_STYLE`, which plain output writes itself.
MATCH_START, STYLE_END = "\x1b[1;33m", "\x1b[0m"


# ----- cell formats -------------------------------------------------------------------


def format_time(milliseconds: float) -> str:
    """An epoch-milliseconds time as ISO-8601 in UTC; milliseconds shown when not zero;
    `-` for 0, the kernel's "unknown" (and for a time no calendar date can hold).

    >>> format_time(1788429640000.0), format_time(1788429640123), format_time(1)
    ('2026-09-03T10:00:40Z', '2026-09-03T10:00:40.123Z', '1970-01-01T00:00:00.001Z')
    >>> format_time(0), format_time(1e300)
    ('-', '-')
    """
    from datetime import UTC, datetime

    if not math.isfinite(milliseconds) or milliseconds == 0:
        return "-"
    whole = math.floor(milliseconds)
    try:
        moment = datetime.fromtimestamp(whole // 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return "-"
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    fraction = whole % 1000
    return f"{text}.{fraction:03d}Z" if fraction else f"{text}Z"


def format_score(score: float) -> str:
    """A score (or any bm25 quantity) with three decimals.

    >>> format_score(2.9857204256001775), format_score(0), format_score(-1.375e-06)
    ('2.986', '0.000', '-0.000')
    """
    return f"{score:.3f}"


def format_bytes(count: int) -> str:
    """A byte count for people: bytes below 1 KiB, else KiB, MiB, GiB, TiB with one
    decimal (binary units, as the benchmark reports memory).

    >>> [format_bytes(n) for n in (0, 1023, 1024, 25339, 5 * 2**20, 3 * 2**40)]
    ['0 B', '1023 B', '1.0 KiB', '24.7 KiB', '5.0 MiB', '3.0 TiB']
    """
    if count < 1024:
        return f"{count} B"
    value = float(count)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            break
    return f"{value:.1f} {unit}"


def one_line(text: str) -> str:
    """`text` on one line: each run of whitespace becomes one space, and any other
    control character is shown as U+FFFD, so a transcript cannot move the cursor or
    change the terminal's colours.

    >>> one_line("line one\\n\\n  line two\\x1b[2J")
    'line one line two\\ufffd[2J'
    """
    cleaned = "".join(
        character if character.isprintable() or character.isspace() else "\ufffd"
        for character in text
    )
    return " ".join(cleaned.split())


# ----- readable output ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Marked:
    """Text with spans (code point offsets, end exclusive) to emphasise: matched terms."""

    text: str
    spans: tuple[tuple[int, int], ...] = ()


#: A table cell or a line: plain text, or text with marked spans. A cell may hold
#: several lines (`\n`) on a terminal; `PlainOutput` needs one-line cells.
Cell = str | Marked


@dataclass(frozen=True, slots=True)
class Column:
    """A table column: its header (it may hold several lines on a terminal) and its
    alignment."""

    header: str
    align: Literal["left", "right"] = "left"


class Output(Protocol):
    """Where a command prints its readable result."""

    #: Whether this output draws on a terminal (cells may hold several lines).
    terminal: bool
    #: Whether marked spans are shown (colour is on); commands may skip computing them.
    marks_shown: bool

    def line(self, text: Cell = "") -> None:
        """Print one line (a terminal wraps it at its width)."""
        ...

    def table(self, columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> None:
        """Print a table with a header row."""
        ...

    def fields(self, pairs: Sequence[tuple[str, Cell]]) -> None:
        """Print names and values, one pair a line, the values aligned."""
        ...


def open_output(stream: TextIO | None = None, *, colour: str = "auto") -> Output:
    """The output for `stream` (standard output): a terminal's, or plain text; `colour`
    is the command's `--color` (module docstring).

    >>> import io
    >>> open_output(io.StringIO(), colour="always").marks_shown
    True
    """
    target = stream if stream is not None else sys.stdout
    isatty = getattr(target, "isatty", None)
    if isatty is not None and isatty():
        return TerminalOutput(target, width=terminal_columns(),
                              colour=colour_wanted(colour, terminal=True))
    return PlainOutput(target, colour=colour_wanted(colour, terminal=False))


def colour_wanted(choice: str = "auto", *, terminal: bool = True) -> bool:
    """Whether matched terms are coloured: `always` and `never` say so; `auto` colours a
    terminal unless `$NO_COLOR` is set to a non-empty value (no-color.org).

    >>> colour_wanted("always", terminal=False), colour_wanted("never"), colour_wanted(
    ...     "auto", terminal=False)
    (True, False, False)
    """
    if choice not in COLOR_CHOICES:
        raise ValueError(f"--color must be one of {', '.join(COLOR_CHOICES)}, not {choice!r}")
    if choice != "auto":
        return choice == "always"
    return terminal and not os.environ.get("NO_COLOR", "")


def _text_of(cell: Cell) -> str:
    return cell.text if isinstance(cell, Marked) else cell


def styled(cell: Cell) -> str:
    """A cell's text with its marked spans wrapped in the match style's SGR sequences.

    >>> styled(Marked("Café crème", ((0, 4),))) == "\x1b[1;33mCafé\x1b[0m crème"
    True
    """
    if isinstance(cell, str):
        return cell
    parts, shown = [], 0
    for start, end in cell.spans:
        parts.extend((cell.text[shown:start], MATCH_START, cell.text[start:end], STYLE_END))
        shown = end
    parts.append(cell.text[shown:])
    return "".join(parts)


class PlainOutput:
    """Plain text, one line per table row, columns aligned; no escape sequences unless
    `colour` (`--color always`): then marked spans are wrapped in the match style."""

    terminal = False

    def __init__(self, stream: TextIO, *, colour: bool = False) -> None:
        self.stream = stream
        self.marks_shown = colour

    def _shown(self, cell: Cell) -> str:
        return styled(cell) if self.marks_shown else _text_of(cell)

    def line(self, text: Cell = "") -> None:
        """Print one line as it is."""
        self.stream.write(self._shown(text) + "\n")

    def table(self, columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> None:
        """Print the table as `format_table` lays it out (right-aligned columns too)."""
        self.stream.write(format_table(columns, rows, shown=self._shown) + "\n")

    def fields(self, pairs: Sequence[tuple[str, Cell]]) -> None:
        """Print `name  value` lines, the values in one column."""
        width = max((len(name) for name, _ in pairs), default=0)
        for name, value in pairs:
            self.stream.write(f"{name.ljust(width)}  {self._shown(value)}".rstrip() + "\n")


class TerminalOutput:
    """rich on a terminal: tables fitted to the width, marked spans coloured.

    When a table is wider than the terminal, rich narrows its columns: a cell wraps at
    word boundaries, and a word longer than its column is folded onto the next line,
    so no character is cut off.
    """

    terminal = True

    def __init__(self, stream: TextIO, *, width: int, colour: bool) -> None:
        from rich.console import Console

        self.stream = stream
        self.marks_shown = colour
        # Every string is printed as rich `Text`: no markup, emoji codes or number
        # highlighting is read into transcript text.
        self.console = Console(
            file=stream, width=width, force_terminal=True, color_system="auto" if colour
            else None, no_color=not colour, highlight=False, markup=False, emoji=False,
            soft_wrap=False)  # no_color given: rich would read $NO_COLOR itself

    def line(self, text: Cell = "") -> None:
        """Print one line; it wraps at the terminal's width."""
        self._print(self._text(text))

    def table(self, columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> None:
        """Print a rich table no wider than the terminal (a rule under the header)."""
        from rich import box
        from rich.table import Table

        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1),
                      collapse_padding=True, header_style=HEADER_STYLE,
                      leading=1 if self._has_tall_rows(rows) else 0)
        for column in columns:
            table.add_column(column.header, justify=column.align, overflow="fold")
        for row in rows:
            table.add_row(*(self._text(cell) for cell in row))
        self._print(table)

    def fields(self, pairs: Sequence[tuple[str, Cell]]) -> None:
        """Print a two-column grid: names, then values."""
        from rich.table import Table

        grid = Table.grid(padding=(0, 2))
        grid.add_column(overflow="fold")
        grid.add_column(overflow="fold")
        for name, value in pairs:
            grid.add_row(self._text(name), self._text(value))
        self._print(grid)

    @staticmethod
    def _has_tall_rows(rows: Sequence[Sequence[Cell]]) -> bool:
        return any("\n" in _text_of(cell) for row in rows for cell in row)

    def _text(self, cell: Cell) -> Any:
        from rich.text import Text

        text = Text(_text_of(cell))
        if isinstance(cell, Marked) and self.marks_shown:
            for start, end in cell.spans:
                text.stylize(MATCH_STYLE, start, end)
        return text

    def _print(self, renderable: Any) -> None:
        """Print through a capture, so that the blanks rich pads lines with are cut."""
        with self.console.capture() as capture:
            self.console.print(renderable)
        lines = capture.get().split("\n")
        self.stream.write("\n".join(line.rstrip(" ") for line in lines))


def format_table(headers: Sequence[str | Column], rows: Sequence[Sequence[Any]], *,
                 shown: Callable[[Cell], str] | None = None) -> str:
    """Format rows as an aligned plain-text table with a header rule (columns given as
    `Column`s keep their alignment; plain headers are left-aligned). A `Marked` cell is
    measured by its text and written as `shown` writes it (default: its text), so
    escape sequences never move a column.

    >>> print(format_table(["name", Column("n", align="right")], [["alpha", 1], ["b", 22]]))
    name    n
    -----  --
    alpha   1
    b      22
    """
    columns = [header if isinstance(header, Column) else Column(header) for header in headers]
    cells = [[cell if isinstance(cell, Marked) else str(cell) for cell in row] for row in rows]
    write = shown if shown is not None else _text_of
    widths = [len(column.header) for column in columns]
    for row in cells:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(_text_of(cell)))

    def aligned(values: Sequence[Cell]) -> str:
        padded = []
        for value, width, column in zip(values, widths, columns):
            padding = " " * (width - len(_text_of(value)))
            padded.append(padding + write(value) if column.align == "right"
                          else write(value) + padding)
        return "  ".join(padded).rstrip(" ")

    lines = [aligned([column.header for column in columns])]
    lines.append("  ".join("-" * width for width in widths))
    lines.extend(aligned(row) for row in cells)
    return "\n".join(lines)
