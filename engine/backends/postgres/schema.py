"""The PostgreSQL layout of one partition: its schema, made and upgraded by numbered
migrations.

Owns: the DDL of a partition's schema (`MIGRATIONS`, applied in order, each once, inside
one transaction with the record that it ran), the text search configuration the rows are
indexed with, the extensions it needs, the SQL function of the agent namespace, and the
checks that a database can hold a partition (`check_database`). Must not touch: how a
connection is opened or where a partition's schema is named (`connection`), what a write
or a search does with the tables (`writes`, `search`).

**One schema per partition.** A store keeps one partition per agent (as OpenClaw keeps one
database per agent); on PostgreSQL each partition is one schema, `<prefix><random hex>`
(`connection.new_schema_name`), named in the partition's folder. Several stores, and every
agent of each, share one database; nothing outside the schema is written but the two
extensions (created once per database, where they are found or in the first schema of
the search path).

**Layout** (schema `S`; every key text column is `COLLATE "C"`, so that comparisons,
ranges and `ORDER BY` are byte order, the order of UTF-8 bytes the other backends use)::

    S.session_search_migrations(version int PK, description text, applied_at timestamptz)
    S.session_search_store(key text PK, value text)     backend, format, partition id,
                                                         generation (commits, moved by each)
    S.session_windows(row_order bigint identity, session_id PK, session_key, previous_session_id,
                      reason, current bool, title, kind, spawned_by, owner_session_key,
                      parent_session_key, incognito bool, archived bool, "group",
                      created_at float8, extra text (JSON))
        index (session_key, row_order); partial index (session_id) WHERE archived
    S.transcript_events(session_id FK ON DELETE CASCADE, seq int, event_json text,
                        created_at float8, event_utf8_bytes int, PK (session_id, seq))
    S.session_transcript_index_state(session_id PK FK ON DELETE CASCADE,
                        last_seq int (the window's newest seq, -1: none),
                        indexed_seq int (NULL: no state yet), leaf_event_id text,
                        needs_rebuild bool, updated_at float8)
        partial index "needs reconcile": WHERE last_seq > (indexed_seq, or -1 when there is
        no state or it is dirty), so `indexing` is one probe; partial index WHERE needs_rebuild
    S.session_transcript_messages(id bigint identity PK (insertion order), session_id FK ON DELETE CASCADE, session_key,
                        message_id, role, timestamp float8, seq int, text text,
                        lexemes tsvector GENERATED ALWAYS AS (to_tsvector(
                            'S.session_search_simple_unaccent', left(text, 150000))) STORED)
        GIN (lexemes); GIN (text gin_trgm_ops) for the CJK retry's LIKE; btree (session_key)
        for the agent range; btree (session_id)
    S.session_search_simple_unaccent   text search configuration: `simple` with `unaccent`
                                       first on every mapped token type
    S.agent_namespace(key text, agent text) -> bool    the literal agent namespace

One row of `session_transcript_messages` per searchable message (behaviour.md §2.3); its
tsvector is a stored generated column, written by the same `INSERT` as the row, so a
message and its index entry are one row in one transaction. It is made of the text's first
150,000 characters (`engine.search.postgres_mode.INDEXED_CHARACTERS`, migration 2): a
tsvector holds at most 1,048,575 bytes, and PostgreSQL refuses the whole write of a row
whose text would need more. A stored column (not an
expression index) because GIN keeps no positions: a phrase query rechecks every candidate
on the heap, which then reads the stored vector instead of parsing the text again.

Archives: a window's `archived` flag (`engine.store.archives`: the rows stay, search
leaves the window out and counts it), read through the partial index.

**The agent namespace** (behaviour.md §7.4): `agent_namespace(k, a)` is the SQL function
`(k >= 'agent:' || a || ':' AND k < 'agent:' || a || ';') OR k IN ('global', 'unknown')`:
a half-open range (`;` follows `:`), literal for `_` and `%` (which `LIKE` would read as
wildcards), under the column's byte order, so the planner inlines it, estimates it from
the histogram and can combine it with the full-text index in a BitmapAnd.

Migrations: `session_search_migrations` records each applied version; `migrate` applies
the missing ones in order, under an advisory lock on the schema's name, so two processes
opening one partition do not both apply one. A partition whose schema holds a version
newer than this build knows is refused (`UnsupportedVersion`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import psycopg
from psycopg import sql

from engine.errors import StoreError, UnsupportedVersion
from engine.search.postgres_mode import INDEXED_CHARACTERS

BACKEND_NAME = "postgres"
#: The layout version this build writes (the newest migration).
FORMAT_VERSION = 2
#: The text search configuration's name inside a partition's schema.
CONFIGURATION = "session_search_simple_unaccent"
#: The token types `simple` maps (every type but blank, tag, protocol and entity).
MAPPED_TOKEN_TYPES = (
    "asciiword", "word", "numword", "asciihword", "hword", "numhword", "hword_asciipart",
    "hword_part", "hword_numpart", "email", "url", "host", "sfloat", "version", "url_path",
    "file", "float", "int", "uint",
)
#: The extensions a partition needs: `unaccent` (its dictionary) and `pg_trgm` (the
#: trigram index of the CJK retry).
EXTENSIONS = ("unaccent", "pg_trgm")


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered step of the layout: what it does, and its statements for a schema
    (`statements(schema, extension_schemas)`)."""

    version: int
    description: str
    statements: Callable[[str, dict[str, str]], list[sql.Composable]]


