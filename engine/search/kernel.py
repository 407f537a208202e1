"""The search kernel: behaviour.md §5 over one `IndexView`, from a request to its result.

Owns: the order of the steps of a search and the decisions between them: validating the
request, planning the query, the scope, choosing the fast or the clear path, `limit + 1`
truncation, the zero-hit gate of the CJK retry, and excerpts for returned rows only. Must
not touch: the index's mutable state (it reads one `IndexView`), the query policy
(`engine.query.user_query` / `engine.query.cjk` make the plans), the formulas
(`engine.score.bm25`, `engine.results`), files, or the transcript store (the backend hands
in the windows, the `indexing` flag and its `EngineConfig`, whose `fast_kernel`,
`cjk_gram_index` and `fast_snippets` choose between the fast and the clear versions).

The kernel, for a request checked where it entered the engine
(`engine.query.checked_request`; the kernel checks nothing again):

1. plan = the checked query's plan (`plan_terms`); limit = its clamped limit (the plans,
   and the retry plan of step 5, made once per distinct request: `engine.search.prepared`);
2. the scope (`engine.search.scope`, §5.3): windows whose key is selected, with the
   `sessionId` filter, not archived (counted in `archivedTranscriptsExcluded` instead),
   and not needing a rebuild; rows of windows the store no longer has are never selected
   (kept in the backend's `ScopeCache` while the windows and their states stay the same);
3. the matching rows in scope, ranked by bm25 over the whole index, in the request's
   total order (`engine.search.order`), the first `limit + 1` only: by default the fast
   path (`engine.search.fast_path.top_rows`), with `fast_kernel` False the clear path
   (`engine.search.clear_path.rank_rows` then `order_rows`), its oracle;
4. `truncated` = more than `limit` rows; excerpts for the first `limit` only
   (`engine.search.excerpts`, the clear window search with `fast_snippets` False), each
   row made a hit by `engine.search.hits`; a partition of a merged search answers with
   its rows' merge keys instead (`hit_keys`) and makes whole only the hits the merge
   keeps, cutting their excerpts then (`finished_hits`,
   `engine.search.merge.PartitionAnswer`);
5. only when step 3 found no row in scope and the query holds a CJK term: the retry plan
   (word phrases + literal substrings, `engine.query.cjk.retry_plan`) over the same scope
   and filters (§7.1).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from typing import NamedTuple

from engine.analysis.token import Analyzer
from engine.config import EngineConfig
from engine.index.view import IndexView
from engine.model import NO_HITS, SearchHit, SearchResult, SessionWindow
from engine.query.ast import QueryPlan
from engine.query.checked_request import CheckedRequest
from engine.search.excerpts import row_excerpt
from engine.search.fast_path import top_rows
from engine.search.hits import hit_key, search_hit, whole_hit
from engine.search.merge import NO_ANSWER, HitKey, PartitionAnswer
from engine.search.order import RankedRow, order_rows
from engine.search.prepared import prepared_request
from engine.search.scope import Scope, ScopeCache, rebuild_pending, select_scope

#: The production choices: every fast version.
DEFAULT_CONFIG = EngineConfig()


class KernelRun(NamedTuple):
    """Everything one search decided: the plan used, the ordered rows, the limit (a
    `NamedTuple`: a fresh search makes this class at start-up, for less than a frozen
    dataclass costs)."""

    plan: QueryPlan
    retried: bool
    rows: tuple[RankedRow, ...]
    limit: int
    scope: Scope
    #: The fast path found more than `limit` rows, though `rows` may hold fewer: a
    #: merged search's rank bound left out the rows no merged answer can hold.
    matched_more: bool = False

    @property
    def truncated(self) -> bool:
        """More than `limit` rows matched (step 4's `truncated`)."""
        return len(self.rows) > self.limit or self.matched_more


def run_kernel(
    view: IndexView,
    windows: Iterable[SessionWindow],
    request: CheckedRequest,
    analyzer: Analyzer,
    *,
    config: EngineConfig = DEFAULT_CONFIG,
    scopes: ScopeCache | None = None,
    rank_bound: float | None = None,
) -> KernelRun:
    """Steps 1–3 and 5 of the module docstring: the ordered `limit + 1` rows.

    With `scopes`, the scope is looked up there (`windows` is then iterated only when
    it is not kept, so it may be lazy); without, it is selected from `windows`.

    `rank_bound` (a merged search in relevance order, `engine.search.merge.rank_bound_of`):
    when more than `limit` rows match, rows ranked worse than it are left out of `rows`
    (none of them can be in the merged answer) and `matched_more` is set; the clear
    version ignores it. No retry follows a word search that matched rows.

    `config.fast_kernel` False runs the clear version (`rank_rows` then `order_rows`),
    the oracle of the default `top_rows`. `config.cjk_gram_index` False makes the retry
    scan every candidate row's text instead of narrowing the rows first (the clear
    version of the retry).
    """
    prepared = prepared_request(request, analyzer)
    plan, limit = prepared.plan, prepared.limit
    if scopes is None:
        scope = select_scope(windows, request, rebuild_pending(view))
    else:
        scope = scopes.select(view, windows, request)

    def ordered_rows(plan: QueryPlan, use_grams: bool) -> tuple[list[RankedRow], bool]:
        if config.fast_kernel:
            return top_rows(view, plan, scope, request.role, request.order, limit + 1,
                            cjk_grams=use_grams, rank_bound=rank_bound)
        from engine.search.clear_path import rank_rows  # the oracle: not on the fast path

        rows = rank_rows(view, plan, scope, request.role, cjk_grams=use_grams)
        return order_rows(rows, request.order, limit + 1), False

    ordered, full = ordered_rows(plan, True)
    retried = False
    if not ordered and not full and prepared.retry is not None:
        plan, retried = prepared.retry, True
        ordered, full = ordered_rows(plan, config.cjk_gram_index)
    return KernelRun(plan, retried, tuple(ordered), limit, scope, matched_more=full)


def row_hit(run: KernelRun, row: RankedRow,
            excerpt: tuple[str, tuple[tuple[int, int], ...]]) -> SearchHit:
    """The hit of one row of `run`, with its excerpt (before the bound) and matched spans."""
    record = row.record
    text, matched = excerpt
    return search_hit(
        session_key=run.scope.session_keys[record.session_id],
        session_id=record.session_id,
        message_id=record.message_id,
        role=record.role,
        timestamp=record.timestamp,
        excerpt=text,
        rank=row.rank,
        matched=matched,
    )


def result_of_run(
    run: KernelRun, analyzer: Analyzer, *, indexing: bool, config: EngineConfig = DEFAULT_CONFIG,
) -> SearchResult:
    """Step 4: the hits of a kernel run (excerpts cut for the first `limit` rows only;
    `config.fast_snippets` chooses how their windows are found)."""
    if not run.rows and not run.truncated and not indexing and not run.scope.archived_excluded:
        return NO_HITS
    hits = [row_hit(run, row, row_excerpt(row, analyzer, run.plan, fast=config.fast_snippets))
            for row in run.rows[: run.limit]]
    return SearchResult(
        hits=tuple(hits),
        truncated=run.truncated,
        indexing=indexing,
        archived_transcripts_excluded=run.scope.archived_excluded,
    )


def hit_keys(run: KernelRun) -> list[HitKey]:
    """The merge keys of the hits of `run` (`engine.search.hits.hit_key`), in order: of
    its first `limit` rows."""
    session_keys = run.scope.session_keys
    return [hit_key(session_keys[session_id], session_id, record.message_id, record.timestamp,
                    row.rank)
            for row in run.rows[: run.limit]
            for record in (row.record,) for session_id in (record.session_id,)]


def finished_hits(
    run: KernelRun, analyzer: Analyzer, keys: Sequence[HitKey], positions: Sequence[int], *,
    config: EngineConfig = DEFAULT_CONFIG,
) -> list[SearchHit]:
    """The hits at `positions` of `result_of_run(run, ...)` (with their excerpts), made
    from their keys (`keys`: `hit_keys(run)`)."""
    rows = run.rows
    return [whole_hit(keys[position], rows[position].record.role,
                      *row_excerpt(rows[position], analyzer, run.plan, fast=config.fast_snippets))
            for position in positions]


def search_index(
    view: IndexView,
    windows: Iterable[SessionWindow],
    request: CheckedRequest,
    analyzer: Analyzer,
    *,
    indexing: bool = False,
    config: EngineConfig = DEFAULT_CONFIG,
    scopes: ScopeCache | None = None,
) -> SearchResult:
    """The kernel result of §5.2 for `request` (`scopes`: as for `run_kernel`)."""
    run = run_kernel(view, windows, request, analyzer, config=config, scopes=scopes)
    return result_of_run(run, analyzer, indexing=indexing, config=config)


def search_answer(
    view: IndexView,
    windows: Iterable[SessionWindow],
    request: CheckedRequest,
    analyzer: Analyzer,
    *,
    indexing: bool = False,
    config: EngineConfig = DEFAULT_CONFIG,
    scopes: ScopeCache | None = None,
    rank_bound: float | None = None,
) -> PartitionAnswer:
    """`search_index` as one partition of a merge answers: the hits' merge keys, and how
    to make whole those the merge keeps (`rank_bound`: see `run_kernel`)."""
    run = run_kernel(view, windows, request, analyzer, config=config, scopes=scopes,
                     rank_bound=rank_bound)
    if not run.rows:  # no hit to finish
        result = result_of_run(run, analyzer, indexing=indexing, config=config)
        return NO_ANSWER if result is NO_HITS else PartitionAnswer(result)
    keys = hit_keys(run)
    result = SearchResult(hits=(), truncated=run.truncated, indexing=indexing,
                          archived_transcripts_excluded=run.scope.archived_excluded)
    return PartitionAnswer(result, partial(finished_hits, run, analyzer, keys, config=config),
                           keys)
