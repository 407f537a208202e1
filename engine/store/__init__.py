"""The store wing: the object every command opens, and what keeps it whole.

A store is a folder laid out as an OpenClaw state: one partition per agent, each a whole
backend of `engine.backends` (reference or SQLite). Modules:

* `registry`: opening or creating a store (`open_store`, `open_backend`), which backend a
  folder holds, and the refusal of old layouts;
* `partitioned`: the partitioned store itself: routing of writes and reads, counts and
  maintenance across partitions;
* `layout`: the folder layout of partitions, the root's metadata, making and removing
  partition folders;
* `transaction`: one write transaction across partitions;
* `fan_out`: the fan-out of a search (and `explain`) and the merge of partition answers;
* `opening`: making and opening a partitioned store, or a state OpenClaw wrote;
* `explanation`: `explain` across partitions, each hit labelled with its partition;
* `lock`: the lock every public call of a store holds (one thread at a time);
* `background`: the background reconcile worker;
* `maintenance`: the maintenance capabilities (reconcile, compact, stats) as commands
  call them;
* `archives`: cold archives of windows.

Must not touch: how a partition stores, indexes, scores or searches (each partition is a
backend, unchanged), and the rules of search or history.
"""