def _schema_v1(schema: str, extensions: dict[str, str]) -> list[sql.Composable]:
    """The first layout (see the module docstring)."""
    s = sql.Identifier(schema)
    unaccent = sql.Identifier(extensions["unaccent"], "unaccent")
    trigram_ops = sql.Identifier(extensions["pg_trgm"], "gin_trgm_ops")
    configuration = sql.Identifier(schema, CONFIGURATION)
    regconfig = sql.Literal(f'"{schema}".{CONFIGURATION}')
    types = sql.SQL(", ").join(sql.SQL(name) for name in MAPPED_TOKEN_TYPES)
    statements = [
        "CREATE TABLE {s}.session_search_store (key text PRIMARY KEY, value text NOT NULL)",
        "CREATE TEXT SEARCH CONFIGURATION {configuration} (COPY = pg_catalog.simple)",
        ("ALTER TEXT SEARCH CONFIGURATION {configuration} ALTER MAPPING FOR {types} "
        "WITH {unaccent}, pg_catalog.simple"),
        ("CREATE FUNCTION {s}.agent_namespace(session_key text, agent_id text) RETURNS boolean "
        "LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT ($1 >= 'agent:' || $2 || ':' "
        "AND $1 < 'agent:' || $2 || ';') OR $1 IN ('global', 'unknown') $$"),
        ('CREATE TABLE {s}.session_windows (row_order bigint GENERATED ALWAYS AS IDENTITY, '
        'session_id text COLLATE "C" PRIMARY KEY, session_key text COLLATE "C" NOT NULL, '
        'previous_session_id text COLLATE "C", reason text NOT NULL, current boolean NOT NULL, '
        'title text, kind text NOT NULL, spawned_by text COLLATE "C", '
        'owner_session_key text COLLATE "C", parent_session_key text COLLATE "C", '
        'incognito boolean NOT NULL, archived boolean NOT NULL, "group" text, '
        'created_at double precision, extra text NOT NULL)'),
        "CREATE INDEX session_windows_key ON {s}.session_windows (session_key, row_order)",
        ("CREATE INDEX session_windows_archived ON {s}.session_windows (session_id) "
        "WHERE archived"),
        ('CREATE TABLE {s}.transcript_events (session_id text COLLATE "C" NOT NULL '
        "REFERENCES {s}.session_windows (session_id) ON DELETE CASCADE, seq integer NOT NULL, "
        "event_json text NOT NULL, created_at double precision NOT NULL, "
        "event_utf8_bytes integer NOT NULL, PRIMARY KEY (session_id, seq))"),
        ('CREATE TABLE {s}.session_transcript_index_state (session_id text COLLATE "C" '
        "PRIMARY KEY REFERENCES {s}.session_windows (session_id) ON DELETE CASCADE, "
        "last_seq integer NOT NULL DEFAULT -1, indexed_seq integer, leaf_event_id text, "
        "needs_rebuild boolean NOT NULL DEFAULT false, updated_at double precision)"),
        ("CREATE INDEX session_transcript_needs_reconcile ON "
        "{s}.session_transcript_index_state (session_id) WHERE last_seq > CASE WHEN "
        "indexed_seq IS NULL OR needs_rebuild THEN -1 ELSE indexed_seq END"),
        ("CREATE INDEX session_transcript_dirty ON {s}.session_transcript_index_state "
        "(session_id) WHERE needs_rebuild"),
        ("CREATE TABLE {s}.session_transcript_messages (id bigint GENERATED ALWAYS AS "
        'IDENTITY PRIMARY KEY, '
        'session_id text COLLATE "C" NOT NULL REFERENCES {s}.session_windows (session_id) '
        'ON DELETE CASCADE, session_key text COLLATE "C" NOT NULL, '
        'message_id text COLLATE "C" NOT NULL, role text NOT NULL, '
        "timestamp double precision, seq integer NOT NULL, text text NOT NULL, "
        "lexemes tsvector GENERATED ALWAYS AS (to_tsvector({regconfig}::regconfig, text)) "
        "STORED)"),
        ("CREATE INDEX session_transcript_lexemes ON {s}.session_transcript_messages "
        "USING gin (lexemes)"),
        ("CREATE INDEX session_transcript_trigrams ON {s}.session_transcript_messages "
        "USING gin (text {trigram_ops})"),
        "CREATE INDEX session_transcript_key ON {s}.session_transcript_messages (session_key)",
        ("CREATE INDEX session_transcript_window ON {s}.session_transcript_messages "
        "(session_id, seq)"),
    ]
    names = {"s": s, "configuration": configuration, "unaccent": unaccent,
             "trigram_ops": trigram_ops, "types": types, "regconfig": regconfig}
    return [sql.SQL(statement).format(**names) for statement in statements]


