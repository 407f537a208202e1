"""What a search's result tells its reader besides its hits: the reasons it has none, and
a notice per flag (truncated, indexing, archived windows left out).

Owns: those lines' wording (`miss_reasons`, `result_notices`, `truncation_hint`). Must not
touch: how they are printed (the readable view prints them under its table,
`engine.cli.search_view`; `search --json` and `--jsonl` as notes on standard error,
`engine.cli.search_commands`). A module of its own, apart from the readable view, so that
a JSON search without hits, or any `--jsonl` one, loads neither the readable output's
classes nor the highlighting; the reasons' own module (`engine.inspection.no_hits`) is
imported only for a result without hits.
"""

from __future__ import annotations

from engine import DEFAULT_LIMIT, MAX_LIMIT
from engine.model import SearchRequest, SearchResult


def miss_reasons(result: SearchResult, request: SearchRequest) -> tuple[str, ...]:
    """Why a result has no hit, when the query's words say why (`engine.inspection.
    no_hits`); nothing for a result with hits."""
    if result.hits:
        return ()
    from engine.inspection.no_hits import no_hit_reasons  # a result without hits only

    return no_hit_reasons(request.query, request.match)


def result_notices(result: SearchResult, limit: int | None) -> list[str]:
    """What the flags of a result tell the reader, one line each (none when all is well).

    >>> for notice in result_notices(SearchResult((), indexing=True,
    ...                                           archived_transcripts_excluded=2), None):
    ...     print(notice)
    indexing: search completeness could not be confirmed; run `session-search reconcile`
    2 archived windows in scope were not searched (archived transcripts stay out of search until `session-search restore`)
    """
    notices = []
    if result.truncated:
        notices.append(truncation_hint(limit))
    if result.indexing:
        notices.append("indexing: search completeness could not be confirmed; run "
                       "`session-search reconcile`")
    archived = result.archived_transcripts_excluded
    if archived:
        notices.append(f"{archived} archived window{'' if archived == 1 else 's'} in scope "
                       f"{'was' if archived == 1 else 'were'} not searched (archived "
                       "transcripts stay out of search until `session-search restore`)")
    return notices


def truncation_hint(limit: int | None) -> str:
    """What to do about a truncated result: raise `--limit` while it can be raised.

    >>> truncation_hint(None)
    'more hits than the limit (truncated); refine the query or raise --limit (up to 25)'
    >>> truncation_hint(25)
    'more hits than the limit (truncated); refine the query (25 is the largest --limit)'
    """
    if (DEFAULT_LIMIT if limit is None else limit) < MAX_LIMIT:
        return ("more hits than the limit (truncated); refine the query or raise --limit "
                f"(up to {MAX_LIMIT})")
    return f"more hits than the limit (truncated); refine the query ({MAX_LIMIT} is the " \
           "largest --limit)"
