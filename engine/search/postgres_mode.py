"""The PostgreSQL backend's search, predicted in Python: the reference engine's `postgres`
expectation mode, and the parts the backend itself shares with it (the compiled queries,
the excerpt).

Owns: which compiled queries a checked request gives on PostgreSQL (`postgres_queries`: the
word query and the CJK retry's, from `engine.query.pg_tsquery`), what the backend's rows
rank and match in Python (`rank_of_row`), the excerpt of a returned row
(`postgres_excerpt`: the engine's snippet rules over the `pg` profile's tokens), and the
whole expected search over one partition's rows (`expected_search`). Must not touch:
SQL (the backend, `engine.backends.postgres.search`, runs the same policy on the server),
the formulas (`engine.score.ts_rank`, `engine.results`), the scope rule and the orders
(`engine.search.scope`, `engine.search.order`), the index.

The backend's search, which this predicts (behaviour.md §5 with the PostgreSQL path of
§7.2):
1. the scope of §5.3 (agent namespace, keys, `sessionId`, archived windows counted and
   left out, dirty windows left out), the role filter;
2. the rows whose stored text (`engine.index.documents.postgres_text`; its first
   `INDEXED_CHARACTERS`) has a tsvector (`POSTGRES_PROFILE`) matching the compiled word query (`PgQuery`; a query with an
   empty term matches nothing), ranked by `ts_rank(vector, query, 1)` (float4);
3. order: rank descending, timestamp descending, message id, session id (UTF-8 bytes),
   row id (insertion order) ascending; `recent`: timestamp descending, row id descending;
   the first `limit + 1`;
4. when no row matched and the query holds a CJK term: the retry (§7.1), its word terms
   as a compiled query (prefix as `engine.query.cjk.retry_prefix` says) and each CJK term
   a substring the text must hold with SQLite's `LIKE` comparison (ASCII letters fold,
   nothing else), rank 0 without word terms;
5. excerpts for the first `limit`: FTS5's snippet window over the row's `pg` tokens,
   around the instances of the compiled phrases (`phrase_instances`), or the substring
   excerpt for a row found by substrings alone; hits by `engine.search.hits.search_hit`
   with rank = −ts_rank, so a hit's score is the float4 `ts_rank`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from engine.analysis.profiles import POSTGRES_PROFILE
from engine.analysis.token import Analyzer, Token
from engine.index.documents import DocumentRecord, postgres_text
from engine.model import NO_HITS, SearchResult, SessionWindow
from engine.query.checked_request import CheckedRequest
from engine.query.cjk import (
    partition_terms,
    retry_prefix,
    substring_excerpt,
    substring_matches,
    substring_needles,
    substring_spans,
)
from engine.query.pg_tsquery import PgQuery, compile_terms, phrase_instances, stored_operands
from engine.query.user_query import split_terms
from engine.results.fast_snippet import fast_fts5_snippet_matches
from engine.score.ts_rank import BACKEND_NORMALIZATION, ts_rank
from engine.search.hits import search_hit
from engine.search.order import RankedRow, order_rows
from engine.search.scope import select_scope

#: The characters of a row's text its tsvector is made of (the first ones): a tsvector
#: holds at most 1,048,575 bytes, and a longer text could need more (PostgreSQL would
#: then refuse the whole write); 150,000 characters stay below it whatever they are.
#: The rest of the text is still shown in excerpts and found by the CJK retry's LIKE.
INDEXED_CHARACTERS = 150_000


@lru_cache(maxsize=1)
def postgres_analyzer() -> Analyzer:
    """The analyzer of the postgres backend's rows and queries (`POSTGRES_PROFILE`)."""
    return POSTGRES_PROFILE.analyzer()


@dataclass(frozen=True, slots=True)
class PostgresQueries:
    """A checked request's compiled word query and its CJK retry (None: no CJK term)."""

    words: PgQuery
    retry: PgQuery | None


@lru_cache(maxsize=256)
def postgres_queries(query: str, match: str) -> PostgresQueries:
    """The compiled queries of a checked query (trimmed, not empty) and `match`.

    >>> queries = postgres_queries("会议 deploy", "prefix")
    >>> queries.words.text(), queries.retry.text(), queries.retry.substrings
    ("'会议' & 'deploy':*", "'deploy':*", ('会议',))
    """
    analyzer = postgres_analyzer()
    terms = split_terms(query)
    # What PostgreSQL text cannot hold reads as U+FFFD, a separator, as in the rows.
    words = compile_terms([postgres_text(term) for term in terms], analyzer,
                          prefix=match == "prefix")
    word_terms, cjk_terms = partition_terms(terms)
    if not cjk_terms:
        return PostgresQueries(words, None)
    retry_words = compile_terms([postgres_text(term) for term in word_terms], analyzer,
                                prefix=retry_prefix(terms, match))
    return PostgresQueries(words, PgQuery(retry_words.phrases,
                                          tuple(substring_needles(cjk_terms))))


