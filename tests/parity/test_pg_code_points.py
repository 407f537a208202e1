"""Per-code-point sweep of the `pg` profile against PostgreSQL 15 (every Unicode scalar value).

For every code point c except U+0000 and the surrogates (which PostgreSQL text cannot hold),
the server and the reference must agree on:

* `ts_parse('default', c)`: is c a word, a number, or a blank on its own;
* `ts_parse('default', c || 'b')`: can c start a word;
* `ts_parse('default', 'a' || c || 'b')`: does c join a word (letters, digits, specials);
* `lower(c)` and `ts_lexize('simple', c)`: per-character lowercasing;
* `unaccent(c)`: the unaccent map.

Token lists are compared as (type id, length) pairs; the reference runs its real parser on
each probe string (no shortcut by class). The server work is batched 65,536 code points per
statement; the whole sweep takes well under two minutes on two cores. Marked `slow`; it
still runs in CI.
"""

from __future__ import annotations

import pytest

from engine.analysis.pg_parser import DefaultParser
from engine.analysis.pg_profile import lowercase
from engine.analysis.unaccent import unaccent
from tests.ci_policy import skip_or_fail

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

BLOCK = 0x10000
SWEEP_SQL = """
SELECT c,
  (SELECT string_agg(tokid || ':' || length(token), ' ' ORDER BY o)
     FROM ts_parse('default', chr(c)) WITH ORDINALITY AS p(tokid, token, o)),
  (SELECT string_agg(tokid || ':' || length(token), ' ' ORDER BY o)
     FROM ts_parse('default', chr(c) || 'b') WITH ORDINALITY AS p(tokid, token, o)),
  (SELECT string_agg(tokid || ':' || length(token), ' ' ORDER BY o)
     FROM ts_parse('default', 'a' || chr(c) || 'b') WITH ORDINALITY AS p(tokid, token, o)),
  lower(chr(c)),
  ts_lexize('simple', chr(c)),
  unaccent(chr(c))
FROM generate_series(%s::int, %s::int) AS c
WHERE c NOT BETWEEN 55296 AND 57343
ORDER BY c
"""


def signature(text: str) -> str:
    return " ".join(
        f"{token.type_id}:{token.end - token.start}" for token in DefaultParser(text).tokens()
    )


@pytest.fixture(scope="module")
def server(pg_connection: object) -> object:
    version = pg_connection.execute("SHOW server_version").fetchone()[0]
    ctype = pg_connection.execute(
        "SELECT datctype FROM pg_database WHERE datname = current_database()"
    ).fetchone()[0]
    if not version.startswith("15.") or ctype != "C.UTF-8":
        skip_or_fail(f"sweep pinned to PostgreSQL 15 / C.UTF-8; server is {version} / {ctype}",
                     "the PostgreSQL code point sweep cannot run on this server")
    pg_connection.execute("CREATE EXTENSION IF NOT EXISTS unaccent")
    return pg_connection


def test_every_code_point_agrees(server: object, record_property) -> None:
    mismatched: list[str] = []
    compared = 0
    for first in range(0, 0x110000, BLOCK):
        rows = server.execute(SWEEP_SQL, (max(first, 1), first + BLOCK - 1)).fetchall()
        for code_point, alone, starting, joined, lowered, lexized, plain in rows:
            character = chr(code_point)
            compared += 1
            mine = (
                signature(character),
                signature(character + "b"),
                signature("a" + character + "b"),
                lowercase(character),
                [lowercase(character)],
                unaccent(character),
            )
            if mine != (alone, starting, joined, lowered, lexized, plain):
                mismatched.append(f"U+{code_point:04X}: server {(alone, starting, joined)}")
    record_property("code_points_compared", compared)
    assert compared == 0x110000 - 1 - 0x800
    assert mismatched == []
