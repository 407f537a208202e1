"""The readable view of a search result (`session-search search` without `--json`).

Owns: the hit table's columns and rows, and where the notices go under it. Must not touch:
how the result was found, how tables and colours are drawn (`engine.cli.output`), or the
wording of the reasons and notices (`engine.cli.search_notices`, which `search --json`
uses without this module). Imported only
when a result is shown readably, so that `search --json` starts without the readable
output's classes and modules.

In a pipe: one line per hit with every field in its column; on a terminal: time and role,
then key, window and message stacked in two cells, so that the excerpt keeps the rest of
the width, its matched words coloured (`engine.cli.highlight`). Without hits: "no hits",
then the reasons the query's own words give for it (an emoji, a `*` that is no wildcard:
`engine.inspection.no_hits`). Then a line per notice of the result: truncated, indexing,
and the archived windows the scope selected but did not search (only when there were
some; `session-search restore` brings a session back).
"""

from __future__ import annotations

from engine.cli.highlight import excerpt_cell
from engine.cli.output import Cell, Column, Output, format_score, format_time
from engine.cli.search_notices import miss_reasons, result_notices
from engine.model import SearchHit, SearchRequest, SearchResult

#: The columns of a hit in plain output: one line per hit, every field in its own column.
PLAIN_HIT_COLUMNS = (
    Column("score", align="right"), Column("timestamp"), Column("sessionKey"),
    Column("sessionId"), Column("messageId"), Column("role"), Column("snippet"),
)
#: On a terminal: where the message is and when stacked in two cells, so that the
#: excerpt gets the rest of the width and wraps inside its column.
TERMINAL_HIT_COLUMNS = (
    Column("score", align="right"), Column("time\nrole"),
    Column("session key\nsession id\nmessage id"), Column("excerpt"),
)


def hit_row(hit: SearchHit, request: SearchRequest, output: Output) -> list[Cell]:
    """One table row for a hit, in the layout of `output`."""
    excerpt = excerpt_cell(hit.snippet, hit.matched, output)
    if output.terminal:
        return [format_score(hit.score), f"{format_time(hit.timestamp)}\n{hit.role}",
                f"{hit.session_key}\n{hit.session_id}\n{hit.message_id}", excerpt]
    return [format_score(hit.score), format_time(hit.timestamp), hit.session_key,
            hit.session_id, hit.message_id, hit.role, excerpt]


def print_result(output: Output, result: SearchResult, request: SearchRequest) -> None:
    """The readable view of a kernel result: a table of hits, then a line per notice."""
    if result.hits:
        columns = TERMINAL_HIT_COLUMNS if output.terminal else PLAIN_HIT_COLUMNS
        output.table(columns, [hit_row(hit, request, output) for hit in result.hits])
    else:
        output.line("no hits")
        for reason in miss_reasons(result, request):
            output.line(reason)
    for notice in result_notices(result, request.limit):
        output.line(notice)