def rank_of_row(vector: Mapping[str, list[int]], query: PgQuery) -> float:
    """`ts_rank(vector, query, 1)` of a matching row (0.0 for a query of substrings only)."""
    tree = query.tree()
    if tree is None:
        return 0.0
    operands = [(operand.lexeme, operand.prefix) for operand in stored_operands(tree)]
    return ts_rank(vector, operands, len(operands) > 1, BACKEND_NORMALIZATION)


def postgres_excerpt(text: str, query: PgQuery) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The excerpt of a returned row with stored text `text` (before the 500-unit bound)
    and where it shows what matched (see the module docstring, step 5)."""
    if not query.phrases and query.substrings:
        excerpt = substring_excerpt(text, query.substrings)
        return excerpt, substring_spans(excerpt, query.substrings)
    tokens = row_tokens(text)
    return fast_fts5_snippet_matches(text, [(token.start, token.end) for token in tokens],
                                     phrase_instances(tokens, query))


@lru_cache(maxsize=512)
def row_tokens(text: str) -> tuple[Token, ...]:
    """The `pg` tokens of a row's stored text, kept for the rows cut last (the parser is
    most of an excerpt's cost, and the same rows come back search after search)."""
    return tuple(postgres_analyzer().tokens(text))


class RowVectors:
    """The stored text and tsvector of each row, made once per row (by row id)."""

    def __init__(self) -> None:
        self._kept: dict[int, tuple[str, dict[str, list[int]]]] = {}

    def of(self, record: DocumentRecord) -> tuple[str, dict[str, list[int]]]:
        kept = self._kept.get(record.doc_id)
        if kept is None or kept[0] != postgres_text(record.text):
            text = postgres_text(record.text)
            kept = self._kept[record.doc_id] = (
                text, postgres_analyzer().tsvector(text[:INDEXED_CHARACTERS]))
        return kept


def _matching(rows: Iterable[DocumentRecord], scope_keys: Mapping[str, str], role: str | None,
              query: PgQuery, vectors: RowVectors) -> list[RankedRow]:
    """The rows in scope with the role that match `query`, ranked (rank = −ts_rank)."""
    from engine.analysis.pg_query import matches

    if query.matches_nothing:
        return []
    tree = query.tree()
    found = []
    for record in rows:
        if record.session_id not in scope_keys or (role is not None and record.role != role):
            continue
        text, vector = vectors.of(record)
        if tree is not None and not matches(vector, tree):
            continue
        if not all(substring_matches(text, needle) for needle in query.substrings):
            continue
        found.append(RankedRow(record, -rank_of_row(vector, query), (),
                               by_substring=bool(query.substrings)))
    return found


def expected_search(rows: Callable[[], Iterable[DocumentRecord]],
                    windows: Iterable[SessionWindow], request: CheckedRequest,
                    needs_rebuild: Callable[[str], bool], *, indexing: bool,
                    vectors: RowVectors | None = None) -> SearchResult:
    """What the postgres backend answers for `request` over one partition whose index
    holds `rows()` and whose windows are `windows` (`needs_rebuild`: a window's dirty
    flag), the steps of the module docstring."""
    vectors = vectors if vectors is not None else RowVectors()
    scope = select_scope(windows, request, needs_rebuild)
    queries = postgres_queries(request.trimmed_query, request.match)
    limit = request.page_limit
    query = queries.words
    ranked = _matching(rows(), scope.session_keys, request.role, query, vectors)
    if not ranked and queries.retry is not None:
        query = queries.retry
        ranked = _matching(rows(), scope.session_keys, request.role, query, vectors)
    ordered = order_rows(ranked, request.order, limit + 1)
    if not ordered and not indexing and not scope.archived_excluded:
        return NO_HITS
    hits = []
    for row in ordered[:limit]:
        record = row.record
        excerpt, matched = postgres_excerpt(vectors.of(record)[0], query)
        hits.append(search_hit(session_key=scope.session_keys[record.session_id],
                               session_id=record.session_id, message_id=record.message_id,
                               role=record.role, timestamp=record.timestamp, excerpt=excerpt,
                               rank=row.rank, matched=matched))
    return SearchResult(hits=tuple(hits), truncated=len(ordered) > limit, indexing=indexing,
                        archived_transcripts_excluded=scope.archived_excluded)
