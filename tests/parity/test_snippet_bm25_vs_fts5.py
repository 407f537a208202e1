"""Parity of the pure `bm25()`, `snippet()` and phrase matching with the REAL SQLite FTS5.

Each test builds the upstream FTS table in an in-memory database (with its own SQL, not
through any backend), inserts rows, runs MATCH queries made by `fts5_match_expression`, and
compares, row by row:
* the set of matching rows with `plan_query` + `phrase_positions` over `unicode61` terms;
* `bm25()` with `score.bm25` fed by whole-table counts (relative 1e-9; in practice equal);
* `snippet(t, 0, '', '', ' … ', 48)` with `results.snippet.fts5_snippet` (exact string).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.analysis.unicode61 import Unicode61Tokenizer
from engine.query.ast import QueryPlan
from engine.query.phrase_match import phrase_positions
from engine.query.user_query import fts5_match_expression, plan_query, split_terms, validate_query
from engine.results.bounds import bound_snippet, utf16_length
from engine.results.snippet import fts5_snippet
from engine.score.bm25 import bm25, inverse_document_frequency

ANALYZER = Unicode61Tokenizer(remove_diacritics=2)

UPSTREAM_FTS_SQL = (
    "CREATE VIRTUAL TABLE session_transcript_fts USING fts5(text, session_id UNINDEXED, "
    "message_id UNINDEXED, role UNINDEXED, timestamp UNINDEXED, "
    "tokenize = 'unicode61 remove_diacritics 2')"
)


def fts_table(texts: Sequence[str]) -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    connection.execute(UPSTREAM_FTS_SQL)
    connection.executemany(
        "INSERT INTO session_transcript_fts (rowid, text, session_id, message_id, role, timestamp) "
        "VALUES (?, ?, 's', ?, 'user', 0)",
        [(index + 1, text, f"m{index + 1}") for index, text in enumerate(texts)],
    )
    return connection


def sqlite_rows(connection: sqlite3.Connection, expression: str) -> dict[int, tuple[float, str]]:
    return {
        rowid: (rank, excerpt)
        for rowid, rank, excerpt in connection.execute(
            "SELECT rowid, bm25(session_transcript_fts), "
            "snippet(session_transcript_fts, 0, '', '', ' … ', 48) "
            "FROM session_transcript_fts WHERE session_transcript_fts MATCH ?",
            (expression,),
        )
    }


def model_rows(texts: Sequence[str], plan: QueryPlan) -> dict[int, tuple[float, str]]:
    """The pure-Python prediction: matching rows, their bm25 and their snippet."""
    tokens = [ANALYZER.tokens(text) for text in texts]
    terms = [[token.text for token in row] for row in tokens]
    positions = [[phrase_positions(row, phrase) for phrase in plan.phrases] for row in terms]
    total_rows = len(texts)
    average = sum(len(row) for row in terms) / total_rows
    idfs = [
        inverse_document_frequency(total_rows, sum(1 for row in positions if row[index]))
        for index in range(len(plan.phrases))
    ]
    predicted = {}
    for index, row_positions in enumerate(positions):
        if not plan.phrases or not all(row_positions):
            continue
        rank = bm25(
            [(idfs[i], len(found)) for i, found in enumerate(row_positions)], len(terms[index]), average
        )
        hits = [
            (phrase_index, start, len(plan.phrases[phrase_index].terms))
            for phrase_index, found in enumerate(row_positions)
            for start in found
        ]
        spans = [(token.start, token.end) for token in tokens[index]]
        predicted[index + 1] = (rank, fts5_snippet(texts[index], spans, hits))
    return predicted


def assert_parity(texts: Sequence[str], query: str, match: str = "exact") -> dict[int, tuple[float, str]]:
    plan = plan_query(query, ANALYZER, match=match)
    expression = fts5_match_expression(split_terms(validate_query(query)), prefix=match == "prefix")
    connection = fts_table(texts)
    try:
        real = sqlite_rows(connection, expression)
    finally:
        connection.close()
    predicted = model_rows(texts, plan)
    assert sorted(predicted) == sorted(real), (query, expression)
    for rowid, (rank, excerpt) in real.items():
        assert math.isclose(predicted[rowid][0], rank, rel_tol=1e-9, abs_tol=0.0), (rowid, query)
        assert predicted[rowid][1] == excerpt, (rowid, query)
    return real


# ---- fixed cases --------------------------------------------------------------------


def test_the_centred_window_example_of_section_5_5() -> None:
    text = "before " * 60 + "saffron " + "after " * 60
    real = assert_parity([text], "saffron")
    assert real[1][1] == " … " + "before " * 23 + "saffron" + " after" * 24 + " … "


def test_saffron_corpus_scores_1_375e_minus_6() -> None:
    texts = ["saffron", "saffron saffron ballast ballast ballast", "background corpus vocabulary"]
    real = assert_parity(texts, "saffron")
    assert round(-real[1][0], 14) == 1.375e-06
    assert -real[1][0] > -real[2][0]


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("alpha " * 30 + "end. " + "middle " * 30 + "lantern " + "tail " * 30, "lantern"),
        ("alpha " * 30 + "end.middle " + "middle " * 30 + "lantern " + "tail " * 30, "lantern"),
        ("alpha " * 30 + "end:\n\t middle " + "middle " * 30 + "lantern " + "tail " * 30, "lantern"),
        ("alpha " * 50 + "lantern. " + "tail " * 60, "lantern"),
        ("x " * 10 + "lantern " + "y " * 100 + ". z " + "w " * 3 + "lantern " + "v " * 5, "lantern"),
        ("one two. lantern three " + "pad " * 60, "lantern"),
        ("intro: " + "pad " * 70 + "lantern pad pad. lantern", "lantern"),
    ],
)
def test_sentence_start_windows(text: str, query: str) -> None:
    assert_parity([text, "filler words only"], query)


@pytest.mark.parametrize(
    "text",
    [
        "(a short lantern line.)",
        "  leading spaces, lantern!!!  ",
        "lantern",
        "— lantern —",
        "a b c d e f g h lantern ... trailing punctuation ?!",
    ],
)
def test_documents_shorter_than_the_window_come_back_whole(text: str) -> None:
    real = assert_parity([text], "lantern")
    assert real[1][1] == text


@pytest.mark.parametrize(
    ("texts", "query", "match"),
    [
        (["alpha beta alpha beta gamma " * 20], "alpha beta", "exact"),
        (["alpha " * 70 + "beta " + "alpha " * 10], "alpha beta", "exact"),
        (["a a a a " * 30], "a a", "exact"),
        (["per session communication " * 25, "periodic sessions"], "per-session communi", "prefix"),
        (["Café naïve coöperate " * 20, "cafe"], "CAFE naive", "exact"),
        (["ΟΣ ος " * 40], "οσ", "exact"),
        (["long " * 100 + "needle " + "long " * 5 + "haystack " + "long " * 100], "needle haystack", "exact"),
    ],
)
def test_multi_phrase_and_repeat_scoring(texts: list[str], query: str, match: str) -> None:
    assert_parity(texts + ["unrelated row"], query, match)


def test_the_astral_bound_case() -> None:
    text = "saffron " + "𐐀" * 400
    real = assert_parity([text], "saffron")
    bounded = bound_snippet(real[1][1])
    assert utf16_length(bounded) <= 501
    assert bounded.endswith("…")
    assert not any(0xD800 <= ord(character) <= 0xDFFF for character in bounded)


# ---- random multilingual rows ---------------------------------------------------------

WORDS = [
    "alpha", "Beta", "gamma", "delta", "alphabet", "per", "session", "sessions", "Café", "cafe",
    "naïve", "ΟΣ", "ος", "Ελλάδα", "Straße", "strasse", "İstanbul", "москва", "会议", "明天下午三点",
    "テスト", "회의", "🤯", "x1", "42", "OR", "NEAR", "and", "e-mail", "end.", "note:", "ǖber",
]
SEPARATORS = [" ", " ", " ", ", ", ". ", ": ", " - ", "\n", "\t", " 😀 ", "...", " (", ") "]

word = st.sampled_from(WORDS)
separator = st.sampled_from(SEPARATORS)


@st.composite
def documents(draw: st.DrawFn) -> str:
    words = draw(st.lists(word, min_size=1, max_size=130))
    pieces = []
    for item in words:
        pieces.append(item)
        pieces.append(draw(separator))
    return "".join(pieces)


@st.composite
def queries(draw: st.DrawFn) -> str:
    terms = draw(st.lists(st.one_of(word, word.map(lambda value: value[: max(1, len(value) // 2)])),
                          min_size=1, max_size=3))
    return " ".join(terms)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(documents(), min_size=1, max_size=6), query=queries(),
       match=st.sampled_from(["exact", "prefix"]))
def test_random_rows_agree_with_sqlite(texts: list[str], query: str, match: str) -> None:
    assert_parity(texts, query, match)
