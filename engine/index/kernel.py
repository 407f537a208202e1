"""The reference search kernel: behaviour.md §5 run over the inverted index.

Owns: session scope (§5.3), matching a query plan against the index, bm25 per row with
whole-index statistics, the total orders of §5.4, `limit + 1` truncation, snippets for
returned rows only, and the CJK zero-hit retry (§7.1). Must not touch: the query policy
(`engine.query.user_query` / `engine.query.cjk` make the plans), the formulas
(`engine.score.bm25`, `engine.results.snippet`, `engine.results.bounds`), files, or the
transcript store (the backend hands in the windows and the `indexing` flag).

Layering note: this module sits above `query`, `score` and `results` although it lives
in `index/`, because the brief gives the index package the reference kernel. It imports
those packages' pure functions and values only; nothing in them imports the index.

The kernel, for a request (clear version; every step is a plain loop or set operation):

1. plan = `plan_query(query, analyzer, match)`; limit = `clamp_limit(limit)`;
2. selected windows = windows whose key is in scope (§5.3), with the `sessionId` filter,
   not archived (counted in `archivedTranscriptsExcluded` instead), and not
   `needs_rebuild`; rows of windows the store no longer has are never selected;
3. for each phrase, its occurrences over the WHOLE index (`n_i` counts rows outside the
   scope too, like FTS5); the rows matching every phrase, in scope, with the role;
4. rank = `bm25` (negative, lower is better) with `N`, `avgdl` of the whole index;
5. order: relevance = rank ASC, timestamp DESC (SQLite type order: NULL < numbers < text),
   message id ASC (UTF-8 bytes), then session id and doc id ASC to settle ties; recent =
   timestamp DESC, doc id DESC;
6. keep `limit + 1` rows; `truncated` = more than `limit`; cut snippets for the first
   `limit` only (tokens re-analyzed from the stored text, phrase instances from the
   positions; `engine.index.fast_snippet`, equal to `results.snippet.fts5_snippet`),
   bounded to 500 UTF-16 units + "…";
7. only when step 3 found no row in scope and the query holds a CJK term: the retry plan
   (word phrases + literal substrings, `engine.query.cjk.retry_plan`) over the same
   scope and filters, scanning the stored text of the candidate rows. Rows found by
   substrings alone have no bm25 (there is no MATCH) and rank 0.0; their excerpt is
   `substring_excerpt`.

Cost of the CJK retry. The clear version (`cjk_grams=False`, the test oracle) scans the
stored text of every row: O(total characters). `rank_rows(cjk_grams=True)` narrows the
rows first with the CJK character/bigram index of `engine.index.cjk_grams` (an in-memory
index built at the first retry: about 0.5 s at 100k messages). The fast path (`top_rows`,
the default) needs no such build: the row columns of `engine.index.query_columns` keep the
rows whose text holds a non-ASCII character, and a needle without ASCII letters is
matched against their visible text with `in` (C), about 8 ms at 100k messages. The hypothesis
tests require all three to give identical results.

The fast path. `run_kernel` runs `top_rows` by default; `fast=False` runs the clear
`rank_rows` + `order_rows`, its oracle (`tests/index/test_fast_kernel.py`). Measured at
100k messages (bench `--only query`, medians; before -> after): common word 640 ms ->
28 ms, recent order 685 ms -> 17 ms, agent scope 242 ms -> 16 ms (SQLite FTS5: 176,
156, 109 ms in the same conditions); 896 requests of every class, scope, role, order
and limit answered byte-identically before and after.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import total_ordering
from itertools import compress
from typing import Any

from engine.analysis.token import Analyzer
from engine.gc_pause import paused_garbage_collection
from engine.index.documents import DocumentRecord
from engine.index.fast_snippet import fast_fts5_snippet
from engine.index.inverted_index import InvertedIndex
from engine.index.matching import phrase_occurrences
from engine.index.query_columns import QueryColumns, RowColumns, query_columns
from engine.model import (
    DEFAULT_AGENT_ID,
    SearchHit,
    SearchRequest,
    SearchResult,
    SessionWindow,
)
from engine.query.ast import Phrase, QueryPlan
from engine.query.cjk import retry_plan, substring_excerpt, substring_matches
from engine.query.user_query import clamp_limit, plan_query, validate_request
from engine.results.bounds import bound_snippet
from engine.results.snippet import explain_snippet
from engine.score.bm25 import Bm25Explanation, bm25, explain_bm25, inverse_document_frequency

# ----- scope (§5.3) -------------------------------------------------------------------


def key_in_scope(
    session_key: str, agent_id: str | None, session_keys: Collection[str] | None
) -> bool:
    """Whether a window's key is selected by a request's `agentId` / `sessionKeys`.

    `sessionKeys` omitted: the literal namespace `agent:<agentId>:` (underscores literal,
    like GLOB; `agentId` omitted means `main`) plus `global` and `unknown`; empty: every
    key; else exact membership.

    >>> [key_in_scope(k, "work_team", None) for k in ("agent:work_team:main",
    ...     "agent:workxteam:main", "global", "unknown", "agent:other:x")]
    [True, False, True, True, False]
    >>> key_in_scope("agent:other:x", None, ())
    True
    """
    if session_keys is None:
        if session_key in ("global", "unknown"):
            return True
        agent = DEFAULT_AGENT_ID if agent_id is None else agent_id
        return session_key.startswith(f"agent:{agent}:")
    if not session_keys:
        return True
    return session_key in session_keys


@dataclass(frozen=True, slots=True)
class Scope:
    """The windows a request selects and the archived windows it had to leave out."""

    session_keys: Mapping[str, str]  # session_id -> session_key, searchable windows only
    archived_excluded: int


def select_scope(
    windows: Iterable[SessionWindow],
    request: SearchRequest,
    needs_rebuild: Callable[[str], bool],
) -> Scope:
    """Apply §5.3 to every window: key scope, `sessionId`, archived, `needs_rebuild`."""
    keys = request.session_keys
    selected_keys = frozenset(keys) if keys else keys
    selected: dict[str, str] = {}
    archived = 0
    for window in windows:
        if request.session_id is not None and window.session_id != request.session_id:
            continue
        if not key_in_scope(window.session_key, request.agent_id, selected_keys):
            continue
        if window.archived:
            archived += 1
            continue
        if needs_rebuild(window.session_id):
            continue
        selected[window.session_id] = window.session_key
    return Scope(selected, archived)


# ----- ordering (§5.4) ----------------------------------------------------------------


def sqlite_value_key(value: Any) -> tuple[int, Any]:
    """SQLite's cross-type order of a column value: NULL < numbers < text (BINARY).

    >>> sorted([None, "10", 3, 2.5], key=sqlite_value_key)
    [None, 2.5, 3, '10']
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return (0, 0)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (1, value)
    if isinstance(value, str):
        return (2, value.encode("utf-8", "surrogatepass"))
    return (3, bytes(value))


