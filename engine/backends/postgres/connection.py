"""Where a PostgreSQL partition lives and how it is reached: the partition's file, the
server's connection string, and opening a connection.

Owns: `postgres.json` in a partition's folder (the server and the schema the partition
is), choosing the connection string a partition is opened with (`connection_string`),
naming a new partition's schema, connecting (with the engine's error for a server that
does not answer), and the identifiers PostgreSQL text cannot hold (with NUL; a message's
text is stored as `engine.index.documents.postgres_text` says). Must not touch: the layout
inside the schema (`schema`), writes, searches.

**The partition's file.** A store folder on disk refers to its database through one small
JSON file per partition, `agents/<agentId>/postgres.json` (the partition's folder)::

    {"format": 1, "server": "user=app dbname=sessions host=db.example port=5432",
     "schema": "session_search_3f2a9c1d0b7e", "partition": "<uuid4>"}

`server` is the connection string the partition was created with, without its password
(a file in a store folder is no place for a secret); `partition` is also stored in the
schema (`session_search_store`), so a file pointing at another partition's schema, or at a
server where the schema is gone, is refused naming both, never searched as empty.

**Which connection string** (`connection_string`): the one given explicitly (`--dsn`, or
`dsn=` of `engine.store.registry.open_backend`) wins; else `SESSION_SEARCH_PG_DSN` when it
names the same server (host, port, database, user) as the file, since it may carry the
password; else the file's (libpq then finds a password in `PGPASSWORD` or `~/.pgpass`).
A new partition is made on the explicit string or, without one, `SESSION_SEARCH_PG_DSN`.

**Schema names** are `<prefix><12 hex digits>`, the prefix `session_search_` or
`SESSION_SEARCH_PG_SCHEMA_PREFIX` (lower-case letters, digits and `_`), so that a test
run, or a tenant, can find and drop its own schemas.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from engine.directory import FileDirectory
from engine.errors import CorruptFile, InputError, StoreError, UsageError

PARTITION_FILE = "postgres.json"
PARTITION_FILE_FORMAT = 1
DSN_VARIABLE = "SESSION_SEARCH_PG_DSN"
SCHEMA_PREFIX_VARIABLE = "SESSION_SEARCH_PG_SCHEMA_PREFIX"
DEFAULT_SCHEMA_PREFIX = "session_search_"
#: Seconds a connection attempt may take before the server is reported as not answering.
CONNECT_TIMEOUT = 10
#: What identifies a server in a connection string (the rest: options, the password).
SERVER_FIELDS = ("host", "hostaddr", "port", "dbname", "user")
_PREFIX_PATTERN = re.compile(r"[a-z_][a-z0-9_]{0,40}")
#: A schema name this backend makes (and the only kind it reads from a file: the name is
#: written into SQL between double quotes).
SCHEMA_PATTERN = re.compile(r"[a-z_][a-z0-9_]{0,62}")


@dataclass(frozen=True, slots=True)
class PartitionFile:
    """What `postgres.json` says: the server (without password), the schema, the id."""

    server: str
    schema: str
    partition: str


def server_label(dsn: str) -> str:
    """`dsn` without its password, as `key=value` pairs (for the file and messages).

    >>> server_label("postgresql://app:secret@db:5433/sessions")
    'user=app dbname=sessions host=db port=5433'
    """
    try:
        fields = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as error:
        raise UsageError(f"not a PostgreSQL connection string: {error}") from None
    fields.pop("password", None)
    return make_conninfo(**{key: str(value) for key, value in fields.items()})


def _server_identity(dsn: str) -> tuple[str, ...]:
    fields = conninfo_to_dict(dsn)
    return tuple(str(fields.get(name, "")) for name in SERVER_FIELDS)


def environment_dsn() -> str | None:
    """`SESSION_SEARCH_PG_DSN`, or None when unset or blank."""
    value = os.environ.get(DSN_VARIABLE, "").strip()
    return value or None


def creation_dsn(explicit: str | None) -> str:
    """The connection string a new partition is made on (`UsageError` without one)."""
    dsn = explicit or environment_dsn()
    if not dsn:
        raise UsageError(f"the postgres backend needs a server: pass --dsn DSN or set "
                         f"{DSN_VARIABLE}=postgresql://user@host:port/database")
    server_label(dsn)  # a malformed string is refused before anything is made
    return dsn


def connection_string(recorded: str, explicit: str | None) -> str:
    """The string a partition whose file records `recorded` is opened with (the rule is
    in the module docstring)."""
    if explicit:
        return explicit
    from_environment = environment_dsn()
    if from_environment:
        try:
            if _server_identity(from_environment) == _server_identity(recorded):
                return from_environment
        except psycopg.ProgrammingError:
            pass
    return recorded


def new_schema_name() -> str:
    """A fresh schema name (`<prefix><12 hex digits>`; the prefix is checked)."""
    prefix = os.environ.get(SCHEMA_PREFIX_VARIABLE, DEFAULT_SCHEMA_PREFIX)
    if not _PREFIX_PATTERN.fullmatch(prefix):
        raise UsageError(f"{SCHEMA_PREFIX_VARIABLE}={prefix!r}: a schema prefix is lower-case "
                         "letters, digits and _, starting with a letter or _ (at most 41)")
    return prefix + secrets.token_hex(6)


def new_partition_file(dsn: str) -> PartitionFile:
    """The file of a partition about to be made on `dsn`."""
    return PartitionFile(server_label(dsn), new_schema_name(), str(uuid.uuid4()))


def read_partition_file(folder: Path) -> PartitionFile:
    """The partition file in `folder` (`StoreError` when missing, `CorruptFile` when it
    does not hold what it should)."""
    path = folder / PARTITION_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise StoreError(f"{folder}: no postgres partition here ({PARTITION_FILE} is missing)"
                         ) from None
    except OSError as error:
        raise StoreError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        value: Any = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise CorruptFile(str(path), 0, f"not JSON: {error}") from None
    if (not isinstance(value, dict) or value.get("format") != PARTITION_FILE_FORMAT
            or not all(isinstance(value.get(name), str)
                       for name in ("server", "schema", "partition"))
            or not SCHEMA_PATTERN.fullmatch(value["schema"])):
        raise CorruptFile(str(path), 0, f"not a postgres partition file of format "
                                        f"{PARTITION_FILE_FORMAT}")
    return PartitionFile(value["server"], value["schema"], value["partition"])


def write_partition_file(folder: Path, partition: PartitionFile) -> None:
    """Write `postgres.json` into `folder` (made if missing), whole or not at all."""
    folder.mkdir(parents=True, exist_ok=True)
    data = json.dumps({"format": PARTITION_FILE_FORMAT, "server": partition.server,
                       "schema": partition.schema, "partition": partition.partition},
                      indent=1).encode("utf-8") + b"\n"
    FileDirectory(folder).write_atomic(PARTITION_FILE, data)


def connect(dsn: str, *, autocommit: bool) -> psycopg.Connection:
    """A connection to `dsn` (`StoreError` naming the server when it does not answer)."""
    try:
        return psycopg.connect(dsn, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as error:
        raise StoreError(f"PostgreSQL server {server_label(dsn)!r} does not answer: "
                         f"{str(error).strip().splitlines()[0] if str(error).strip() else error}"
                         ) from None


def is_storable(text: str) -> bool:
    """Whether PostgreSQL text can hold `text` as it is (no NUL, no lone surrogate): what
    a stored key or id always is, so a value that is not names nothing stored.

    >>> is_storable("agent:main:x"), is_storable("a\\x00"), is_storable("\\udc80")
    (True, False, False)
    """
    if text.isascii():
        return "\x00" not in text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def check_storable(value: str | None, what: str) -> None:
    """Refuse (`InputError`) an identifier PostgreSQL text cannot hold: one with NUL."""
    if value is not None and "\x00" in value:
        raise InputError(f"{what} {value!r} holds NUL (U+0000), which PostgreSQL text cannot "
                         "store; the postgres backend refuses it")
