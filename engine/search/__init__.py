"""The search stage: behaviour.md §5 over the reference index, from a request to its hits.

Owns: orchestrating a search over one read-only `engine.index.view.IndexView` (the query
stage plans it, the score stage ranks it, the results stage cuts the excerpts), and the
one place where a row becomes a `SearchHit` for every backend. Must not touch: the index's
mutable state, files, the transcript store, the query policy or the formulas themselves.

Modules, read in this order:

* `scope` — session scope (§5.3): which windows a request may see;
* `order` — `RankedRow` and the total orders of §5.4 (relevance, recent);
* `clear_path` — every matching row ranked by plain loops: the version to read first and
  the test oracle of the fast path;
* `fast_path` — the first rows of the same order from the view's columns (`top_rows`);
* `excerpts` — which excerpt a returned row gets, cut from its re-analyzed text;
* `hits` — hit assembly (score, timestamp, bounded snippet), used by every backend;
* `kernel` — the steps of a search, the `limit + 1` truncation and the CJK retry gate;
* `explain` — the same search explained per hit, as values with plain JSON.

Only backends (and what sits above them) import this package; `engine.index`, `query`,
`score` and `results` never import it.
"""