@total_ordering
class Descending:
    """Wraps a sort key so that ascending sorts put larger values first."""

    __slots__ = ("key",)

    def __init__(self, key: Any) -> None:
        self.key = key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Descending) and self.key == other.key

    def __lt__(self, other: Descending) -> bool:
        return other.key < self.key


@dataclass(frozen=True, slots=True)
class RankedRow:
    """One matching row with its rank and its phrase instances (for the snippet)."""

    record: DocumentRecord
    rank: float
    phrase_hits: tuple[tuple[int, int, int], ...]
    by_substring: bool = False


def relevance_key(row: RankedRow) -> tuple:
    """rank ASC, timestamp DESC, message id ASC, session id ASC (UTF-8 bytes), doc id ASC.

    Upstream orders by the first three only; the session id and the doc id make ties
    deterministic (the SQLite backend adds the same session-id key).
    """
    record = row.record
    return (
        row.rank,
        Descending(sqlite_value_key(record.timestamp)),
        record.message_id.encode("utf-8", "surrogatepass"),
        record.session_id.encode("utf-8", "surrogatepass"),
        record.doc_id,
    )


def recent_key(row: RankedRow) -> tuple:
    """timestamp DESC, doc id (insertion order) DESC."""
    return (Descending(sqlite_value_key(row.record.timestamp)), -row.record.doc_id)


# ----- matching and ranking -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PhraseMatches:
    """One phrase's occurrences over the whole index: `{doc_id: [start positions]}`."""

    phrase: Phrase
    occurrences: Mapping[int, list[int]]

    @property
    def matching_rows(self) -> int:
        """FTS5's `n_i`: rows of the whole index holding the phrase."""
        return len(self.occurrences)


