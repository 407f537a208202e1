"""Shared test fixtures: the PostgreSQL server the `postgres`-marked tests talk to.

Owns: finding the server named by `SESSION_SEARCH_PG_DSN` and handing out a connection.
Must not touch: any schema or data (each test module creates and drops what it uses).

Rule: when the variable is unset, or the server does not answer, a PostgreSQL test is
skipped with a reason saying how to run it; with `CI=true` the same situation fails the
test instead, so continuous integration can never pass by skipping the server.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

PG_DSN_VARIABLE = "SESSION_SEARCH_PG_DSN"
PG_SKIP_REASON = f"set {PG_DSN_VARIABLE}=postgresql://... to run PostgreSQL tests"


def _running_in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


def _skip_or_fail(reason: str) -> None:
    """Skip locally, fail in CI: a missing server must never make CI green."""
    if _running_in_ci():
        pytest.fail(f"CI=true but PostgreSQL is unavailable: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    """The connection string of the test server; skips (or fails in CI) when unusable."""
    dsn = os.environ.get(PG_DSN_VARIABLE, "").strip()
    if not dsn:
        _skip_or_fail(PG_SKIP_REASON)
    try:
        import psycopg
    except ImportError:
        _skip_or_fail("psycopg is not installed (pip install -e '.[dev]')")
    try:
        with psycopg.connect(dsn, connect_timeout=5) as connection:
            connection.execute("SELECT 1")
    except psycopg.Error as error:
        _skip_or_fail(f"PostgreSQL at {PG_DSN_VARIABLE} does not answer: {error}")
    return dsn


@pytest.fixture(scope="session")
def pg_connection(pg_dsn: str) -> Iterator[object]:
    """One autocommit `psycopg.Connection` shared by the whole test session."""
    import psycopg

    connection = psycopg.connect(pg_dsn, autocommit=True)
    try:
        yield connection
    finally:
        connection.close()
