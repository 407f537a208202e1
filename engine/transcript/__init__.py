"""The transcript: the source of truth from which every index is derived.

Map of the package (each module owns one concept; the index never lives here):

* `events.py`      — event kinds (message, leaf control, reset, compaction, custom_message,
                     the session header, anything else kept as it came) and their validation;
* `tree.py`        — the `id`/`parentId` tree of a window, the leaf rule and the active path
                     (computed from the events, never stored twice);
* `windows.py`     — session keys, session windows, their reasons and the chain of windows
                     under a key (current versus retained);
* `projection.py`  — what is searchable: index entries from the active path (§2.3);
* `validation.py`  — what a store accepts: the checks every backend runs before a write;
* `clock.py`       — the clock that stamps records and events (`now_milliseconds`);
* `log_files.py`   — the transcript log's append-only files: names, numbering, magic,
                     and how transactions lie in them;
* `log_positions.py` — where committed data lies in the log: record positions, the
                     cursor, sealed log files, committed transactions;
* `log_tail.py`    — the torn tail (`LogTail`) and the rule that tells it from damaged
                     commits;
* `log_reader.py`  — `LogReader`: replaying committed transactions, reading events at
                     their positions;
* `log_writer.py`  — `LogWriter`: append, commit, roll, seal, recovery of a torn tail;
* `log_checks.py`  — the checks of the log bytes a catalog checkpoint covers (cheap on
                     open, thorough for verify);
* `catalog.py`     — the committed state in memory: windows, the session-key index and
                     the log positions of every event, and the replay rule;
* `checkpoint.py`  — the catalog saved beside the log, when it is saved, and when it is
                     trusted on open;
* `positions_column.py` — the catalog's event positions as columns a checkpoint save
                     reads a record at a time, without a copy;
* `evidence.py`    — what files written after commits say was committed;
* `store_problem.py` — the problems opening reports (`StoreProblem`), loaded where one
                     is made;
* `lost_commits.py` — the rule that a log holding less lost committed transactions, and
                     what it finds (`LostCommits`);
* `changes.py`     — the change feed: change values and the commit hooks;
* `compaction.py`  — the rules and steps of a compaction (crash safety, readers) and the
                     compaction state file;
* `compaction_outcome.py` — what a compaction reports (`CompactionOutcome`);
* `compaction_plan.py` — which committed records are dead, the plan, and rewriting the
                     log files without them;
* `transaction.py` — `StoreTransaction`: a transaction's records and the overlay its reads
                     see, built from a catalog, a log writer and a read function;
* `store_handle.py` — the store's own files and the fields of an open handle;
* `store_checkpoint.py` — a handle's catalog: loaded from the checkpoint and the log,
                     saved back as a checkpoint;
* `store_compaction.py` — `compact()`, and how a handle's reads follow a compaction;
* `store_reads.py` — windows, events, counts, `changes_since`, a reader's `refresh()`;
* `store_recovery.py` — claims of what was committed against the log (lost commits),
                     the unfinished tail, `problems()`, `verify_log()`;
* `store_writes.py` — write transactions, their commit and the commit hooks;
* `store.py`       — the durable `TranscriptStore` that assembles the `store_*` parts
                     (open, lock, recovery, commit, reads, append order `seq`): create,
                     open and close.

Import direction: `events` ← `tree` ← `projection`; `windows` and `clock` stand alone;
the log modules `log_files`, `log_positions` and `log_tail` ← `log_reader` ← `log_writer`,
and `log_files`, `log_positions` ← `log_checks`; `evidence` ← the log ← `lost_commits`,
the log ← `catalog` ← `positions_column` ← `checkpoint` (which uses `evidence`), the log ← `changes`,
`catalog` ← `compaction` (which uses `evidence`) ← `compaction_plan`, and `transaction`
and then the store above them: `store_handle` ← `store_checkpoint` ← `store_compaction`
← `store_reads` ← `store_recovery` and `store_writes` (siblings) ← `store`; nothing here
imports `engine.index`, `engine.query` or a backend. This `__init__` re-exports nothing,
so importing one module does not load the others. What only a writer, a compaction or a
damaged log needs (`transaction`, `log_writer`, `compaction_plan`, `lost_commits`,
`log_tail`) the store parts import where they use it, so a store opened to be read (a
search) loads none of them (`tests/cli/test_progress_and_startup.py`).

Two meanings of "segment". In the code, a segment is an *index segment* only
(`engine/index/segment*.py`: an immutable run of index rows). The transcript's files are
the *log* (`log_*.py`, `engine.codec.log_file`, `EngineConfig.log_roll_bytes`), made of
*log files* numbered from 1. The word survives in a transcript sense only where it is
visible outside the code, which is not this package's to change: the log files' names on
disk (`transcripts/segment-NNNNNN.log`), their magic (`SS.SEGMT`) and file kind
(`segment`, as `session-search dump` prints it), the wording of error messages about
them (the files they name are called segment), and the field names of the catalog
checkpoint's format (`engine.codec.catalog_file`: `segment`, `sealed_segments`,
`event_segments`, `transaction_segments`, which number log files).
"""