def match_phrases(index: InvertedIndex, phrases: Sequence[Phrase]) -> list[PhraseMatches]:
    """The occurrences of every phrase of a plan, in phrase order."""
    return [
        PhraseMatches(phrase, phrase_occurrences(index, phrase.terms, prefix=phrase.prefix))
        for phrase in phrases
    ]


def _eligible(record: DocumentRecord, scope: Scope, role: str | None) -> bool:
    return record.session_id in scope.session_keys and (role is None or record.role == role)


def substring_candidates(index: InvertedIndex, plan: QueryPlan) -> set[int] | None:
    """Rows that may hold every substring of `plan` (CJK gram index), or None: no narrowing."""
    narrowed: set[int] | None = None
    for term in plan.substrings:
        rows = index.cjk_grams.candidates(term.text)
        if rows is not None:
            narrowed = rows if narrowed is None else narrowed & rows
    return narrowed


def rank_rows(
    index: InvertedIndex,
    plan: QueryPlan,
    scope: Scope,
    role: str | None,
    *,
    cjk_grams: bool = True,
) -> list[RankedRow]:
    """Every row in scope matching the whole plan, with its rank (unordered).

    With `cjk_grams=False` a substring plan scans every row (the clear version); with
    True the CJK gram index first narrows the rows to scan (same answers, tested).
    """
    if plan.matches_nothing:
        return []
    matches = match_phrases(index, plan.phrases)
    narrowed = substring_candidates(index, plan) if cjk_grams and plan.substrings else None
    if matches:
        candidate_ids = set(min(matches, key=lambda item: item.matching_rows).occurrences)
        for item in matches:
            candidate_ids.intersection_update(item.occurrences)
        if narrowed is not None:
            candidate_ids.intersection_update(narrowed)
        candidates = [index.document(doc_id) for doc_id in sorted(candidate_ids)]
    elif narrowed is not None:
        candidates = [index.document(doc_id) for doc_id in sorted(narrowed)]
    else:
        candidates = list(index.documents())  # a substring-only retry scans every row
    total_rows = index.document_count
    average = index.average_length
    idfs = [inverse_document_frequency(total_rows, item.matching_rows) for item in matches]
    rows = []
    for record in candidates:
        if not _eligible(record, scope, role):
            continue
        if not all(substring_matches(record.text, term.text) for term in plan.substrings):
            continue
        hits = tuple(
            (phrase_index, start, len(item.phrase.terms))
            for phrase_index, item in enumerate(matches)
            for start in item.occurrences[record.doc_id]
        )
        stats = [
            (idfs[phrase_index], len(item.occurrences[record.doc_id]))
            for phrase_index, item in enumerate(matches)
        ]
        rank = bm25(stats, record.length, average) if stats else 0.0
        rows.append(RankedRow(record, rank, hits, by_substring=bool(plan.substrings)))
    return rows


def order_rows(rows: Iterable[RankedRow], order: str, count: int | None = None) -> list[RankedRow]:
    """The rows in the request's total order; only the first `count` when given.

    `heapq.nsmallest` equals `sorted(...)[:count]` (the keys are a total order) in
    O(n log count) instead of O(n log n).
    """
    key = recent_key if order == "recent" else relevance_key
    if count is None:
        return sorted(rows, key=key)
    return heapq.nsmallest(count, rows, key=key)


# ----- the fast path ------------------------------------------------------------------
#
# `top_rows` returns exactly `order_rows(rank_rows(...), order, count)` (the clear version
# above, and its test oracle) while touching per matching row only list columns
# (`engine.index.query_columns`), never a `DocumentRecord`:
#
# * a phrase is `{doc_id: instances}` plus a way to get its instance starts; a one-token
#   phrase reads them straight from the cached posting columns;
# * the scope and role filter is one mask lookup per row (`RowColumns.scope_mask`);
# * bm25 depends on a row only through `(D, f_1, ..., f_k)`, so each distinct tuple is
#   scored once with `score.bm25` itself (same function, same arguments: same bits);
# * relevance: any of the first `count` rows has a rank no larger than the `count`-th
#   smallest rank, so only rows up to that rank become `RankedRow`s and are ordered with
#   the full `relevance_key`;
# * recent: the first `count` rows by `(timestamp, doc_id)` descending, then ranked.


