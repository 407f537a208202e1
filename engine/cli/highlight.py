"""Where a hit's excerpt shows what matched, on one line, for colouring on a terminal.

Owns: carrying a hit's matched spans (`engine.model.SearchHit.matched`, which the engine
found when it cut the excerpt) onto the excerpt as `one_line` shows it. Must not touch:
matching (the engine decided what matched; nothing here plans a query or tokenizes), or
printing (`engine.cli.output` colours the spans).

`one_line` turns each run of whitespace into one space and drops it at both ends, so the
spans are mapped character by character: a span runs from its first shown character to
its last; one that shows no character is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.cli.output import Cell, Marked, Output, one_line

Span = tuple[int, int]


def excerpt_cell(snippet: str, matched: Sequence[Span], output: Output) -> Cell:
    """A hit's excerpt on one line (`one_line`), its matched spans marked when the output
    shows marks.

    >>> from engine.cli.output import PlainOutput
    >>> excerpt_cell("Café\\ncrème", ((0, 4),), PlainOutput(None))
    'Café crème'
    """
    text = one_line(snippet)
    if not output.marks_shown:
        return text
    return Marked(text, spans_on_one_line(snippet, matched))


def spans_on_one_line(text: str, spans: Sequence[Span]) -> tuple[Span, ...]:
    """`spans` of `text` as offsets into `one_line(text)`.

    >>> text = "  per\\n\\n session  café "
    >>> shown = one_line(text)
    >>> [shown[start:end] for start, end in spans_on_one_line(text, ((2, 15), (17, 21)))]
    ['per session', 'café']
    """
    shown_at: list[int | None] = []  # each character's place on the line (None: not shown)
    length = 0
    pending_space = False
    for character in text:
        if character.isspace():
            pending_space = length > 0
            shown_at.append(None)
            continue
        if pending_space:
            length += 1
            pending_space = False
        shown_at.append(length)
        length += 1
    mapped = []
    for start, end in spans:
        places = [place for place in shown_at[start:end] if place is not None]
        if places:
            mapped.append((places[0], places[-1] + 1))
    return tuple(mapped)