def lexemes_sql(regconfig: str) -> str:
    """The expression of a message row's stored tsvector (the text's first
    `INDEXED_CHARACTERS`, so that no text makes a tsvector PostgreSQL refuses)."""
    return f"to_tsvector({regconfig}::regconfig, left(text, {INDEXED_CHARACTERS}))"


def _schema_v2(schema: str, extensions: dict[str, str]) -> list[sql.Composable]:
    """The tsvector of a row made of its text's first `INDEXED_CHARACTERS` (version 1 made
    it of the whole text, and PostgreSQL refused a text whose tsvector passed 1 MiB)."""
    table = sql.Identifier(schema, "session_transcript_messages")
    regconfig = sql.Literal(f'"{schema}".{CONFIGURATION}').as_string(None)
    return [
        sql.SQL("ALTER TABLE {} DROP COLUMN lexemes").format(table),
        sql.SQL("ALTER TABLE {} ADD COLUMN lexemes tsvector GENERATED ALWAYS AS ({}) STORED"
                ).format(table, sql.SQL(lexemes_sql(regconfig))),
        sql.SQL("CREATE INDEX session_transcript_lexemes ON {} USING gin (lexemes)").format(
            table),
    ]


#: Every migration, oldest first; a partition holds the first `n` of them.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "windows, events, index state, messages with their tsvector, the "
                 "simple+unaccent configuration, the agent namespace function", _schema_v1),
    Migration(2, "the tsvector made of the text's first 150,000 characters", _schema_v2),
)