class _ScoreMemo(dict):
    """bm25 of a row from its key `(D, f_1, ..., f_k)`, computed once per distinct key."""

    __slots__ = ("average", "idfs")

    def __init__(self, idfs: list[float], average: float) -> None:
        super().__init__()
        self.idfs = idfs
        self.average = average

    def __missing__(self, key: tuple[int, ...]) -> float:
        value = bm25(list(zip(self.idfs, key[1:])), key[0], self.average)
        self[key] = value
        return value


@dataclass(frozen=True, slots=True)
class PhraseRows:
    """One phrase over the whole index (fast path): instances per row, and their starts."""

    phrase: Phrase
    counts: Mapping[int, int]
    starts: Callable[[int], Sequence[int]]


def phrase_rows(columns: QueryColumns, index: InvertedIndex, phrase: Phrase) -> PhraseRows:
    """`phrase_occurrences` of `engine.index.matching` (the clear version), from columns."""
    terms = phrase.terms
    if not terms:
        return PhraseRows(phrase, {}, lambda doc_id: ())
    last = len(terms) - 1
    tokens = [
        columns.token(index, term, prefix=phrase.prefix and position == last)
        for position, term in enumerate(terms)
    ]
    if len(tokens) == 1:
        only = tokens[0]
        return PhraseRows(phrase, dict(zip(only.doc_ids, only.counts)), only.positions_of)
    rarest = min(tokens, key=len)
    candidates = set(rarest.doc_ids).intersection(
        *(token.doc_ids for token in tokens if token is not rarest)
    )
    found: dict[int, list[int]] = {}
    for doc_id in sorted(candidates):
        later = [set(token.positions_of(doc_id)) for token in tokens[1:]]
        starts = [
            start
            for start in tokens[0].positions_of(doc_id)
            if all(start + offset in positions for offset, positions in enumerate(later, 1))
        ]
        if starts:
            found[doc_id] = starts
    return PhraseRows(phrase, {doc_id: len(starts) for doc_id, starts in found.items()},
                      found.__getitem__)


def _recent_first(
    index: InvertedIndex, rows: RowColumns, doc_ids: list[int], count: int
) -> list[int]:
    """The first `count` of `doc_ids` by timestamp DESC (SQLite order), doc id DESC."""
    if rows.odd_timestamps == 0:
        timestamps = rows.timestamps
        return [doc_id for _timestamp, doc_id in
                heapq.nlargest(count, zip(map(timestamps.__getitem__, doc_ids), doc_ids))]
    return heapq.nlargest(
        count, doc_ids,
        key=lambda doc_id: (sqlite_value_key(index.document(doc_id).timestamp), doc_id),
    )


def _newest_and_ties(rows: RowColumns, doc_ids: list[int], count: int) -> list[int]:
    """The rows whose timestamp is at least the `count`-th newest (all when some row's
    timestamp is not a plain number): a superset of the first `count` rows when every
    rank is equal, since the relevance order then starts with timestamp DESC."""
    if rows.odd_timestamps:
        return doc_ids
    timestamps = rows.timestamps
    threshold = heapq.nlargest(count, map(timestamps.__getitem__, doc_ids))[-1]
    return [doc_id for doc_id in doc_ids if timestamps[doc_id] >= threshold]


def literal_check(needle: str) -> Callable[[str], bool]:
    """A test equal to `substring_matches(text, needle)` (SQLite LIKE), for one needle.

    LIKE lowercases ASCII letters only, and letters only to letters; so when the visible
    needle (before any NUL) holds no ASCII letter, a folded match is a plain match, and
    the test is a `str.find` over the text before its first NUL, without copying or
    folding the text. Other needles use `substring_matches` itself.

    >>> [literal_check("会议")(text) for text in ("开会议", "会 议", "a\\x00会议", "会议\\x00")]
    [True, False, False, True]
    >>> literal_check("Cat")("a CAT")
    True
    """
    visible = needle.split("\x00", 1)[0]
    if any("A" <= character <= "Z" or "a" <= character <= "z" for character in visible):
        return lambda text: substring_matches(text, needle)

    def check(text: str) -> bool:
        end = text.find("\x00")
        return text.find(visible, 0, len(text) if end < 0 else end) >= 0

    return check


