"""The reference backend against its own upstream FTS5 table, built here with plain `sqlite3`.

Independent of `engine.backends.sqlite.backend` and of the engine's query policy: this module
writes, in its own words, the upstream table (`session_transcript_fts`, `unicode61
remove_diacritics 2`) and a `session_windows` table, the FTS string rules of behaviour.md §4
(terms split on the JavaScript whitespace class, each wrapped in `"` with inner quotes
doubled, joined with ` AND `, `*` after the last in prefix mode), the limit clamp, the
500-unit snippet bound, and the baseline query of §5.4:

    SELECT w.session_key, f.session_id, f.message_id, f.role, f.timestamp,
           snippet(session_transcript_fts, 0, '', '', ' … ', 48), bm25(session_transcript_fts)
    FROM session_transcript_fts AS f JOIN session_windows AS w ON w.session_id = f.session_id
    WHERE session_transcript_fts MATCH :fts AND <scope §5.3> AND <not needs_rebuild>
          [AND f.session_id = :sessionId] [AND f.role = :role]
    ORDER BY rank ASC, f.timestamp DESC, f.message_id ASC     -- relevance
          |  f.timestamp DESC, f.rowid DESC                     -- recent
    LIMIT :limit + 1

The rows come from the reference backend's own projection: after `reconcile()`, every
window's events go through `engine.transcript.projection.index_entries` (THE definition of
what is searchable, shared by design) and are inserted here. Text reaches SQLite as a
UTF-8 column holds it, lone surrogates becoming U+FFFD, as upstream's JavaScript strings do;
the query does the same.

Two parts of the engine have no upstream SQL and are written here "in spirit":
* cold archives: archived windows are listed in `session_transcript_cold_archives`, not in
  `session_windows`, so the JOIN leaves them out while their FTS rows still count in bm25's
  N; `archivedTranscriptsExcluded` counts the archived windows in scope;
* the CJK retry of §7.1 (PR #143127): only when the baseline returned no row, the terms
  holding a Han, Kana or Hangul character (the memory-search ranges U+3040–30FF,
  U+3400–9FFF, U+AC00–D7AF, U+3131–3163) become `text LIKE '%…%' ESCAPE '\\'` (split at NUL,
  which SQLite's LIKE cannot see past), the other terms stay a MATCH (prefix only when the
  query's last term is a word term). Without word terms the score is 0 and the order is
  `timestamp DESC, message_id ASC` (relevance) or `timestamp DESC, rowid DESC` (recent);
  such an excerpt is the engine's own design (`engine.query.cjk.substring_excerpt`), the
  one engine function this module calls to compare.

Ties. The baseline ORDER BY leaves some orders open (equal rank, timestamp and message id
in two windows; equal timestamps under `recent`, where rowids are our insertion order, not
the reference's). The comparison therefore requires: the same `truncated`; the reference's
hits carry, position by position, the same sort key as the baseline's first rows (rank to
1e-9 relative); every hit is a row of the unlimited baseline, with the same fields,
snippet and score (1e-9 relative); no hit twice. That is exactly "a valid top-`limit` of
the baseline order".
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from engine.backends.reference.backend import ReferenceBackend
from engine.directory import MemoryDirectory
from engine.errors import QueryError
from engine.model import SearchRequest, SearchResult, SessionWindow
from engine.query.cjk import substring_excerpt
from engine.transcript.projection import index_entries
from tests.parity.known_divergences import (
    KNOWN_DIVERGENCES,
    UPSTREAM_SQL,
    DivergenceCase,
    recognised,
)
from tests.parity.strategies import (
    PARITY_SETTINGS,
    REQUIRED_COVERAGE,
    AppendEvent,
    Corpus,
    PutWindow,
    corpora,
    corpus_of,
    load_corpus,
    requests,
    tally_outcome,
)

SCORE_RELATIVE_TOLERANCE = 1e-9

# ---- the upstream schema and the query rules, written here ---------------------------

UPSTREAM_SCHEMA = """
CREATE VIRTUAL TABLE session_transcript_fts USING fts5(
    text,
    session_id UNINDEXED,
    message_id UNINDEXED,
    role UNINDEXED,
    timestamp UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE session_windows (session_id TEXT PRIMARY KEY, session_key TEXT NOT NULL);
CREATE TABLE session_transcript_cold_archives (session_id TEXT PRIMARY KEY, session_key TEXT NOT NULL);
CREATE TABLE session_transcript_index_state (session_id TEXT PRIMARY KEY, needs_rebuild INTEGER NOT NULL);
"""

JAVASCRIPT_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
WHITESPACE_RUN = re.compile(f"[{JAVASCRIPT_WHITESPACE}]+")
MEMORY_SEARCH_CJK = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\u3131-\u3163]")
SNIPPET_SQL = "snippet(session_transcript_fts, 0, '', '', ' … ', 48)"


def as_utf8_column(text: str) -> str:
    """What a UTF-8 column holds when a JavaScript string is bound to SQLite: each lone
    surrogate (one UTF-16 unit) becomes one U+FFFD."""
    if not _has_surrogate(text):
        return text
    return "".join("\ufffd" if 0xD800 <= ord(character) <= 0xDFFF else character for character in text)


def _has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(character) <= 0xDFFF for character in text)


def query_terms_of(query: str) -> list[str]:
    """Trim, then split on runs of JavaScript whitespace (§4); [] for a blank query."""
    return [term for term in WHITESPACE_RUN.split(query) if term]


def fts_string(terms: Sequence[str], *, prefix: bool) -> str:
    """Each term one FTS5 string (inner `"` doubled), joined with ` AND `; `*` after the last.

    One deliberate departure from upstream, the engine's documented decision
    (`engine.query.user_query`): FTS5 reads MATCH as a C string, so upstream fails on a
    query holding a NUL (`unterminated string`); the engine reads NUL as a separator, and so
    do we here (written as a space, also a separator), so such queries are still compared.
    """
    quoted = ['"' + term.replace("\x00", " ").replace('"', '""') + '"' for term in terms]
    if prefix and quoted:
        quoted[-1] += "*"
    return " AND ".join(quoted)


def clamped_limit(limit: int | None) -> int:
    return min(max(1, 10 if limit is None else limit), 25)


def utf16_units(text: str) -> int:
    return sum(2 if ord(character) > 0xFFFF else 1 for character in text)


def bounded_snippet(text: str, units: int = 500) -> str:
    """`truncateUtf16Safe(text, 500) + "…"` when longer than 500 UTF-16 units."""
    if utf16_units(text) <= units:
        return text
    kept, count = [], 0
    for character in text:
        width = 2 if ord(character) > 0xFFFF else 1
        if count + width > units:
            break
        kept.append(character)
        count += width
    if kept and 0xD800 <= ord(kept[-1]) <= 0xDBFF:
        kept.pop()
    return "".join(kept) + "…"


def glob_pattern(agent_id: str) -> str:
    """`agent:<id>:*` with GLOB's own metacharacters in the id written as classes."""
    return "agent:" + "".join({"*": "[*]", "?": "[?]", "[": "[[]"}.get(c, c) for c in agent_id) + ":*"


def like_pattern(needle: str) -> str:
    return "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


# ---- the upstream table, filled from the reference's projection ----------------------


def upstream_table(reference: ReferenceBackend) -> sqlite3.Connection:
    """A fresh in-memory database with the upstream tables and every window's index rows."""
    connection = sqlite3.connect(":memory:")
    connection.executescript(UPSTREAM_SCHEMA)
    for window in reference.windows():
        table = "session_transcript_cold_archives" if window.archived else "session_windows"
        connection.execute(f"INSERT INTO {table} VALUES (?, ?)", (window.session_id, window.session_key))
        connection.execute("INSERT INTO session_transcript_index_state VALUES (?, 0)", (window.session_id,))
        for entry in index_entries(reference.events(window.session_id)):
            connection.execute(
                "INSERT INTO session_transcript_fts (text, session_id, message_id, role, timestamp) "
                "VALUES (?, ?, ?, ?, ?)",
                (as_utf8_column(entry.text), entry.session_id, entry.message_id, entry.role, entry.timestamp),
            )
    return connection


@dataclass(frozen=True, slots=True)
class BaselineRow:
    session_key: str
    session_id: str
    message_id: str
    role: str
    timestamp: float
    snippet: str
    rank: float


def scope_sql(request: SearchRequest, alias: str = "w") -> tuple[str, list[Any]]:
    """§5.3 over `alias`, plus the sessionId condition."""
    parts: list[str] = []
    parameters: list[Any] = []
    if request.session_keys is None:
        agent_id = "main" if request.agent_id is None else request.agent_id
        parts.append(f"({alias}.session_key GLOB ? OR {alias}.session_key IN ('global', 'unknown'))")
        parameters.append(glob_pattern(agent_id))
    elif request.session_keys:
        parts.append(f"{alias}.session_key IN ({', '.join('?' * len(request.session_keys))})")
        parameters.extend(request.session_keys)
    if request.session_id is not None:
        parts.append(f"{alias}.session_id = ?")
        parameters.append(request.session_id)
    return (" AND ".join(parts) or "1"), parameters


def baseline_rows(
    connection: sqlite3.Connection,
    request: SearchRequest,
    *,
    match: str | None,
    needles: Sequence[str] = (),
    limit: int | None,
) -> list[BaselineRow]:
    """The baseline query (with `LIMIT limit + 1` when `limit` is given; all rows otherwise).

    `match=None` is the substring-only retry: no MATCH, rank 0, the text instead of a snippet.
    """
    scope, parameters = scope_sql(request)
    not_dirty = ("f.session_id NOT IN (SELECT session_id FROM session_transcript_index_state "
                 "WHERE needs_rebuild != 0)")
    conditions = [scope, not_dirty]
    if request.role is not None:
        conditions.append("f.role = ?")
        parameters.append(request.role)
    like_parameters = [like_pattern(needle) for needle in needles]
    conditions[:0] = ["f.text LIKE ? ESCAPE '\\'"] * len(needles)
    if match is not None:
        conditions.insert(0, "session_transcript_fts MATCH ?")
        selected = f"{SNIPPET_SQL} AS excerpt, bm25(session_transcript_fts) AS rank"
        order = ("rank ASC, f.timestamp DESC, f.message_id ASC" if request.order == "relevance"
                 else "f.timestamp DESC, f.rowid DESC")
        all_parameters = [match, *like_parameters, *parameters]
    else:
        selected = "f.text AS excerpt, 0.0 AS rank"
        order = ("f.timestamp DESC, f.message_id ASC" if request.order == "relevance"
                 else "f.timestamp DESC, f.rowid DESC")
        all_parameters = [*like_parameters, *parameters]
    sql = (
        f"SELECT w.session_key, f.session_id, f.message_id, f.role, f.timestamp, {selected} "
        "FROM session_transcript_fts AS f JOIN session_windows AS w ON w.session_id = f.session_id "
        f"WHERE {' AND '.join(conditions)} ORDER BY {order}"
    )
    if limit is not None:
        sql += " LIMIT ?"
        all_parameters.append(limit + 1)
    return [BaselineRow(*row) for row in connection.execute(sql, all_parameters)]


@dataclass(frozen=True, slots=True)
class Baseline:
    """What upstream answers: the limited rows, every row (for ties), and the excerpt rule."""

    limited: list[BaselineRow]
    every: list[BaselineRow]
    limit: int
    substring_needles: tuple[str, ...] | None  # set when the rows came from LIKE alone
    archived: int


def upstream_answer(connection: sqlite3.Connection, request: SearchRequest) -> Baseline | str:
    """The baseline for one request, or the QueryError message upstream would raise."""
    terms = query_terms_of(request.query)
    if not terms:
        return "query must not be empty"
    terms = [as_utf8_column(term) for term in terms]
    limit = clamped_limit(request.limit)
    prefix = request.match == "prefix"
    scope, parameters = scope_sql(request, alias="a")
    (archived,) = connection.execute(
        f"SELECT count(*) FROM session_transcript_cold_archives AS a WHERE {scope}", parameters
    ).fetchone()
    expression = fts_string(terms, prefix=prefix)
    limited = baseline_rows(connection, request, match=expression, limit=limit)
    if limited:
        every = baseline_rows(connection, request, match=expression, limit=None)
        return Baseline(limited, every, limit, None, archived)
    cjk_terms = [term for term in terms if MEMORY_SEARCH_CJK.search(term)]
    if not cjk_terms:
        return Baseline([], [], limit, None, archived)
    word_terms = [term for term in terms if not MEMORY_SEARCH_CJK.search(term)]
    needles = [piece for term in cjk_terms for piece in term.split("\x00") if piece]
    if word_terms:
        retry = fts_string(word_terms, prefix=prefix and not MEMORY_SEARCH_CJK.search(terms[-1]))
        limited = baseline_rows(connection, request, match=retry, needles=needles, limit=limit)
        every = baseline_rows(connection, request, match=retry, needles=needles, limit=None)
        return Baseline(limited, every, limit, None, archived)
    limited = baseline_rows(connection, request, match=None, needles=needles, limit=limit)
    every = baseline_rows(connection, request, match=None, needles=needles, limit=None)
    return Baseline(limited, every, limit, tuple(needles), archived)


# ---- the comparison ------------------------------------------------------------------


def _close(first: float, second: float) -> bool:
    return math.isclose(first, second, rel_tol=SCORE_RELATIVE_TOLERANCE, abs_tol=0.0)


def sort_key_equal(row: BaselineRow, rank: float, timestamp: float, message_id: str, order: str) -> bool:
    if order == "recent":
        return row.timestamp == timestamp
    return _close(row.rank, rank) and row.timestamp == timestamp and row.message_id == message_id


def differences(baseline: Baseline | str, result: SearchResult | str, request: SearchRequest) -> list[str]:
    """Every way the reference's answer is not a valid top-`limit` of the baseline."""
    if isinstance(baseline, str) or isinstance(result, str):
        return [] if baseline == result else [f"outcome: upstream {baseline!r} vs reference {result!r}"]
    problems = []
    truncated = len(baseline.limited) > baseline.limit
    if result.truncated != truncated:
        problems.append(f"truncated: upstream {truncated} vs reference {result.truncated}")
    if result.indexing:
        problems.append("indexing: the reference reports work left after reconcile")
    if result.archived_transcripts_excluded != baseline.archived:
        problems.append(f"archivedTranscriptsExcluded: upstream {baseline.archived} "
                        f"vs reference {result.archived_transcripts_excluded}")
    expected_count = min(len(baseline.limited), baseline.limit)
    if len(result.hits) != expected_count:
        problems.append(f"hit count: upstream {expected_count} vs reference {len(result.hits)}")
    rows = {(row.session_id, row.message_id): row for row in baseline.every}
    seen: set[tuple[str, str]] = set()
    for position, hit in enumerate(result.hits[:expected_count]):
        identity = (hit.session_id, hit.message_id)
        row = rows.get(identity)
        if row is None:
            problems.append(f"hit {position} {identity} is not a baseline row")
            continue
        if identity in seen:
            problems.append(f"hit {position} {identity} appears twice")
        seen.add(identity)
        if not sort_key_equal(baseline.limited[position], -hit.score, hit.timestamp, hit.message_id,
                              request.order):
            problems.append(f"hit {position} {identity}: sort key differs from baseline row "
                            f"{baseline.limited[position]}")
        if baseline.substring_needles is not None:
            snippet = bounded_snippet(substring_excerpt(row.snippet, baseline.substring_needles))
        else:
            snippet = bounded_snippet(row.snippet)
        expected = (row.session_key, row.role, row.timestamp, snippet)
        actual = (hit.session_key, hit.role, hit.timestamp, hit.snippet)
        if expected != actual:
            problems.append(f"hit {position} {identity}: upstream {expected!r} vs reference {actual!r}")
        expected_score = -row.rank if row.rank else 0.0
        if not _close(expected_score, hit.score) and not (expected_score == hit.score == 0.0):
            problems.append(f"hit {position} {identity} score: upstream {expected_score!r} vs {hit.score!r}")
    return problems


def reference_answer(reference: ReferenceBackend, request: SearchRequest) -> SearchResult | str:
    try:
        return reference.search(request)
    except QueryError as error:
        return str(error)


def check_against_upstream(
    corpus: Corpus, request_list: Sequence[SearchRequest], tally: Counter[str]
) -> None:
    """Load into the reference, reconcile, rebuild the upstream table, compare every request."""
    reference = ReferenceBackend.create_in(MemoryDirectory())
    try:
        load_corpus(reference, corpus)
        reference.reconcile()
        connection = upstream_table(reference)
        assert reference.index.document_count == connection.execute(
            "SELECT count(*) FROM session_transcript_fts").fetchone()[0]
        for request in request_list:
            entries = recognised(UPSTREAM_SQL, DivergenceCase(corpus, request, reconciled=True))
            if entries:
                tally.update("divergence:" + entry.id for entry in entries)
                continue
            answer = reference_answer(reference, request)
            problems = differences(upstream_answer(connection, request), answer, request)
            assert problems == [], f"{request!r}:\n" + "\n".join(problems)
            tally_outcome(tally, answer if isinstance(answer, SearchResult) else ("QueryError", answer))
        connection.close()
    finally:
        reference.close()


@st.composite
def upstream_cases(draw: st.DrawFn) -> tuple[Corpus, list[SearchRequest]]:
    corpus = draw(corpora())
    return corpus, draw(st.lists(requests(corpus), min_size=1, max_size=10))


def test_reference_matches_the_upstream_baseline_sql_on_random_corpora() -> None:
    tally: Counter[str] = Counter()

    def run(case: tuple[Corpus, list[SearchRequest]]) -> None:
        check_against_upstream(case[0], case[1], tally)

    for entry in KNOWN_DIVERGENCES:
        if UPSTREAM_SQL in entry.applies_to:
            run = example((entry.reproducer.corpus, [entry.reproducer.request]))(run)
    PARITY_SETTINGS(given(upstream_cases())(run))()
    print("upstream SQL tally:", dict(sorted(tally.items())))
    fired = {name.removeprefix("divergence:") for name in tally if name.startswith("divergence:")}
    expected = {entry.id for entry in KNOWN_DIVERGENCES if UPSTREAM_SQL in entry.applies_to}
    assert expected - fired == set(), "known divergences that never fired (stale entries)"
    assert [kind for kind in REQUIRED_COVERAGE if tally[kind] == 0] == [], dict(tally)


def test_every_upstream_known_divergence_still_reproduces() -> None:
    for entry in KNOWN_DIVERGENCES:
        if UPSTREAM_SQL not in entry.applies_to:
            continue
        case = entry.reproducer
        reference = ReferenceBackend.create_in(MemoryDirectory())
        load_corpus(reference, case.corpus)
        reference.reconcile()
        connection = upstream_table(reference)
        found = differences(upstream_answer(connection, case.request),
                            reference_answer(reference, case.request), case.request)
        reference.close()
        assert found != [], f"known divergence {entry.id!r} no longer reproduces: remove it"


# ---- the pieces written here, pinned --------------------------------------------------


def test_fts_string_and_terms_follow_the_policy_text() -> None:
    assert query_terms_of("  per-session\u3000communi \ufeff") == ["per-session", "communi"]
    assert query_terms_of(" \u3000 ") == []
    assert fts_string(["literal", '"OR"', "key"], prefix=True) == '"literal" AND """OR""" AND "key"*'
    assert (clamped_limit(None), clamped_limit(0), clamped_limit(30)) == (10, 1, 25)
    assert bounded_snippet("é" * 501) == "é" * 500 + "…"
    assert bounded_snippet("a" + "𐐀" * 250) == "a" + "𐐀" * 249 + "…"
    assert as_utf8_column("a\ud800b") == "a\ufffdb"


def message(message_id: str, parent: str | None, role: str, text: str, timestamp: Any) -> dict:
    return {"type": "message", "id": message_id, "parentId": parent, "timestamp": timestamp,
            "message": {"role": role, "content": text}}


def test_upstream_examples_of_the_spec() -> None:
    """§12.2 / §12.3 documents: literal phrases, AND, final prefix, accents, final sigma,
    corpus-wide bm25, ties across windows, the CJK retry and an archived window."""
    corpus = corpus_of([
        [PutWindow(SessionWindow("a", "agent:work_team:main")),
         AppendEvent("a", message("complete", None, "user", "Per-session communication controls in UI", 10), 1.0),
         AppendEvent("a", message("missing-word", "complete", "assistant", "Session communication controls in UI", 10), 2.0),
         AppendEvent("a", message("literal", "missing-word", "user", 'A literal "OR" keyword in the message', 9), 3.0),
         AppendEvent("a", message("greek", "literal", "assistant", "ΟΣ ος Café", 9), 4.0)],
        [PutWindow(SessionWindow("b", "agent:workxteam:main")),
         AppendEvent("b", message("complete", None, "user", "Per-session communication controls in UI", 10), 5.0),
         AppendEvent("b", message("cjk", "complete", "user", "明天下午三点开项目评审会议讨论排期", 11), 6.0)],
        [PutWindow(SessionWindow("c", "global", archived=True)),
         AppendEvent("c", message("m1", None, "user", "communication archived", 12), 7.0)],
    ])
    request_list = [
        SearchRequest("per session communi", session_keys=()),
        SearchRequest("per session communi", session_keys=(), match="prefix"),
        SearchRequest('literal "OR" key', session_keys=(), match="prefix"),
        SearchRequest("literal OR missing", session_keys=(), match="prefix"),
        SearchRequest('"', session_keys=(), match="prefix"),
        SearchRequest("CAFE οσ", agent_id="work_team"),
        SearchRequest("communication", session_keys=(), limit=1),
        SearchRequest("communication", agent_id="work_team", order="recent"),
        SearchRequest("会议", session_keys=()),
        SearchRequest("会议 per", session_keys=(), match="prefix"),
    ]
    check_against_upstream(corpus, request_list, Counter())
    reference = ReferenceBackend.create_in(MemoryDirectory())
    load_corpus(reference, corpus)
    tie = reference.search(SearchRequest("communication", session_keys=(), limit=1))
    assert (len(tie.hits), tie.truncated, tie.archived_transcripts_excluded) == (1, True, 1)
    assert [hit.message_id for hit in reference.search(SearchRequest("会议", session_keys=())).hits] == ["cjk"]
    reference.close()


@pytest.mark.parametrize("text", ["saffron " + "𐐀" * 400, "before " * 60 + "saffron " + "after " * 60])
def test_long_excerpts_are_bounded_like_upstream(text: str) -> None:
    corpus = corpus_of([[PutWindow(SessionWindow("w", "agent:main:main")),
                         AppendEvent("w", message("m1", None, "user", text, 1), 1.0)]])
    check_against_upstream(corpus, [SearchRequest("saffron", agent_id="main")], Counter())


def test_the_comparison_catches_wrong_order_missing_rows_and_changed_excerpts() -> None:
    """The tie-aware comparison accepts either order of a tie and nothing else."""
    from engine.model import SearchHit

    rows = [BaselineRow("global", "a", "m1", "user", 5.0, "saffron one", -2.0),
            BaselineRow("global", "b", "m1", "user", 5.0, "saffron two", -1.0),
            BaselineRow("global", "c", "m1", "user", 5.0, "saffron tie", -1.0)]
    baseline = Baseline(rows[:2], rows, 1, None, 0)
    request = SearchRequest("saffron", session_keys=(), limit=1)

    def hit(row: BaselineRow, snippet: str | None = None) -> SearchHit:
        return SearchHit(row.session_key, row.session_id, row.message_id, row.role, row.timestamp,
                         row.snippet if snippet is None else snippet, -row.rank)

    assert differences(baseline, SearchResult((hit(rows[0]),), truncated=True), request) == []
    assert differences(baseline, SearchResult((hit(rows[1]),), truncated=True), request) != []
    assert differences(baseline, SearchResult((hit(rows[0], "saffron"),), truncated=True), request) != []
    assert differences(baseline, SearchResult((hit(rows[0]),), truncated=False), request) != []
    tie = Baseline(rows[1:], rows[1:], 2, None, 0)
    both = SearchRequest("saffron", session_keys=(), limit=2)
    assert differences(tie, SearchResult((hit(rows[2]), hit(rows[1]))), both) == []
    assert differences(tie, SearchResult((hit(rows[2]), hit(rows[2]))), both) != []
    assert differences(tie, SearchResult((hit(rows[1]),)), both) != []
