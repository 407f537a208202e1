"""The `pg` profile's `dictionary` flavour against the configuration the postgres backend
makes, on the real server: `to_tsvector(cfg, x)` (lexemes and positions) and the parse
it comes from, string by string.

The configuration is made in a schema of this module's own, by the backend's migration
(`engine.backends.postgres.schema`), so what is compared is what the backend indexes with.
Inputs: the §4.3 table and the hand-written cases (as `test_pg_parity.py`), a seeded
punctuation-heavy corpus, hypothesis batches of any scalar values, and the length limits
(measured before unaccent here: the parser's token is the text's own). Zero mismatches.
"""

from __future__ import annotations

import random
import secrets

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.analysis.pg_profile import PgSimpleUnaccentAnalyzer
from engine.backends.postgres.schema import CONFIGURATION, migrate
from tests.parity.test_pg_parity import PIECES, TEXTS, hand_written_inputs

pytestmark = pytest.mark.postgres

ANALYZER = PgSimpleUnaccentAnalyzer("dictionary")


@pytest.fixture(scope="module")
def configuration(pg_dsn: str) -> object:
    """A connection and the backend's configuration in a schema made for this module."""
    import psycopg

    connection = psycopg.connect(pg_dsn, autocommit=True)
    schema = f"t{secrets.token_hex(4)}_profile"
    migrate(connection, schema, "test server", create=True)
    try:
        yield connection, f'"{schema}".{CONFIGURATION}'
    finally:
        connection.execute(f'DROP SCHEMA "{schema}" CASCADE')
        connection.close()


def mismatches(configuration: tuple, texts: list[str]) -> list[str]:
    connection, name = configuration
    rows = connection.execute(
        """SELECT (SELECT coalesce(json_agg(json_build_array(v.lexeme, v.positions)
                                            ORDER BY v.ord), '[]')
                   FROM unnest(to_tsvector(%s::regconfig, t))
                        WITH ORDINALITY AS v(lexeme, positions, weights, ord))
           FROM unnest(%s::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i""",
        (name, texts)).fetchall()
    found = []
    for text, (expected,) in zip(texts, rows, strict=True):
        mine = [[lexeme, positions] for lexeme, positions in ANALYZER.tsvector(text).items()]
        if mine != expected:
            found.append(f"{text!r}: server {expected} mine {mine}")
    return found


def test_hand_written_inputs_agree(configuration: tuple, record_property) -> None:
    texts = hand_written_inputs() + ["«Bonjour» dit-il, «ça va?»", "½ ‐ x‐ray co‐op …end «q»",
                                     "e\u0301cole \u0301abc x\u0301y Ǆemal ﬁﬂ"]
    record_property("strings_compared", len(texts))
    assert mismatches(configuration, texts) == []


def test_seeded_corpus_agrees(configuration: tuple) -> None:
    generator = random.Random(20261201)
    texts = ["".join(generator.choice(PIECES) for _ in range(generator.randint(1, 16)))
             for _ in range(3000)]
    found = []
    for start in range(0, len(texts), 1000):
        found += mismatches(configuration, texts[start:start + 1000])
    assert found == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(TEXTS, min_size=200, max_size=200))
def test_hypothesis_batches_agree(configuration: tuple, batch: list[str]) -> None:
    assert mismatches(configuration, batch) == []


def test_length_limits_are_measured_before_unaccent(configuration: tuple) -> None:
    texts = ["x" * 2046 + " y", "x" * 2047 + " y", "x" * 2048 + " y",
             "é" * 1023 + "a y", "é" * 1024 + " y", "ß" * 1023 + " y", "ß" * 1024 + " y",
             "Œ" * 1024 + " z", "a " * 300, " ".join(f"w{index % 50}" for index in range(17000))]
    assert mismatches(configuration, texts) == []


SWEEP_SQL = """
SELECT c, to_tsvector(%s::regconfig, chr(c))::text,
       to_tsvector(%s::regconfig, 'a' || chr(c) || 'b')::text,
       to_tsvector(%s::regconfig, chr(c) || 'Éb')::text
FROM generate_series(%s::int, %s::int) AS c
WHERE c NOT BETWEEN 55296 AND 57343
ORDER BY c
"""


def vector_text(text: str) -> str:
    """A `PgSimpleUnaccentAnalyzer.tsvector` printed as PostgreSQL prints a tsvector."""
    from engine.analysis.pg_query import quote_operand

    return " ".join(f"{quote_operand(lexeme)}:{','.join(str(p) for p in positions)}"
                    for lexeme, positions in ANALYZER.tsvector(text).items())


@pytest.mark.slow
def test_every_code_point_agrees(configuration: tuple, record_property) -> None:
    """Each scalar value alone, inside a word and starting one (with an accented letter
    after it), through the whole configuration."""
    connection, name = configuration
    mismatched: list[str] = []
    compared = 0
    for first in range(0, 0x110000, 0x10000):
        rows = connection.execute(SWEEP_SQL, (name, name, name, max(first, 1),
                                              first + 0xFFFF)).fetchall()
        for code_point, alone, inside, starting in rows:
            character = chr(code_point)
            compared += 1
            mine = (vector_text(character), vector_text("a" + character + "b"),
                    vector_text(character + "Éb"))
            if mine != (alone, inside, starting):
                mismatched.append(f"U+{code_point:04X}: server {(alone, inside, starting)} "
                                  f"mine {mine}")
    record_property("code_points_compared", compared)
    assert compared == 0x110000 - 1 - 0x800
    assert mismatched[:20] == []
