"""Shared test fixtures: the PostgreSQL server the `postgres`-marked tests talk to, and a
small real file system that can be filled (`small_disk`).

Owns: finding the server named by `SESSION_SEARCH_PG_DSN` and handing out a connection;
mounting an 8 MiB tmpfs for a test and unmounting it. Must not touch: any schema or data
(each test module creates and drops what it uses).

Rule: when the variable is unset, or the server does not answer, a PostgreSQL test is
skipped with a reason saying how to run it; with `CI=true` the same situation fails the
test instead, so continuous integration can never pass by skipping the server. The
same holds for `small_disk` when a tmpfs cannot be mounted (mounting needs root, or
CAP_SYS_ADMIN). The disk-full tests that need no mount use the directory fault layer
(`tests/durability/faulty_directory.py`) and SQLite's own page limit instead, and run
everywhere.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.ci_policy import running_in_ci, skip_or_fail

PG_DSN_VARIABLE = "SESSION_SEARCH_PG_DSN"
PG_SKIP_REASON = f"set {PG_DSN_VARIABLE}=postgresql://... to run PostgreSQL tests"


def _skip_or_fail(reason: str) -> None:
    """Skip locally, fail in CI: a missing server must never make CI green."""
    skip_or_fail(reason, "PostgreSQL is unavailable")


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


#: The variable naming the prefix of the schemas the postgres backend makes.
PG_SCHEMA_PREFIX_VARIABLE = "SESSION_SEARCH_PG_SCHEMA_PREFIX"


def drop_schemas(connection: object, prefix: str) -> int:
    """Drop every schema whose name starts with `prefix` (a test's own); how many."""
    names = [row[0] for row in connection.execute(
        "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, %s)", (prefix,))]
    for name in names:
        connection.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    return len(names)


@pytest.fixture
def postgres_stores(pg_dsn: str, pg_connection: object,
                    monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Stores of the postgres backend made in this test land on the test server, in
    schemas of a prefix of their own (dropped afterwards); yields the DSN. With it a test
    makes a postgres store as it makes any other (`open_backend(path, backend="postgres",
    create=True)`)."""
    import secrets

    prefix = f"t{secrets.token_hex(4)}_"
    monkeypatch.setenv(PG_DSN_VARIABLE, pg_dsn)
    monkeypatch.setenv(PG_SCHEMA_PREFIX_VARIABLE, prefix)
    try:
        yield pg_dsn
    finally:
        drop_schemas(pg_connection, prefix)


def postgres_configured() -> bool:
    """Whether `SESSION_SEARCH_PG_DSN` names a server (a module-scoped fixture that makes
    a store of every backend leaves the postgres one out without it; the postgres tests
    then skip, or fail under CI, through `pg_dsn`)."""
    return bool(os.environ.get(PG_DSN_VARIABLE, "").strip())


@pytest.fixture(scope="session", autouse=True)
def postgres_session_schemas() -> Iterator[None]:
    """Every postgres store this test session makes outside a test's own prefix (a
    module-scoped fixture's) is made in schemas of the session's prefix, dropped at the
    end of the session."""
    import secrets

    prefix = f"t{secrets.token_hex(4)}s_"
    previous = os.environ.get(PG_SCHEMA_PREFIX_VARIABLE)
    os.environ[PG_SCHEMA_PREFIX_VARIABLE] = prefix
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(PG_SCHEMA_PREFIX_VARIABLE, None)
        else:
            os.environ[PG_SCHEMA_PREFIX_VARIABLE] = previous
        if postgres_configured():
            import contextlib

            import psycopg

            # a server gone by the end of the session drops nothing
            with contextlib.suppress(psycopg.Error), psycopg.connect(
                    os.environ[PG_DSN_VARIABLE], autocommit=True, connect_timeout=5) as connection:
                drop_schemas(connection, prefix)


@pytest.fixture(autouse=True)
def postgres_when_parametrized(request: pytest.FixtureRequest) -> None:
    """A test parametrized with the value "postgres" (a backend name, directly or through
    a fixture's params) gets the server (`postgres_stores`): a suite runs on the postgres
    backend by adding the name to its backends, as the others need nothing."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and "postgres" in callspec.params.values():
        request.getfixturevalue("postgres_stores")


# ----- a small file system ----------------------------------------------------------

#: The size of the tmpfs a `small_disk` test gets.
SMALL_DISK_BYTES = 8 << 20


@dataclass(frozen=True)
class SmallDisk:
    """A tmpfs of `SMALL_DISK_BYTES` mounted at `path`: `fill()` takes its space (all of
    it, or all but `leave` bytes) with one filler file, `free()` gives it back."""

    path: Path

    @property
    def filler(self) -> Path:
        return self.path / "filler"

    def fill(self, leave: int = 0) -> None:
        """Write the filler until the system says the disk is full, then give `leave`
        bytes back (tmpfs counts whole pages)."""
        block = b"\0" * 65536
        with open(self.filler, "ab") as file:
            try:
                while True:
                    file.write(block)
                    file.flush()
            except OSError as error:
                assert error.errno == errno.ENOSPC, error
            file.truncate(max(0, os.fstat(file.fileno()).st_size - leave))

    def free(self) -> None:
        """Remove the filler: the space returns."""
        self.filler.unlink(missing_ok=True)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    """An 8 MiB tmpfs for this test (skipped, or failed under CI, when none can be mounted)."""
    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SMALL_DISK_BYTES}", "tmpfs", str(mount_point)],
        capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        _skip_or_fail_mount(f"cannot mount a tmpfs (needs root): {mounted.stderr.strip()}")
    try:
        yield SmallDisk(mount_point)
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True, check=False)


def _skip_or_fail_mount(reason: str) -> None:
    if running_in_ci():
        pytest.fail(f"CI=true but the full-disk tests cannot run: {reason}", pytrace=False)
    pytest.skip(reason)
