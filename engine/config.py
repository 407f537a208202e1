"""The engine's tunables, in one frozen value.

Owns: every size and threshold that is a choice rather than a fact of the specification's
wire format, and the switches between a fast version and its clear version. Must not
touch: the environment, files or any other engine module (it reads nothing; callers build
an `EngineConfig` and pass it down, and each module reads its fields from the config it
was handed, never from a module constant a test could patch).

Sizes. Tests shrink them to reach boundary code (a log file that rolls after a few hundred
bytes, a checkpoint with two windows a record, a flush every three rows).

Flags. An on/off choice of what the engine does (not how fast) is a flag (`flags()`), never
part of `clear_paths()`: `background_reconcile` lets a writer's store reconcile after a
search found work pending (`engine.store.background`); tests and the benchmark that
look at a store as they wrote it turn it off.

Clear paths. Where the engine runs a fast version of something beside a clear version
(the plain code that says what the answer is, and the fast version's test oracle), one
boolean field chooses: True, the default, runs the fast version; False the clear one.
Either gives the same answers, bit for bit; only the time and memory differ.

    field                 True (fast)                     False (clear; its oracle test)
    fast_kernel           search.fast_path.top_rows       search.clear_path.rank_rows then
                                                          search.order.order_rows
                                                          (tests/search/test_fast_path.py)
    cjk_gram_index        the CJK retry narrows its rows  a literal scan of every row's text
                          with index.cjk_grams            (tests/search/test_kernel_oracle.py)
    fast_snippets         results.fast_snippet over the   results.snippet.fts5_snippet over
                          analyzer's token_spans          the analyzer's tokens
                                                          (tests/results/test_fast_snippet.py)
    tombstone_runs        a long posting list drops its   one set lookup a row
                          deleted rows by runs            (tests/index/test_index_structures.py)
    defer_large_commits   a large commit that dirties a   every commit indexed at once
                          window waits for reconcile      (tests/transcript/test_write_path.py)
    stream_large_transactions (a large transaction is indexed as it is written, its
                          segments named at its commit)   every transaction indexed at
                                                          its commit
                                                          (tests/ingest/test_streamed_import.py)
    catalog_checkpoints   open from transcripts/          replay every log record
                          catalog.ckpt                    (tests/transcript/test_store_checkpoint.py)

The search stage reads the first three from the config the reference backend hands it,
`InvertedIndex` the fourth, the reference backend the fifth and sixth, `TranscriptStore`
the last.
`EngineConfig.clear_paths()` selects every clear path at once, for differential runs:
`tests/parity/test_backend_differential.py` runs the reference backend so against its
default config, against the fast paths forced onto small inputs, and against SQLite, on
generated corpora (`test_every_clear_path_gives_the_answers_of_the_fast_paths_and_of_sqlite`).

Why a constructor rather than a `clear_paths: bool` field the switches consult: each path
stays decided by exactly one field, read in one place, so no pair of fields needs a rule
for which one wins; and a run that finds a difference can turn the paths back on one at a
time (`EngineConfig.clear_paths(fast_kernel=True)`) to find which one differs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from engine.errors import UsageError

MEBIBYTE = 1024 * 1024

#: The metadata key that marks a field as a clear-path switch.
_CLEAR_PATH = "clear path"
#: The metadata key that marks a field as an on/off choice that is not a clear path.
_FLAG = "flag"


def _switch() -> Any:
    """A clear-path switch: True runs the fast version, False the clear one."""
    return field(default=True, metadata={_CLEAR_PATH: True})


def _flag(default: bool) -> Any:
    """An on/off choice that changes what the engine does, not how fast (not a clear path)."""
    return field(default=default, metadata={_FLAG: True})


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Tunables; the defaults are the production values.

    >>> EngineConfig().log_roll_bytes
    67108864
    >>> EngineConfig(log_roll_bytes=0)
    Traceback (most recent call last):
    ...
    engine.errors.UsageError: log_roll_bytes must be a positive integer, not 0
    >>> EngineConfig(fast_kernel=0)
    Traceback (most recent call last):
    ...
    engine.errors.UsageError: fast_kernel must be True or False, not 0
    >>> clear = EngineConfig.clear_paths(index_flush_documents=3)
    >>> clear.fast_kernel, clear.catalog_checkpoints, clear.index_flush_documents
    (False, False, 3)
    >>> EngineConfig(background_reconcile=1)
    Traceback (most recent call last):
    ...
    engine.errors.UsageError: background_reconcile must be True or False, not 1
    """

    # ----- the transcript store -----------------------------------------------------

    #: A transcript log file is sealed and a new one started once it holds at least this
    #: many bytes, at the next transaction boundary (a transaction never spans two files).
    log_roll_bytes: int = 64 * MEBIBYTE
    #: After sealing a log file and on a clean writer close, save the catalog to
    #: `transcripts/catalog.ckpt`; on open, start from it instead of decoding every
    #: record (see `engine.transcript.checkpoint`). False: replay every record.
    catalog_checkpoints: bool = _switch()
    #: A writer also saves the catalog checkpoint after a commit once this many records
    #: were committed since the last one, so a reader opening next to a long-lived writer
    #: (or after a crash) replays at most about this many records instead of the whole
    #: log.
    checkpoint_after_records: int = 10_000
    #: A writer that finishes reconciling a partition (`reconcile()`, or a background run
    #: that got through it: the moment a writer goes quiet after an import) also saves
    #: the checkpoint once this many records were committed or replayed since the last
    #: one, so that a reader opening next to it replays fewer records than this rather
    #: than up to `checkpoint_after_records` (a reader next to the benchmark's writer
    #: replayed enough records to slow its open noticeably). Each save writes the whole
    #: catalog, at a cost in time and bytes that grows with the partition's events.
    checkpoint_idle_records: int = 1_000
    #: Windows per `windows` record of a checkpoint (`engine.codec.catalog_file`).
    checkpoint_windows_per_record: int = 1024
    #: How many leading bytes reading a checkpoint asks for first: the header and the
    #: head (at most about 150 bytes; a longer head is read again whole).
    checkpoint_probe_bytes: int = 256

    # ----- the reference index ------------------------------------------------------

    #: Reference index (`engine.index.writer`): rows the buffer takes before it is
    #: flushed to a segment, segments that trigger a merge.
    index_flush_documents: int = 2000
    index_merge_segments: int = 8
    #: With `tombstone_runs`, a posting list longer than this many times the tombstone
    #: runs drops its deleted rows by runs (about two binary searches and three slices a
    #: run) rather than by a set lookup a row (cheaper each, but one per row); 0: every
    #: list by runs. Long lists are faster by runs, short ones by set.
    tombstone_runs_factor: int = 10
    #: Let a large commit (at least `index_flush_documents` changes) that leaves windows
    #: dirty wait for `reconcile` (`engine.backends.reference.indexing`).
    defer_large_commits: bool = _switch()
    #: Index a transaction of at least `index_flush_documents` changes as it is written,
    #: its rows kept apart (their segments named by no manifest) until it commits
    #: (`engine.backends.reference.streaming`), so an import's memory does not grow with
    #: its size. It then never waits (`defer_large_commits` applies to the others).
    stream_large_transactions: bool = _switch()
    #: Drop deleted rows from long posting lists by runs (`tombstone_runs_factor`).
    tombstone_runs: bool = _switch()

    # ----- replaced transcripts (behaviour.md §8.2, both backends) -------------------

    #: A replaced transcript is reindexed in its own transaction when it has at most
    #: this many events (upstream `SYNC_REBUILD_MAX_ROWS`) and at most
    #: `sync_rebuild_max_bytes` bytes; otherwise its window is marked dirty and
    #: reconcile rebuilds it (`engine.backends.replacement`).
    sync_rebuild_max_events: int = 4000
    #: The byte limit of a synchronous rebuild (upstream `SYNC_REBUILD_MAX_BYTES`): the
    #: UTF-8 bytes of the events' JSON texts (`replacement.transcript_bytes`).
    sync_rebuild_max_bytes: int = 4 * MEBIBYTE

    # ----- background reconciliation (`engine.store.background`) -------------------

    #: A search on a store opened as the writer that finds windows needing work starts
    #: the store's reconcile worker (behaviour.md §8.4). False: only `reconcile` rebuilds
    #: (tests and the benchmark that need a store to stay as written turn it off).
    background_reconcile: bool = _flag(True)
    #: The budget of one background run, in milliseconds: the reader's 60 s (§7.3); its
    #: watchdog stops the run at the next window after it (the next search starts another).
    reconcile_budget_milliseconds: int = 60_000
    #: A background batch (one short write transaction, the store's lock held) rebuilds
    #: windows until it has read about this many events; writers wait at most one batch.
    reconcile_batch_events: int = 2_000

    # ----- the search stage ---------------------------------------------------------

    #: Rank and order the rows from columns (`engine.search.fast_path`).
    fast_kernel: bool = _switch()
    #: Narrow the CJK substring retry with the in-memory CJK gram index.
    cjk_gram_index: bool = _switch()
    #: Choose the excerpt window by binary search over the hits (`engine.results.fast_snippet`).
    fast_snippets: bool = _switch()

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if item.metadata.get(_CLEAR_PATH) or item.metadata.get(_FLAG):
                if not isinstance(value, bool):
                    raise UsageError(f"{item.name} must be True or False, not {value!r}")
            elif item.name == "tombstone_runs_factor":
                _require_integer(item.name, value, minimum=0)
            else:
                _require_integer(item.name, value, minimum=1)

    @classmethod
    def clear_paths(cls, **overrides: Any) -> EngineConfig:
        """Every clear path selected (each switch of `clear_path_switches()` False), with
        the production sizes; `overrides` set any field, a switch included."""
        return cls(**({name: False for name in clear_path_switches()} | overrides))


def flags() -> tuple[str, ...]:
    """The names of the on/off fields that are not clear paths.

    >>> flags()
    ('background_reconcile',)
    """
    return tuple(item.name for item in fields(EngineConfig) if item.metadata.get(_FLAG))


def clear_path_switches() -> tuple[str, ...]:
    """The names of the fields that choose between a fast and a clear version.

    >>> clear_path_switches()  # doctest: +NORMALIZE_WHITESPACE
    ('catalog_checkpoints', 'defer_large_commits', 'stream_large_transactions',
     'tombstone_runs', 'fast_kernel', 'cjk_gram_index', 'fast_snippets')
    """
    return tuple(item.name for item in fields(EngineConfig) if item.metadata.get(_CLEAR_PATH))


def _require_integer(name: str, value: object, *, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        kind = "a positive integer" if minimum else "a non-negative integer"
        raise UsageError(f"{name} must be {kind}, not {value!r}")
