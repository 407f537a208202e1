"""Differential tests: the `pg` profile against a real PostgreSQL 15 server.

Compares, string by string, `ts_parse('default', x)` with `pg_parser.parse(x)`,
`ts_parse('default', unaccent(x))` with `PgSimpleUnaccentAnalyzer.parse(x)`, and
`to_tsvector('simple', unaccent(x))` with `PgSimpleUnaccentAnalyzer.tsvector(x)` (lexemes in
order and positions), plus the query functions and `@@` against `pg_query`. Inputs: the
§4.3 table and every hand-written case of tests/analysis/test_pg_profile.py, a seeded
punctuation-heavy corpus, and hypothesis-generated batches (many strings per statement).

Pinned backend: PostgreSQL 15 (measured 15.20) in a UTF8 database with LC_CTYPE C.UTF-8; any
other server makes these tests skip with the reason. Each test records how many strings it
compared (`record_property`), and asserts zero mismatches.
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.analysis import pg_query
from engine.analysis.pg_parser import parse
from engine.analysis.pg_profile import PgSimpleUnaccentAnalyzer
from engine.errors import InputError
from tests.ci_policy import skip_or_fail

pytestmark = pytest.mark.postgres

ANALYZER = PgSimpleUnaccentAnalyzer()
PINNED_MAJOR = "15."
PINNED_CTYPE = "C.UTF-8"

PIECES = list("aZx09-_.@:/~&#;<>!?'\"\\=+eE%, \t\n") + [
    "http://", "https://", "ftp://", "www.", ".com", ":8080", "<script>", "</script>",
    "<style>", "</style>", "<b>", "</b>", "<a href='x'>", "<!--", "-->", "<?xml", "<!DOCTYPE",
    "&amp;", "&#169;", "&#x1F;", "..", "../", "./", "~/", "/usr/bin", "x@y.z", "a.b@c.de",
    "1.2.3", "-3.5e10", "1,000", "2023-01-15", "v1.2", "co-op", "x-1", "--", "e5",
    "é", "É", "ß", "ẞ", "中文", "ひら", "한", "\u0301", "\u094d", "हि", "ภา", "١٢", "\u00a0",
    "\u200b", "\u200d", "\u00ad", "😀", "🤯", "ǅ", "İ", "Ⅻ", "½", "²", "①", "«", "»", "…",
    "‐", "Æ", "ﬁ", "ΣΟΦΟΣ", "σοφός", "©", "Ⱥ", "Ё", "ł", "þ", "\u3000", "\u2028",
]


@pytest.fixture(scope="module")
def server(pg_connection: object) -> object:
    """The pinned server, with `unaccent`; skips with the reason when it is not pinned."""
    version = pg_connection.execute("SHOW server_version").fetchone()[0]
    ctype, encoding = pg_connection.execute(
        "SELECT datctype, pg_encoding_to_char(encoding) FROM pg_database "
        "WHERE datname = current_database()"
    ).fetchone()
    if not version.startswith(PINNED_MAJOR) or ctype != PINNED_CTYPE or encoding != "UTF8":
        skip_or_fail(f"pg parity is pinned to PostgreSQL 15 / UTF8 / {PINNED_CTYPE}; "
                     f"this server is {version} / {encoding} / {ctype}",
                     "the PostgreSQL parity tests cannot run on this server")
    pg_connection.execute("CREATE EXTENSION IF NOT EXISTS unaccent")
    return pg_connection


def server_parse(server: object, texts: list[str], unaccented: bool) -> list[list[tuple]]:
    argument = "unaccent(t)" if unaccented else "t"
    rows = server.execute(
        f"""SELECT (SELECT coalesce(array_agg(array[y.alias, p.token] ORDER BY p.ord), '{{}}')
                    FROM ts_parse('default', {argument}) WITH ORDINALITY AS p(tokid, token, ord)
                    JOIN ts_token_type('default') AS y ON y.tokid = p.tokid)
            FROM unnest(%s::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i""",
        (texts,),
    ).fetchall()
    return [[tuple(pair) for pair in row[0]] for row in rows]


def server_tsvectors(server: object, texts: list[str]) -> list[list[tuple[str, list[int]]]]:
    rows = server.execute(
        """SELECT (SELECT coalesce(json_agg(json_build_array(v.lexeme, v.positions)
                                            ORDER BY v.ord), '[]')
                   FROM unnest(to_tsvector('simple', unaccent(t)))
                        WITH ORDINALITY AS v(lexeme, positions, weights, ord))
           FROM unnest(%s::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i""",
        (texts,),
    ).fetchall()
    return [[(lexeme, positions) for lexeme, positions in row[0]] for row in rows]


def mismatches(server: object, texts: list[str]) -> list[str]:
    """Every disagreement (parser, parser after unaccent, tsvector) for a batch of texts."""
    found: list[str] = []
    raw = server_parse(server, texts, unaccented=False)
    unaccented = server_parse(server, texts, unaccented=True)
    vectors = server_tsvectors(server, texts)
    for text, expected_raw, expected_plain, expected_vector in zip(
        texts, raw, unaccented, vectors, strict=True
    ):
        if parse(text) != expected_raw:
            found.append(f"ts_parse {text!r}: server {expected_raw} mine {parse(text)}")
        if ANALYZER.parse(text) != expected_plain:
            found.append(f"ts_parse(unaccent) {text!r}: server {expected_plain}")
        mine = list(ANALYZER.tsvector(text).items())
        if mine != expected_vector:
            found.append(f"to_tsvector {text!r}: server {expected_vector} mine {mine}")
    return found


def hand_written_inputs() -> list[str]:
    path = Path(__file__).resolve().parents[1] / "analysis" / "test_pg_profile.py"
    spec = importlib.util.spec_from_file_location("pg_profile_hand_cases", path)
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    extra = [
        "don't O’Neil", "2023-01-15", "1,000,000 1.000.000,50", "-1.2.3 +5 a-1b-c 1-2-3",
        "x--y <a href='q\\'r'>t</a> -1.2.3 +5 <!-- c --> &#x1F; ..  ~/a",
        "<style>p { x }</style>y", "½ ‐ x‐ray co‐op …end «quote»", "Æsir ﬁle ŒUVRE",
        "Straße café\u0301 ½x", "İstanbul ΣΟΦΟΣ Straße", "ς σ", "é z a Z 1 -1", "中 ÿ ā",
        "<b>a</b> &amp; http://a.b/c?d=1, x-y-z 3.5e2 <i>ok</i> Łódź",
        "The quick brown fox, superman", "a١b हिन्दी ภาษาไทย",
        "foo@bar a@b.c x.y@z.com 1@2.com http://a.b/c@d.e", "<?xml v?> <!DOCTYPE html>",
    ]
    return [text for text, _ in cases.PARSER_TABLE] + extra


def test_server_is_the_pinned_postgresql(server: object, record_property) -> None:
    version = server.execute("SHOW server_version").fetchone()[0]
    record_property("postgresql_version", version)
    assert version.startswith(PINNED_MAJOR)


def test_hand_written_inputs_agree(server: object, record_property) -> None:
    texts = hand_written_inputs()
    found = mismatches(server, texts)
    record_property("strings_compared", len(texts))
    assert found == []


def test_seeded_corpus_agrees(server: object, record_property) -> None:
    generator = random.Random(20261130)
    texts = [
        "".join(generator.choice(PIECES) for _ in range(generator.randint(1, 16)))
        for _ in range(3000)
    ]
    found: list[str] = []
    for start in range(0, len(texts), 1000):
        found += mismatches(server, texts[start:start + 1000])
    record_property("strings_compared", len(texts))
    assert found == []


ANY_SCALAR = st.characters(
    min_codepoint=1, max_codepoint=0x10FFFF, blacklist_categories=("Cs",)
)
TEXTS = st.lists(
    st.one_of(st.sampled_from(PIECES), ANY_SCALAR, st.text(ANY_SCALAR, max_size=3)),
    min_size=1, max_size=14,
).map("".join)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(TEXTS, min_size=200, max_size=200))
def test_hypothesis_batches_agree(server: object, batch: list[str]) -> None:
    assert mismatches(server, batch) == []


def test_position_and_length_limits_agree(server: object) -> None:
    texts = [
        "a " * 300,
        " ".join(f"w{index % 50}" for index in range(17000)) + " z z",
        "x" * 2046 + " y", "x" * 2047 + " y", "x" * 2048 + " y",
        "é" * 1023 + "a y", "é" * 1024 + " y", "ß" * 1023 + " y", "ß" * 1024 + " y",
        "\u023a" * 1023,
    ]
    assert mismatches(server, texts) == []


def test_tsvector_size_error_agrees(server: object) -> None:
    # Odd-length lexemes exercise the 2-byte alignment in PostgreSQL's size sum.
    text = " ".join("x" * 1994 + f"{index:07d}" for index in range(525))
    with pytest.raises(InputError) as mine:
        ANALYZER.tsvector(text)
    import psycopg

    with pytest.raises(psycopg.errors.ProgramLimitExceeded) as theirs:
        server.execute("SELECT to_tsvector('simple', unaccent(%s))", (text,))
    assert str(mine.value) == theirs.value.diag.message_primary


def test_queries_and_match_sets_agree(server: object, record_property) -> None:
    words = ["a", "b", "ab", "abc", "café", "Cafe", "x-y", "it's", "1.2", "www.a.com", "é",
             "ß", "ss", "z", "super", "superman", "<b>", "-"]
    generator = random.Random(7)
    documents, queries = [], []
    for _ in range(2000):
        document_size, query_size = generator.randint(0, 8), generator.randint(1, 3)
        documents.append(" ".join(generator.choice(words) for _ in range(document_size)))
        queries.append(" ".join(generator.choice(words[:-2]) for _ in range(query_size)))
    rows = server.execute(
        """SELECT phraseto_tsquery('simple', unaccent(q))::text,
                  plainto_tsquery('simple', unaccent(q))::text,
                  to_tsquery('simple', quote_literal(unaccent(q)) || ':*')::text,
                  to_tsvector('simple', unaccent(d)) @@ phraseto_tsquery('simple', unaccent(q)),
                  to_tsvector('simple', unaccent(d)) @@ plainto_tsquery('simple', unaccent(q)),
                  to_tsvector('simple', unaccent(d))
                    @@ to_tsquery('simple', quote_literal(unaccent(q)) || ':*')
           FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS u(d, q, i) ORDER BY i""",
        (documents, queries),
    ).fetchall()
    found = []
    matched = 0
    for document, query, expected in zip(documents, queries, rows, strict=True):
        vector = ANALYZER.tsvector(document)
        phrase = pg_query.phraseto_tsquery(query)
        plain = pg_query.plainto_tsquery(query)
        prefix = pg_query.prefix_tsquery(query)
        mine = (
            pg_query.tsquery_text(phrase), pg_query.tsquery_text(plain),
            pg_query.tsquery_text(prefix), pg_query.matches(vector, phrase),
            pg_query.matches(vector, plain), pg_query.matches(vector, prefix),
        )
        matched += sum(mine[3:])
        if mine != tuple(expected):
            found.append((document, query, expected, mine))
    record_property("query_pairs_compared", len(documents))
    record_property("matches_true", matched)
    assert matched > 500
    assert found == []
