"""The derived search index: term dictionary, postings, segments, manifest, lifecycle.

Owns: index data and the decisions about when index rows exist (lifecycle), and the
read-only view of them that search reads. Must not touch: transcripts (the backend feeds
it `IndexEntry` values), the query policy (`query/`), ranking formulas (`score/`), excerpt
rules (`results/`), searching itself (`search/`), byte layouts (`codec/`). It imports none
of `query`, `results`, `transcript` or `search`.

Reading order, bottom up:

* `termdict` — the sorted term dictionary (exact and prefix lookup; sortedcontainers);
* `postings` — posting lists with positions; `documents` — what a row stores;
* `segment` — the writable buffer and flushed, immutable segments;
* `inverted_index` — segments + buffer + tombstones + window states; exact `N` and total
  tokens for bm25;
* `row_columns` — per-row columns (length, scope group, timestamp) for the fast path;
* `view` — `IndexView`, the read-only view of one version that the search stage reads;
* `matching` — phrase occurrences from positions (oracle: `query.phrase_match`);
* `cjk_grams` — the CJK character/bigram index that narrows the CJK retry;
* `writer` — flush, merge, manifest last (files under `index/` of a store);
* `check` — structural invariants, callable from tests;
* `lifecycle` — the shared per-window index state (§8), used by every backend;
* `window_states` — the index's mapping of those states, with a stamp that moves at every
  write (what a search derives from the states is kept under it).

The search over the index is `engine.search`; the backend that ties the index to a
transcript store is `engine.backends.reference`; `engine.diagnostics.verify` rebuilds an
index from the transcripts and compares.
"""