def check_database(connection: psycopg.Connection, server: str) -> None:
    """Refuse a database that cannot hold a partition: a server older than 13 (generated
    columns and trusted extensions), or an encoding other than UTF8 (the text the engine
    indexes is Unicode; the analysis of `engine.analysis.pg_profile` is UTF-8's)."""
    version = connection.info.server_version
    encoding = connection.execute("SELECT pg_encoding_to_char(encoding) FROM pg_database "
                                  "WHERE datname = current_database()").fetchone()[0]
    if version < 130000:
        raise StoreError(f"{server}: PostgreSQL {version // 10000} is too old for the postgres "
                         "backend (13 or newer; pinned and tested on 15)")
    if encoding != "UTF8":
        raise StoreError(f"{server}: the database's encoding is {encoding}; the postgres "
                         "backend needs a UTF8 database (createdb --encoding UTF8)")


def extension_schemas(connection: psycopg.Connection, server: str) -> dict[str, str]:
    """The schema of each extension of `EXTENSIONS`, creating the missing ones (both are
    trusted extensions: a database owner may create them) under a transaction-wide
    advisory lock, so that two first partitions do not race."""
    connection.execute("SELECT pg_advisory_xact_lock(hashtext('session-search extensions'))")
    found: dict[str, str] = {}
    for name in EXTENSIONS:
        row = connection.execute(
            "SELECT n.nspname FROM pg_extension AS e JOIN pg_namespace AS n "
            "ON n.oid = e.extnamespace WHERE e.extname = %s", (name,)).fetchone()
        if row is None:
            try:
                connection.execute(sql.SQL("CREATE EXTENSION {}").format(sql.Identifier(name)))
            except psycopg.Error as error:
                raise StoreError(f"{server}: the postgres backend needs the extension {name} "
                                 f"and cannot create it: {error.diag.message_primary or error} "
                                 f"(ask the database owner for CREATE EXTENSION {name})"
                                 ) from None
            row = connection.execute(
                "SELECT n.nspname FROM pg_extension AS e JOIN pg_namespace AS n "
                "ON n.oid = e.extnamespace WHERE e.extname = %s", (name,)).fetchone()
        found[name] = row[0]
    return found


def applied_version(connection: psycopg.Connection, schema: str) -> int:
    """The newest migration the schema holds (0 when it has no migration table)."""
    exists = connection.execute(
        "SELECT to_regclass(format('%%I.session_search_migrations', %s::text)) IS NOT NULL",
        (schema,)).fetchone()[0]
    if not exists:
        return 0
    row = connection.execute(sql.SQL("SELECT coalesce(max(version), 0) FROM "
                                     "{}.session_search_migrations").format(
        sql.Identifier(schema))).fetchone()
    return int(row[0])


def migrate(connection: psycopg.Connection, schema: str, server: str, *,
            create: bool = False) -> int:
    """Apply the migrations `schema` lacks, in one transaction (the caller's connection
    must not be in one); with `create`, make the schema first (it must not exist). Return
    the version it holds now. A schema newer than this build is `UnsupportedVersion`."""
    identifier = sql.Identifier(schema)
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (schema,))
        if create:
            connection.execute(sql.SQL("CREATE SCHEMA {}").format(identifier))
            connection.execute(sql.SQL(
                "CREATE TABLE {}.session_search_migrations (version integer PRIMARY KEY, "
                "description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            ).format(identifier))
        version = applied_version(connection, schema)
        if version > FORMAT_VERSION:
            raise UnsupportedVersion(
                f"{server} schema {schema}: layout version {version} is newer than this "
                f"build knows ({FORMAT_VERSION}); upgrade session-search")
        pending = [migration for migration in MIGRATIONS if migration.version > version]
        if pending:
            extensions = extension_schemas(connection, server)
            for migration in pending:
                for statement in migration.statements(schema, extensions):
                    connection.execute(statement)
                connection.execute(sql.SQL(
                    "INSERT INTO {}.session_search_migrations (version, description) "
                    "VALUES (%s, %s)").format(identifier),
                    (migration.version, migration.description))
            version = pending[-1].version
    return version


def schema_exists(connection: psycopg.Connection, schema: str) -> bool:
    """Whether the database has a schema named `schema`."""
    return connection.execute("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = %s)",
                              (schema,)).fetchone()[0]