def top_rows(
    index: InvertedIndex,
    plan: QueryPlan,
    scope: Scope,
    role: str | None,
    order: str,
    count: int,
    *,
    cjk_grams: bool = True,
) -> list[RankedRow]:
    """The first `count` rows of `order_rows(rank_rows(...), order, count)`, faster."""
    if plan.matches_nothing or count <= 0:
        return []
    columns = query_columns(index)
    rows = columns.rows
    phrases = [phrase_rows(columns, index, phrase) for phrase in plan.phrases]
    narrowed: list[int] | None = None  # rows that may hold every substring
    checks = [(term.text, literal_check(term.text)) for term in plan.substrings]
    if cjk_grams:
        for term in plan.substrings:
            found = rows.literal_candidates(index, term.text)
            if found is None:
                continue
            if found[1]:  # exactly the rows holding this needle: no need to check it again
                checks = [(needle, check) for needle, check in checks if needle != term.text]
            if narrowed is None:
                narrowed = found[0]
            else:
                narrowed = sorted(set(narrowed).intersection(found[0]))
    candidates: Iterable[int]
    if phrases:
        counts = [item.counts for item in phrases]
        smallest = min(counts, key=len)
        if len(counts) == 1 and narrowed is None:
            candidates = smallest.keys()
        else:
            others = [other for other in counts if other is not smallest]
            if narrowed is not None:
                others.append(narrowed)
            candidates = set(smallest).intersection(*others)
    elif narrowed is not None:
        candidates = narrowed
    else:
        candidates = list(index.live_doc_ids())
    mask = rows.scope_mask(scope.session_keys, role)
    if mask is None:
        eligible = list(candidates)
    else:
        eligible = list(compress(candidates, map(mask.__getitem__, map(rows.groups.__getitem__, candidates))))
    if checks:
        eligible = [
            doc_id for doc_id in eligible
            if all(check(index.text(doc_id)) for _needle, check in checks)
        ]
    memo = _ScoreMemo(
        [inverse_document_frequency(index.document_count, len(item.counts)) for item in phrases],
        index.average_length,
    )

    def score_keys(doc_ids: list[int]) -> Iterable[tuple[int, ...]]:
        return zip(map(rows.lengths.__getitem__, doc_ids),
                   *(map(item.counts.__getitem__, doc_ids) for item in phrases))

    if order == "recent":
        chosen = _recent_first(index, rows, eligible, count)
    elif len(eligible) <= count:
        chosen = eligible
    elif not phrases:  # every rank is 0.0: the order starts with timestamp DESC
        chosen = _newest_and_ties(rows, eligible, count)
    else:
        ranks = list(map(memo.__getitem__, score_keys(eligible)))
        threshold = heapq.nsmallest(count, ranks)[-1]
        chosen = [doc_id for doc_id, rank in zip(eligible, ranks) if rank <= threshold]
    ranks = list(map(memo.__getitem__, score_keys(chosen))) if phrases else [0.0] * len(chosen)
    by_substring = bool(plan.substrings)
    ranked = [
        RankedRow(
            index.document(doc_id),
            rank,
            tuple(
                (phrase_index, start, len(item.phrase.terms))
                for phrase_index, item in enumerate(phrases)
                for start in item.starts(doc_id)
            ),
            by_substring=by_substring,
        )
        for doc_id, rank in zip(chosen, ranks)
    ]
    return order_rows(ranked, order, count)


# ----- snippets -----------------------------------------------------------------------


def token_spans(analyzer: Analyzer, text: str) -> list[tuple[int, int]]:
    """`(start, end)` str offsets of every token of `text` (the fast path when offered)."""
    fast = getattr(analyzer, "token_spans", None)
    if fast is not None:
        return [(start, end) for _term, start, end in fast(text)]
    return [(token.start, token.end) for token in analyzer.tokens(text)]


def row_snippet(row: RankedRow, analyzer: Analyzer, plan: QueryPlan) -> str:
    """The bounded excerpt of one returned row."""
    text = row.record.text
    if row.by_substring and not row.phrase_hits:
        excerpt = substring_excerpt(text, [term.text for term in plan.substrings])
    else:
        excerpt = fast_fts5_snippet(text, token_spans(analyzer, text), row.phrase_hits)
    return bound_snippet(excerpt)


