"""The parts of the specification a conformance case may pin, each with a short title.

Owns: `SPEC_UNITS`, the list every case's `spec` field names from: every numbered rule
of behaviour.md §3 to §11 (a subsection, or a numbered step inside one), §2's data rules,
every upstream test case of §12 (numbered in the order §12 lists them), and every
paragraph of the seed document (`seed ¶1` ...). Must not touch: cases or files; the
coverage table (`engine.conformance.coverage`) and the case loader read this list.

Unit ids: `§5.3` is behaviour.md section 5.3; `§3.4.7` step 7 of §3.4's algorithm;
`§12.2.6` the sixth test §12.2 lists; `seed ¶17` the seventeenth paragraph of
`seed-session-search.txt` (paragraphs counted as `docs/conformance.md` lists them, by
their opening words). A case names every unit it pins; a unit no case names fails
`tests/conformance/test_coverage.py`.
"""

from __future__ import annotations

#: (unit id, what it says), in specification order.
SPEC_UNITS: tuple[tuple[str, str], ...] = (
    # ---- behaviour.md §2: the data model ------------------------------------------
    ("§2.1", "identifiers: sessionKey, retained sessionId windows, messageId"),
    ("§2.3", "what gets indexed: user and assistant text on the active path"),
    # ---- §3: the sessions_search agent tool ---------------------------------------
    ("§3.1", "tool constants: limit 10 by default, at most 25, 300-unit excerpts, 32 KiB"),
    ("§3.2", "tool input: query trimmed, not empty, at most 4096 units; limit 1..25"),
    ("§3.3", "tool output: results with seven members in order, or {status, error}"),
    ("§3.4.1", "the requester context decides what is visible"),
    ("§3.4.2", "an explicit sessionKey: resolved, checked, searched alone"),
    ("§3.4.3", "no sessionKey: every visible session is a candidate"),
    ("§3.4.4", "incognito sessions are dropped, even when visible"),
    ("§3.4.5", "candidates searched per agent, limit 25 sent whatever the caller's limit"),
    ("§3.4.6", "hits mapped back, excerpts cut to 300 units plus an ellipsis, alias shown"),
    ("§3.4.7", "merged order: score, timestamp, sessionKey, messageId"),
    ("§3.4.8", "the caller's count limit"),
    ("§3.4.9", "the 32 KiB byte cap: stop at the first hit that does not fit"),
    ("§3.4.10", "output flags: indexing with its warning, truncated"),
    # ---- §4: the query language ----------------------------------------------------
    ("§4", "query policy: trim, 4096 units, whitespace terms, literal phrases ANDed"),
    ("§4.1", "tokenizer unicode61 remove_diacritics 2: case and diacritics folded"),
    # ---- §5: the search kernel -----------------------------------------------------
    ("§5.1", "kernel parameters: sessionKeys, sessionId, role, match, order, limit"),
    ("§5.2", "kernel result: hits, truncated, indexing, archivedTranscriptsExcluded"),
    ("§5.3", "session scope before the limit: namespace, explicit keys, [] = all"),
    ("§5.4", "matching and ranking: bm25 with corpus statistics, tie-breaks, recent"),
    ("§5.5.1", "excerpt: sentence starts after . and :"),
    ("§5.5.2", "excerpt: the best 48-token window"),
    ("§5.5.3", "excerpt: ' … ' marks text left out at either end"),
    ("§5.5.4", "excerpt bounds: 500 units in the kernel, 300 in the tool"),
    # ---- §6: the Gateway's sessions.search ------------------------------------------
    ("§6.1", "Gateway: an empty query is refused"),
    ("§6.2", "Gateway: agent id and session keys resolved"),
    ("§6.3", "Gateway: restricted clients see pre-filtered keys"),
    ("§6.4", "Gateway: each store searched with the request's limit"),
    ("§6.5", "Gateway: merge by score, timestamp, messageId; results sliced to limit"),
    ("§6.6", "Gateway: scope re-checked after the read"),
    ("§6.scope", "Gateway scope path (Control UI): prefix mode over the visible roster"),
    # ---- §7: parts designed from the seed --------------------------------------------
    ("§7.1", "CJK retry: CJK terms retried as literal substrings when nothing matched"),
    ("§7.2", "PostgreSQL path: simple + unaccent, sets compared, not scores"),
    ("§7.3", "time budgets: 90 s request, 60 s reader; a timeout is not 'no match'"),
    ("§7.4", "agent namespace prefix is literal (underscores included)"),
    # ---- §8: index lifecycle ----------------------------------------------------------
    ("§8.1", "same-transaction forward indexing; what marks a window dirty"),
    ("§8.2", "synchronous versus deferred rebuild of a replaced transcript"),
    ("§8.3", "needs-reconcile predicate; reconcile rebuilds and sweeps"),
    ("§8.4", "the indexing flag: completeness not confirmed, dirty hits hidden"),
    # ---- §9: history --------------------------------------------------------------------
    ("§9.1", "sessions_history tool: parameters, sessionId needs messageId"),
    ("§9.2", "chat.history: selector errors, sessionId must belong to the key"),
    ("§9.3", "reset semantics: current view, retained windows, closed intervals"),
    ("§9.4", "anchor window math: limit rows around the anchor"),
    ("§9.4.1", "an anchor in the current view: may include later post-reset turns"),
    ("§9.4.2", "an anchor outside the view: its closed interval, no later turns"),
    ("§9.4.3", "a missing or off-path anchor: empty history, not the tail"),
    ("§9.5", "byte bounding: the anchor kept, text cut to 4000 units, 80 KiB cap"),
    # ---- §10: Control UI ---------------------------------------------------------------
    ("§10.1", "command palette: scope, metadata before transcript, notices"),
    ("§10.2", "message search: the last word is a prefix"),
    ("§10.3", "title search: punctuation and whitespace separate words"),
    # ---- §11: visibility -----------------------------------------------------------------
    ("§11", "visibility settings: self, tree, agent, all; sandbox clamp; agent-to-agent"),
    ("§11.1", "row check: the requester and the sessions it owns"),
    ("§11.2", "row check: owned sessions visible under tree and all"),
    ("§11.3", "row check: cross-agent needs all and agent-to-agent"),
    ("§11.4", "row check: same agent under self and tree"),
    # ---- §12: upstream test cases (the conformance floor) ---------------------------------
    ("§12.1.1", "rejects a literal global target owned by another fixed-store agent"),
    ("§12.1.2", "declares exact success and error result contracts"),
    ("§12.1.3", "warns that indexing makes search results incomplete"),
    ("§12.1.4", "rejects empty queries and invalid limits"),
    ("§12.1.5", "rejects an empty query at the schema level"),
    ("§12.1.6", "keeps the blank-query guarantee after provider schema normalization"),
    ("§12.1.7", "filters invisible hits before applying the limit"),
    ("§12.1.8", "searches a multi-session visible set in one gateway call"),
    ("§12.1.9", "never searches or returns incognito sessions"),
    ("§12.1.10", "excludes foreign unscoped sessions that cannot be reopened by session key"),
    ("§12.1.11", "keeps an unscoped current session in the requester agent store"),
    ("§12.1.12", "uses the target agent for an explicit cross-agent session"),
    ("§12.1.13", "accepts the gateway's canonical key for the current-session alias"),
    ("§12.1.14", "clamps sandboxed callers to spawned sessions"),
    ("§12.1.15", "keeps archived spawned rows visible from their ownership metadata"),
    ("§12.1.16", "truncates snippets (unredacted), limits rows, and caps bytes"),
    ("§12.1.17", "resolves and sends a one-session restriction"),
    ("§12.1.18", "rejects a scoped grant when the target incarnation changes before search"),
    ("§12.2.1", "searches a populated closed database without reopening a writer"),
    ("§12.2.2", "scopes omitted filters to a logical namespace"),
    ("§12.2.3", "returns empty results without creating a missing database"),
    ("§12.2.4", "reports archived search exclusions and searches again after restore"),
    ("§12.2.5", "indexes appended messages synchronously and returns bounded hits"),
    ("§12.2.6", "matches an unfinished final word in prefix mode, literal AND kept"),
    ("§12.2.7", "ignores non-message events and misses non-matching queries"),
    ("§12.2.8", "filters hits to 1 / 33000 requested session keys"),
    ("§12.2.9", "scopes content reads, bounds snippets, ranked and recent results"),
    ("§12.2.10", "filters role and generation before selecting the most recent messages"),
    ("§12.2.11", "hides dirty search rows after their transcript is gone"),
    ("§12.2.12", "rejects empty and oversized queries"),
    ("§12.2.13", "preserves stale rows until a replaced transcript is reconciled"),
    ("§12.2.14", "only surfaces the active branch after a deferred leaf-control rebuild"),
    ("§12.2.15", "streams large searchable projections in bounded chunks"),
    ("§12.2.16", "backfills transcripts that predate the index via reconcile"),
    ("§12.2.17", "detects missing, dirty, lagging and unclassified projections"),
    ("§12.2.18", "sweeps orphaned index rows even when watermarks are current"),
    ("§12.3.1", "literal phrases, AND terms, final prefix, accents and result bounds"),
    ("§12.3.2", "corpus BM25 before scope filtering; recent order; excerpt windows"),
    ("§12.3.3", "reads append, rewind, reset and deletion"),
    ("§12.4.1", "search then history: the hit's anchor reopens it"),
    ("§12.4.2", "a missing anchor gives messages: []"),
    ("§12.4.3", "a sessionId not of the key is rejected"),
    ("§12.4.4", "an archived physical session reopened by sessionId and messageId"),
    ("§12.4.5", "a 1,200-byte cap keeps the anchor alone"),
    ("§12.4.6", "self, sandbox and cross-agent restrictions forbid both tools"),
    ("§12.4.7", "offset with messageId, and sessionId alone, are refused"),
    ("§12.5.1", "session list search: the title cases"),
    ("§12.5.2", "command palette session search: payload, notices, 200+ sessions"),
    ("§12.5.3", "session visibility checker"),
    # ---- the seed document, paragraph by paragraph ---------------------------------------
    ("seed ¶1", "sessions_search searches user and assistant text; a hit's members"),
    ("seed ¶2", "a hit's sessionKey, messageId, sessionId reopen its context"),
    ("seed ¶3", "without messageId, history returns the newest reset-relative tail"),
    ("seed ¶4", "an anchor in the current view keeps current-view behaviour"),
    ("seed ¶5", "an anchor outside the view opens its closed interval"),
    ("seed ¶6", "anchored reads use limit; omit offset with an anchor"),
    ("seed ¶7", "large windows return fewer messages; the anchor is kept; cursors go on"),
    ("seed ¶8", "a missing or off-path message is empty history; a foreign sessionId refused"),
    ("seed ¶9", "the same rules without a running Gateway"),
    ("seed ¶10", "search uses sessions_history's visibility; all by default"),
    ("seed ¶11", "cross-agent access: agentToAgent enabled and allow; agent, tree, self"),
    ("seed ¶12", "per-peer DM routing does not restrict visibility"),
    ("seed ¶13", "invisible results are removed before the limits"),
    ("seed ¶14", "sandboxed agents see the sessions they spawned"),
    ("seed ¶15", "incognito stays excluded; narrowing from all blocks cross-agent access"),
    ("seed ¶16", "excerpts preserve text, credentials included; results are bounded"),
    ("seed ¶17", "queries: text, 4096 units, 25 hits, 300-unit excerpts, 32 KiB, literal"),
    ("seed ¶18", "90 s request budget around the reader's 60 s; a timeout is not no-match"),
    ("seed ¶19", "the palette searches the full authorized history, not a roster page"),
    ("seed ¶20", "title search: punctuation and whitespace separate words; ids literal"),
    ("seed ¶21", "UI message search: last word a prefix; sessions_search exact words"),
    ("seed ¶22", "palette: custom sidebar groups; subagent runs excluded; no archived"),
    ("seed ¶23", "a bounded set of best matches; archived exclusions; restore on open"),
    ("seed ¶24", "indexed in the same transaction; tool results excluded; active branch"),
    ("seed ¶25", "predating or rewound transcripts reindexed; deletion in one transaction"),
    ("seed ¶26", "indexing: true means completeness not confirmed; matches usable"),
    ("seed ¶27", "Unicode word tokenizer with diacritic removal (PostgreSQL: its own ranking)"),
    ("seed ¶28", "CJK terms retried as literal substrings; no widening of found hits"),
    ("seed ¶29", "agent namespace prefixes are literal, underscores included"),
    ("seed ¶30", "sessions_search is exact words from raw transcripts, not semantic recall"),
    ("seed ¶31", "the sessions_* tool surface exposes this search"),
)

#: unit id -> title.
UNIT_TITLES: dict[str, str] = dict(SPEC_UNITS)


def unit_group(unit: str) -> str:
    """The top-level part a unit belongs to, for summaries: `§5`, `§12`, `seed`.

    >>> unit_group("§5.5.2"), unit_group("§12.1.4"), unit_group("seed ¶3"), unit_group("§6.scope")
    ('§5', '§12', 'seed', '§6')
    """
    if unit.startswith("seed"):
        return "seed"
    return unit.split(".")[0]
