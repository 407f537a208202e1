"""The PostgreSQL backend: one partition per agent, each a schema of a PostgreSQL database.

Designed from the seed, not from upstream: OpenClaw has no PostgreSQL code (its newest npm
release, 2026.9.6, has none); the seed says "PostgreSQL search uses the simple text
configuration with unaccent, retaining literal word, phrase, and prefix matching. Its
native ranking is engine-local" and "the default-agent PostgreSQL RPC search uses a
planner-selective prefix predicate" (behaviour.md §7.2, §7.4). One concept per module:

* `schema` — the layout of a partition's schema (tables, indexes, the text search
  configuration, the agent namespace function), made and upgraded by numbered migrations;
* `connection` — the partition's file in its folder (`postgres.json`: server and schema),
  which connection string opens it, connecting;
* `pool` — the connection pools of long-running readers (`serve`): one per server,
  shared by the read-only partitions on it, replacing connections that died;
* `writes` — the write path: one transaction's rows, and the rebuild of a window;
* `search` — the search statement and its parameters;
* `backend` — `PostgresBackend`, which puts them together behind the backend protocol.

Nothing outside `engine.backends` imports them but the registry, which names the class.

**Decisions, each checked on this machine's PostgreSQL 15.20** (UTF8, C.UTF-8; the
measurements are in ../shared/spec/postgres/fts-facts.md and re-run by
`tests/backends/test_postgres_facts.py`):

1. *unaccent as a dictionary, not as a function.* `unaccent()` is STABLE, so
   `to_tsvector('simple', unaccent(x))` cannot be indexed as it is. The two ways out: an
   IMMUTABLE wrapper around the whole text, or a text search configuration copied from
   `simple` that sends every mapped token type through the `unaccent` dictionary and then
   `simple` (`to_tsvector(regconfig, text)` is IMMUTABLE). We take the configuration:
   whole-text unaccent runs before the parser and changes what it sees: `«` becomes
   `<<`, so `«Bonjour» dit-il, «ça va?»` loses `bonjour`, `ca` and `va` (the quotes read as
   an XML tag and are dropped), and every French or Russian quotation in a transcript
   would be unsearchable; `½` becomes the lexeme `1/2` and `‐` (U+2010) a hyphen that
   makes `co‐op` a compound. Per token, the parser reads the text as written (so token
   offsets are the text's own, and `ts_headline` would highlight `Café`), and only the
   letters of each token are unaccented. No function has to lie about its volatility. The
   reference's `pg` profile models it as `unaccent="dictionary"`
   (`engine.analysis.profiles.POSTGRES_PROFILE`), checked code point for code point by
   `tests/parity/test_pg_dictionary_profile.py`.
2. *The query is compiled by the engine* (`engine.query.pg_tsquery`, whose docstring lists
   the three traps of PostgreSQL's own query functions) and sent as a `tsquery` literal.
3. *The agent namespace is a literal range*: `LIKE 'agent:work_team:%'` also matches
   `agent:workxteam:` and, under the database's default collation, neither `LIKE` nor `^@`
   uses a btree. Keys are `COLLATE "C"`, and the namespace is the half-open range
   `[ 'agent:<id>:', 'agent:<id>;' )` inside the SQL function `agent_namespace`, which the
   planner inlines (`schema`).
4. *Ranking: `ts_rank(vector, query, 1)`.* `ts_rank` reads only the row's vector and the
   query's distinct operands, a closed formula the reference reproduces to the bit in
   float4 (`engine.score.ts_rank`); `ts_rank_cd` needs the covers of the query, phrases
   included, which is more of PostgreSQL to re-implement for no better order. Normalization
   1 (divide by log2(1 + the row's positions)) gives back what bm25's length
   normalization gives: of two messages that match alike, the shorter ranks first, instead
   of a long log that mentions the word once ranking with a short answer about it. Neither
   reads corpus statistics, so scores are the same on one server or many (no IDF), and
   merged answers across agents compare like for like. Ties are broken as the kernel
   breaks them: timestamp descending, message id, session id (bytes), row id.
5. *Excerpts* are the engine's (FTS5's snippet window over the `pg` tokens of the row,
   `engine.search.postgres_mode.postgres_excerpt`), not `ts_headline`: they compare across
   backends, and `ts_headline` re-parses every returned row on the server anyway.
6. *A stored tsvector column* (not an expression index): GIN keeps no positions, so every
   phrase candidate is rechecked on the heap, which then reads the stored vector rather than
   parsing the text again. It is made of the text's first 150,000 characters: a tsvector
   holds at most 1,048,575 bytes, and a longer text could need more, which PostgreSQL
   refuses with the whole transaction (an import would fail on one long paste); the
   reference predicts the bound (`engine.search.postgres_mode.INDEXED_CHARACTERS`).

**A store folder** holds, per agent, `agents/<agentId>/postgres.json` naming the server
(without password) and the schema; the server is given at creation with `--dsn` (or
`dsn=`) or `SESSION_SEARCH_PG_DSN` (`connection` says which string opens an existing
partition). Several stores share one database, one schema per agent partition.

**On Citus** (one coordinator hiding several servers), the same schema maps onto
schema-based sharding (Citus 12+): `SELECT citus_schema_distribute('<schema>')` for each
partition's schema makes it a colocation group on one node, so every statement of a
partition (its writes, its search, the reconcile) is routed to that node whole, exactly as
the per-agent partition is routed here. What must exist on every node: the `unaccent` and
`pg_trgm` extensions, and the text search configuration (created inside the schema, which
Citus ≥ 11 propagates with it). A search across agents is the same fan-out and merge the
store does (`engine.store.fan_out`); `ts_rank` has no corpus statistics, so the merged
scores are those of one node. docs/scaling.md tells the whole path.
"""