def finite_or_zero(value: Any) -> float:
    """A finite number as float, anything else 0 (§5.2)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return 0.0


# ----- the kernel ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KernelRun:
    """Everything one search decided: the plan used, the ordered rows, the limit."""

    plan: QueryPlan
    retried: bool
    rows: tuple[RankedRow, ...]
    limit: int
    scope: Scope


def run_kernel(
    index: InvertedIndex,
    windows: Iterable[SessionWindow],
    request: SearchRequest,
    analyzer: Analyzer,
    *,
    cjk_grams: bool = True,
    fast: bool = True,
) -> KernelRun:
    """Steps 1–5 and 7 of the module docstring: the ordered `limit + 1` rows.

    `fast=False` runs the clear version (`rank_rows` then `order_rows`), the oracle of
    the default `top_rows`.
    """
    validate_request(request)
    plan = plan_query(request.query, analyzer, match=request.match)
    limit = clamp_limit(request.limit)
    states = index.window_states
    scope = select_scope(
        windows, request,
        lambda session_id: (state := states.get(session_id)) is not None and state.needs_rebuild,
    )

    def ordered_rows(plan: QueryPlan, use_grams: bool) -> list[RankedRow]:
        if fast:
            # Decoding a long posting list or filling the row columns allocates many
            # small acyclic objects; a cyclic collection meanwhile would walk the whole
            # heap (the index) and free nothing: measured 30x slower decodes.
            with paused_garbage_collection():
                return top_rows(index, plan, scope, request.role, request.order, limit + 1,
                                cjk_grams=use_grams)
        rows = rank_rows(index, plan, scope, request.role, cjk_grams=use_grams)
        return order_rows(rows, request.order, limit + 1)

    ordered = ordered_rows(plan, True)
    retried = False
    if not ordered:
        retry = retry_plan(request.query, analyzer, match=request.match)
        if retry is not None:
            plan, retried = retry, True
            ordered = ordered_rows(plan, cjk_grams)
    return KernelRun(plan, retried, tuple(ordered), limit, scope)


def search_index(
    index: InvertedIndex,
    windows: Iterable[SessionWindow],
    request: SearchRequest,
    analyzer: Analyzer,
    *,
    indexing: bool = False,
    cjk_grams: bool = True,
    fast: bool = True,
) -> SearchResult:
    """The kernel result of §5.2 for `request`."""
    run = run_kernel(index, windows, request, analyzer, cjk_grams=cjk_grams, fast=fast)
    return result_of_run(run, analyzer, indexing=indexing)


def result_of_run(run: KernelRun, analyzer: Analyzer, *, indexing: bool) -> SearchResult:
    """The hits of a kernel run (snippets cut for the first `limit` rows only)."""
    hits = []
    for row in run.rows[: run.limit]:
        record = row.record
        hits.append(
            SearchHit(
                session_key=run.scope.session_keys[record.session_id],
                session_id=record.session_id,
                message_id=record.message_id,
                role=record.role,
                timestamp=finite_or_zero(record.timestamp),
                snippet=row_snippet(row, analyzer, run.plan),
                score=finite_or_zero(-row.rank) or 0.0,
            )
        )
    return SearchResult(
        hits=tuple(hits),
        truncated=len(run.rows) > run.limit,
        indexing=indexing,
        archived_transcripts_excluded=run.scope.archived_excluded,
    )


# ----- explanation --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HitExplanation:
    """Why one hit ranks where it does and how its excerpt window was chosen."""

    hit: SearchHit
    doc_id: int
    bm25: Bm25Explanation | None
    snippet_lines: tuple[str, ...]


def explain_search(
    index: InvertedIndex,
    windows: Iterable[SessionWindow],
    request: SearchRequest,
    analyzer: Analyzer,
) -> tuple[KernelRun, list[HitExplanation]]:
    """The kernel run plus, per returned hit, its bm25 terms and its snippet choice."""
    run = run_kernel(index, windows, request, analyzer)
    result = result_of_run(run, analyzer, indexing=False)
    matches = match_phrases(index, run.plan.phrases)
    explanations = []
    for row, hit in zip(run.rows, result.hits):
        record = row.record
        explanation = None
        if matches:
            explanation = explain_bm25(
                [
                    (" ".join(item.phrase.terms) + ("*" if item.phrase.prefix else ""),
                     item.matching_rows, len(item.occurrences.get(record.doc_id, ())))
                    for item in matches
                ],
                total_rows=index.document_count,
                total_tokens=index.total_tokens,
                document_length=record.length,
            )
        if row.phrase_hits:
            lines = explain_snippet(
                record.text, token_spans(analyzer, record.text), row.phrase_hits
            ).lines()
        else:
            lines = ["substring excerpt around the earliest needle (engine.query.cjk)"]
        explanations.append(HitExplanation(hit, record.doc_id, explanation, tuple(lines)))
    return run, explanations
