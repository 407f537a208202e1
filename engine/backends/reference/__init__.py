"""The reference backend: the engine's own transcripts and inverted index behind the
backend protocol. Its parts live in the stages below (`engine.transcript`, `engine.index`,
`engine.search`); this folder puts them together, one concept per module:

* `transaction` — `ReferenceTransaction`, the store's write transaction with every write
  checked first;
* `indexing` — `IndexedStore`: the index kept in step with the store's commits (the commit
  hook, replay, large commits left waiting), its files (flush, merge) and the `indexing`
  status;
* `maintenance` — `IndexMaintenance`: reconcile, the sweep of orphans, compaction and the
  rebuild of the whole index;
* `backend` — `ReferenceBackend`, built on those two: creating and opening a store, the
  reads of its transcripts, the search entry points.
"""
