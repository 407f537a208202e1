"""The derived search index: term dictionary, postings, segments, manifest, lifecycle.

Owns: index data and the decisions about when index rows exist (lifecycle). Must not
touch: transcripts directly (the backend feeds it `IndexEntry` values), ranking formulas
(`score/`), excerpt rules (`results/`), byte layouts (`codec/`).

Reading order, bottom up:

* `termdict` — the sorted term dictionary (exact and prefix lookup; sortedcontainers);
* `postings` — posting lists with positions; `documents` — what a row stores;
* `segment` — the writable buffer and flushed, immutable segments;
* `inverted_index` — segments + buffer + tombstones + window states; exact `N` and total
  tokens for bm25;
* `matching` — phrase occurrences from positions (oracle: `query.phrase_match`);
* `writer` — flush, merge, manifest last (files under `index/` of a store);
* `kernel` — behaviour.md §5 over the index: scope, bm25, orders, truncation, snippets,
  the CJK retry (with `cjk_grams` narrowing it and `fast_snippet` cutting excerpts);
* `check` — structural invariants, callable from tests;
* `lifecycle` — the shared per-window index-state rules (§8), used by every backend.

The backend that ties the index to a transcript store is `engine.backends.reference`;
`engine.diagnostics.verify` rebuilds an index from the transcripts and compares.
"""
