"""The measured facts the postgres backend's design rests on, re-measured on the server
(../shared/spec/postgres/fts-facts.md; the decisions are in `engine.backends.postgres`).

If one of these stops holding (another PostgreSQL version, another extension), the
design decision that rests on it must be looked at again; each test names its decision.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import psycopg
import pytest

pytestmark = pytest.mark.postgres


@pytest.fixture
def scratch(pg_connection: psycopg.Connection) -> Iterator[psycopg.Connection]:
    """The shared connection with a schema of this test's own first on the search path."""
    schema = f"t{secrets.token_hex(4)}_facts"
    pg_connection.execute("CREATE EXTENSION IF NOT EXISTS unaccent")
    pg_connection.execute(f'CREATE SCHEMA "{schema}"')
    pg_connection.execute(f'SET search_path = "{schema}", public')
    try:
        yield pg_connection
    finally:
        pg_connection.execute("RESET search_path")
        pg_connection.execute(f'DROP SCHEMA "{schema}" CASCADE')


def make_configuration(connection: psycopg.Connection) -> None:
    connection.execute("CREATE TEXT SEARCH CONFIGURATION simple_unaccent (COPY = simple)")
    connection.execute(
        "ALTER TEXT SEARCH CONFIGURATION simple_unaccent ALTER MAPPING FOR asciiword, word, "
        "numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart, "
        "email, url, host, sfloat, version, url_path, file, float, int, uint "
        "WITH unaccent, simple")


def test_unaccent_is_stable_so_its_expression_cannot_be_indexed(scratch) -> None:
    """Decision 1: no index on `to_tsvector('simple', unaccent(x))` as it is."""
    volatility = {row[0] for row in scratch.execute(
        "SELECT provolatile FROM pg_proc WHERE proname = 'unaccent'")}
    assert volatility == {"s"}
    scratch.execute("CREATE TABLE t0 (x text)")
    refused = pytest.raises(psycopg.errors.InvalidObjectDefinition,
                            match="functions in index expression must be marked IMMUTABLE")
    with refused, scratch.transaction():
        scratch.execute("CREATE INDEX ON t0 USING gin (to_tsvector('simple', unaccent(x)))")


def test_a_configuration_is_immutable_and_keeps_quoted_words(scratch) -> None:
    """Decision 1: `to_tsvector(regconfig, text)` is IMMUTABLE; whole-text unaccent turns
    `«` into `<<` and the quoted words are read as a tag and lost; per token they stay."""
    make_configuration(scratch)
    volatility = scratch.execute("SELECT provolatile FROM pg_proc WHERE oid = "
                                 "'to_tsvector(regconfig,text)'::regprocedure").fetchone()[0]
    assert volatility == "i"
    scratch.execute("CREATE TABLE t1 (x text)")
    scratch.execute("CREATE INDEX ON t1 USING gin (to_tsvector('simple_unaccent', x))")
    text = "«Bonjour» dit-il, «ça va?» Café ½"
    whole, per_token = scratch.execute(
        "SELECT to_tsvector('simple', unaccent(%s))::text, "
        "to_tsvector('simple_unaccent', %s)::text", (text, text)).fetchone()
    assert "bonjour" not in whole and "'va'" not in whole and "'1/2'" in whole
    assert per_token == "'bonjour':1 'ca':5 'cafe':7 'dit':3 'dit-il':2 'il':4 'va':6"


def test_postgres_query_functions_differ_from_the_policy(scratch) -> None:
    """Decision 2: the three traps `engine.query.pg_tsquery` avoids."""
    empty_term_dropped, compound_kept, prefix_on_every_part = scratch.execute(
        "SELECT to_tsvector('simple', 'deploy the fix') @@ (phraseto_tsquery('simple', "
        "'deploy') && phraseto_tsquery('simple', '-') && phraseto_tsquery('simple', 'fix')), "
        "to_tsvector('simple', 'per session stuff') @@ phraseto_tsquery('simple', "
        "'per-session'), to_tsquery('simple', '''per-session'':*')::text").fetchone()
    assert empty_term_dropped is True  # the policy: `deploy - fix` matches nothing
    assert compound_kept is False  # the policy: `per-session` finds `per session`
    assert prefix_on_every_part == "'per-session':* <-> 'per':* <-> 'session':*"


def test_like_reads_an_underscore_as_a_wildcard_and_the_range_does_not(scratch) -> None:
    """Decision 3: the agent namespace is a `COLLATE "C"` range, not `LIKE`."""
    scratch.execute('CREATE TABLE keys (k text COLLATE "C")')
    scratch.execute("INSERT INTO keys VALUES ('agent:work_team:a'), ('agent:workxteam:b'), "
                    "('agent:work_team;x'), ('agent:work_team'), ('global')")
    like, ranged = scratch.execute(
        "SELECT count(*) FILTER (WHERE k LIKE 'agent:work_team:%'), count(*) FILTER "
        "(WHERE k >= 'agent:work_team:' AND k < 'agent:work_team;') FROM keys").fetchone()
    assert (like, ranged) == (2, 1)


def test_ts_rank_reads_no_corpus_statistics(scratch) -> None:
    """Decision 4: the same row ranks the same whatever else the table holds."""
    scratch.execute("CREATE TABLE docs (x text)")
    scratch.execute("INSERT INTO docs VALUES ('saffron saffron ballast')")
    alone = scratch.execute("SELECT ts_rank(to_tsvector('simple', x), 'saffron', 1)::float8 "
                            "FROM docs").fetchone()[0]
    scratch.execute("INSERT INTO docs SELECT 'saffron ' || g FROM generate_series(1, 500) g")
    crowded = scratch.execute("SELECT ts_rank(to_tsvector('simple', x), 'saffron', 1)::float8 "
                              "FROM docs WHERE x = 'saffron saffron ballast'").fetchone()[0]
    assert alone == crowded
