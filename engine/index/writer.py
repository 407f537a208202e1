"""Persisting the inverted index: flush the buffer to a segment, merge, commit the manifest.

Owns: which index files a flush or a merge writes (`index/manifest`,
`index/segment-NNNNNN.terms` and `.postings`) and the order they are written in. Must
not touch: the byte layouts (`engine.codec.*_file`), transcripts, search, and loading
the files back (`engine.index.loading`, which a reader imports without this module).

Call order of a flush (the manifest is the commit point, written last and atomically):

1. write the new segment's postings file, then its terms file (durable: `write_atomic`,
   `open_atomic`);
2. write the manifest naming the new segment list, the tombstones, the window states and
   the transcript-store generation the index now reflects (`write_atomic`);
3. only then remove files no manifest names any more (merged-away segments, or leftovers
   of a flush that crashed before step 2).

A crash before step 2 leaves the previous manifest in charge: the index it describes is
complete for an older generation, and the backend replays the transcript changes after
that generation on open. A crash after step 2 leaves only unreferenced files, removed by
the next writer. Readers never see a half-written index.

A merge writes one segment holding every live row of all segments and the buffer, with
no tombstones, then commits it the same way (`merge()`, `verify --repair`). A flush
merges by tiers instead: a segment's tier is how many times `index_merge_segments` its
rows are of `index_flush_documents` (`segment_tier`), and when the newest
`index_merge_segments` segments are of one tier they are rewritten as one segment of the
next (`tail_to_merge`, then again while that holds), their tombstones dropped, before
the manifest is committed. So a row is rewritten once a tier (a few times in all)
rather than at every merge of everything, which made a large import's merges grow with
the square of its rows; the segments stay few (fewer than `index_merge_segments` a
tier). Sizes come from `engine.config.EngineConfig`; tests shrink them.

A tier merge of flushed segments streams (`_write_merged_segment`): each term's merged
list goes to the new postings file as it is made, and the terms file is written from
the sources' columns, text records and the new term records one record at a time
(`engine.codec.terms_stream`, `Directory.open_atomic`), so what it holds does not grow
with the texts and files it merges; so does `merge_index` when nothing is buffered. A
flush writes the buffer's files a record at a time too (`_write_buffered_segment`). The
files written from records held whole (`_write_segment`) are their oracle.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter

from engine.codec.manifest_file import Manifest, encode_manifest
from engine.codec.postings_file import PostingsFileWriter, encode_postings_file
from engine.codec.terms_file import DocumentRow, encode_terms_file
from engine.codec.terms_stream import (
    TermRecordSpool,
    live_bounds,
    merged_table,
    merged_text_bodies,
    write_rows_terms_file,
    write_terms_file,
)
from engine.config import EngineConfig
from engine.directory import Directory, ReadHandle
from engine.index.documents import DocumentRecord
from engine.index.inverted_index import InvertedIndex
from engine.index.loading import (
    INDEX_FOLDER,
    MANIFEST_NAME,
    SEGMENT_PATTERN,
    load_segment,
    segment_file_names,
)
from engine.index.merged_lists import MergedList, live_lists, merged_lists
from engine.index.segment import FrozenSegment, Segment
from engine.index.segment_rows import SegmentRows, segment_bounds

# ----- writing ------------------------------------------------------------------------


def _next_segment_name(directory: Directory, index: InvertedIndex) -> str:
    numbers = [0]
    for file_name in directory.list_names(INDEX_FOLDER):
        match = SEGMENT_PATTERN.match(file_name)
        if match:
            numbers.append(int(match.group(2)))
    numbers.extend(int(segment.name.rsplit("-", 1)[1]) for segment in index.segments)
    return f"segment-{max(numbers) + 1:06d}"


def _write_segment(directory: Directory, name: str, documents: Sequence[DocumentRecord],
                   postings: tuple[bytes, dict[str, tuple[int, int, int]]],
                   previous: Segment | None = None) -> FrozenSegment:
    """Write one segment's two files durably and return it opened from them.

    `postings` is the encoded postings file and its slots (`engine.codec.postings_file`,
    from pairs for a merge, from the write buffer's columns for a flush). The segment is
    opened the way a reader opens it (`load_segment`), so its texts leave memory now.
    """
    terms_name, postings_name = segment_file_names(name)
    postings_data, slots = postings
    entries = [(term, *slot) for term, slot in slots.items()]
    directory.write_atomic(postings_name, postings_data)
    directory.write_atomic(terms_name, encode_terms_file(
        _document_rows(documents), entries, _group_prefix(previous)))
    return load_segment(directory, name, previous, len(documents))


def _document_rows(documents: Sequence[DocumentRecord]) -> list[DocumentRow]:
    """The rows of a terms file (`engine.codec.terms_file.DocumentRow`) of `documents`.

    When every record holds its text itself (a buffer's rows), each row is the record's
    fields picked in the row's order in C (`_ROW_FIELDS`); else made field by field
    (`_document_rows_clear`, the oracle).

    >>> record = DocumentRecord(4, "w", "m1", "user", 1.0, "hi", 1, 7)
    >>> _document_rows([record]) == _document_rows_clear([record])
    True
    >>> _document_rows([record])
    [(4, 'w', 'm1', 'user', 1.0, 1, 7, 'hi')]
    >>> class Texts:
    ...     def text_of(self, doc_id): return "read back"
    >>> _document_rows([record, record._replace(stored_text=Texts())])[1][-1]
    'read back'
    """
    if {*map(type, map(_STORED_TEXT, documents))} <= {str}:
        return list(map(_ROW_FIELDS, documents))
    return _document_rows_clear(documents)


def _document_rows_clear(documents: Sequence[DocumentRecord]) -> list[DocumentRow]:
    """`_document_rows`, field by field (a record's `text` read from its segment when
    not in memory)."""
    return [(r.doc_id, r.session_id, r.message_id, r.role, r.timestamp, r.length, r.seq, r.text)
            for r in documents]


#: A `DocumentRecord`'s fields in `DocumentRow`'s order, its `stored_text` last (the
#: text, when it is a `str`), and that field alone.
_ROW_FIELDS = itemgetter(0, 1, 2, 3, 4, 6, 7, 5)
_STORED_TEXT = itemgetter(5)


def _write_buffered_segment(directory: Directory, name: str, documents: Sequence[DocumentRecord],
                            lists: Iterable[MergedList], previous: Segment | None) -> FrozenSegment:
    """`_write_segment` of a write buffer's rows and `lists` (its `posting_columns`),
    each file written a record at a time (`PostingsFileWriter`, `write_rows_terms_file`,
    `Directory.open_atomic`): the same files, without either held whole."""
    terms_name, postings_name = segment_file_names(name)
    with directory.open_atomic(postings_name) as postings_file:
        postings = PostingsFileWriter(postings_file.write)
        entries = postings.add_flat_lists(lists)  # type: ignore[arg-type]
        postings.finish()
        postings_file.commit()
    with directory.open_atomic(terms_name) as terms_file:
        write_rows_terms_file(terms_file, _document_rows(documents), entries, _group_prefix(previous))
        terms_file.commit()
    return load_segment(directory, name, previous, len(documents))


def _group_prefix(previous: Segment | None) -> tuple[tuple[str, str], ...]:
    """What a new segment's group table starts with: the previous segment's, so the
    query columns copy its group column as it is (`engine.index.row_columns`)."""
    if previous is not None and isinstance(previous.documents, SegmentRows):
        return previous.documents.head.group_table
    return ()


def _write_merged_segment(
    directory: Directory, name: str, sources: Sequence[FrozenSegment], deleted: set[int],
    previous: Segment | None, read_ahead: int = 1 << 18,
) -> FrozenSegment | None:
    """Write the segment of the live rows of flushed `sources` (None when they have
    none) as `_write_segment` writes it from their records, streamed: each term's merged
    list is written to the postings file as it is made (`_merged_lists`, each source's
    file read `read_ahead` bytes at a time), its entry to a scratch file of term records,
    then the terms file from the sources' columns, their text records one at a time,
    and those term records (`engine.codec.terms_stream`). Both files are durable
    (`Directory.open_atomic`); the segment is returned opened from them."""
    tables = [segment.documents.table for segment in sources]  # type: ignore[attr-defined]
    bounds = live_bounds(tables, deleted)
    if bounds is None:
        return None
    terms_name, postings_name = segment_file_names(name)
    with directory.open_atomic(postings_name) as postings_file, \
            directory.open_atomic(f"{INDEX_FOLDER}{name}.spool") as spool:
        postings = PostingsFileWriter(postings_file.write)
        term_records = TermRecordSpool(spool)
        for term, doc_ids, *columns in _merged_lists(directory, sources, deleted, read_ahead):
            term_records.add((term, *postings.add(doc_ids, *columns)))
            del doc_ids, columns  # a long list is not held while the next one is made
        postings.finish()
        term_records.finish()
        postings_file.commit()
        table = merged_table(tables, deleted, bounds, _group_prefix(previous),
                             term_records.firsts, term_records.count)
        texts = merged_text_bodies(
            [(segment.documents.table, segment.documents.reader.text_record)  # type: ignore[attr-defined]
             for segment in sources], deleted, bounds)
        with directory.open_atomic(terms_name) as terms_file:
            write_terms_file(terms_file, table, texts, term_records.records())
            terms_file.commit()
    return load_segment(directory, name, previous, table.present.count(1))


def _merged_lists(
    directory: Directory, segments: Sequence[FrozenSegment], deleted: set[int],
    read_ahead: int = 1 << 18,
) -> Iterator[MergedList]:
    """`merged_lists` of flushed `segments`, their postings files opened here."""
    handles: list[ReadHandle] = []
    try:
        sources = []
        for segment in segments:
            name = segment_file_names(segment.name)[1]
            handles.append(handle := directory.open_read(name))
            sources.append((segment, handle, directory.location(name)))
        yield from merged_lists(sources, deleted, read_ahead)
    finally:
        for handle in handles:
            handle.close()


def _manifest_of(index: InvertedIndex, profile: str) -> Manifest:
    segments = []
    for segment in index.segments:
        first, last = segment_bounds(segment.documents)
        segments.append((segment.name, first, last, len(segment.documents)))
    windows = tuple(
        (session_id, state.indexed_seq, state.leaf_event_id, state.needs_rebuild)
        for session_id, state in sorted(index.window_states.items())
    )
    # Written only after a flush or merge, when the buffer is empty: the statistics are
    # then exactly those of the segments' live rows.
    statistics = None if len(index.buffer) else (index.document_count, index.total_tokens)
    return Manifest(
        index.generation, index.next_doc_id, profile, tuple(segments),
        tuple(sorted(index.deleted)), windows, statistics, indexing=index.indexing,
    )


def commit_manifest(directory: Directory, index: InvertedIndex, profile: str) -> None:
    """Write the manifest for `index` (its segments must be durable), then tidy up."""
    directory.write_atomic(MANIFEST_NAME, encode_manifest(_manifest_of(index, profile)))
    remove_unreferenced(directory, [segment.name for segment in index.segments])


def remove_unreferenced(directory: Directory, segment_names: Sequence[str]) -> list[str]:
    """Delete segment files the manifest does not name; return their names."""
    keep = set(segment_names)
    removed = []
    for file_name in directory.list_names(INDEX_FOLDER):
        match = SEGMENT_PATTERN.match(file_name)
        if match and match.group(1) not in keep:
            directory.remove(file_name)
            removed.append(file_name)
    return removed


def flush_index(
    directory: Directory, index: InvertedIndex, profile: str, config: EngineConfig
) -> None:
    """Turn the buffer's live rows into a new segment and commit the manifest.

    A flushed segment whose rows are all deleted by now (every window it held was
    rebuilt, e.g. by a reconcile of everything) leaves the manifest with its tombstones:
    dropping it is a merge that has nothing to copy.
    """
    deleted = index.deleted
    new_segments, dropped = [], []
    for segment in index.segments:
        if len(deleted) >= len(segment.documents) and deleted.issuperset(segment.documents):
            dropped.append(segment)
        else:
            new_segments.append(segment)
    buffer_segment(directory, index, new_segments, new_segments[-1] if new_segments else None)
    for segment in dropped:  # only once they are no segment of the index (a write can fail)
        deleted.difference_update(segment.documents)
    merge_tiers(directory, index, config)
    commit_manifest(directory, index, profile)


def segment_tier(rows: int, flush_rows: int, fan_in: int) -> int:
    """The tier of a segment of `rows` rows: 0 below `fan_in` flushes of `flush_rows`,
    1 below `fan_in` squared of them, and so on.

    >>> segment_tier(2000, 2000, 8), segment_tier(15999, 2000, 8), segment_tier(16000, 2000, 8)
    (0, 0, 1)
    >>> segment_tier(1, 3, 1), segment_tier(200_000, 2000, 8)
    (0, 2)
    """
    tier = 0
    bound = max(1, flush_rows) * max(2, fan_in)
    while rows >= bound:
        tier += 1
        bound *= max(2, fan_in)
    return tier


def first_tier_rows(config: EngineConfig) -> int:
    """The rows of the smallest segment of tier 1 (`segment_tier`): as many as a merge of
    one tier's flushed segments makes, `index_flush_documents` times
    `index_merge_segments` (at least two). A writer that writes a segment of that many
    rows at once (a streamed transaction, a reconcile) does not see it merged again
    before its tier fills: smaller ones were, and each merge rewrites its rows.

    >>> first_tier_rows(EngineConfig(index_flush_documents=2000, index_merge_segments=8))
    16000
    """
    return config.index_flush_documents * max(2, config.index_merge_segments)


def tail_to_merge(sizes: Sequence[int], flush_rows: int, fan_in: int) -> int:
    """How many of the newest segments (`sizes`: their rows, oldest first) a flush
    rewrites as one: the newest `fan_in` (at least two) when they are all of one tier
    (`segment_tier`), else none.

    >>> tail_to_merge([2000] * 8, 2000, 8), tail_to_merge([16000] + [2000] * 7, 2000, 8)
    (8, 0)
    >>> tail_to_merge([16000] * 7 + [2100], 2000, 8), tail_to_merge([3, 3], 3, 2)
    (0, 2)
    """
    count = max(2, fan_in)
    if len(sizes) < count:
        return 0
    tail = sizes[-count:]
    tiers = {segment_tier(rows, flush_rows, fan_in) for rows in tail}
    return count if len(tiers) == 1 else 0


def merge_tiers(directory: Directory, index: InvertedIndex, config: EngineConfig) -> list[Segment]:
    """Rewrite the newest segments as one while `tail_to_merge` says so; return the
    segments merged away (a committed manifest may still name their files: the next
    manifest commit removes them, `remove_unreferenced`)."""
    merged: list[Segment] = []
    while count := tail_to_merge([len(segment.documents) for segment in index.segments],
                                 config.index_flush_documents, config.index_merge_segments):
        merged.extend(merge_tail(directory, index, count))
    return merged


def merge_tail(directory: Directory, index: InvertedIndex, count: int, *,
               streamed: bool = True) -> list[Segment]:
    """Rewrite the newest `count` segments of `index` as one segment (their deleted rows
    left out, their tombstones dropped), which then ends its segments; return the
    segments merged away. The buffer stays as it is; no manifest is written.

    Flushed segments are merged `streamed` (`_write_merged_segment`: what it holds does
    not grow with their texts and files); otherwise, or with `streamed=False` (the
    streamed merge's oracle, `tests/index/test_streamed_merge.py`), from their records
    and lists held whole (`_write_segment`): the same files."""
    kept, sources = index.segments[:-count], index.segments[-count:]
    segments = list(kept)
    previous = kept[-1] if kept else None
    if streamed and _all_flushed(sources):
        merged = _write_merged_segment(directory, _next_segment_name(directory, index),
                                       sources, index.deleted, previous)  # type: ignore[arg-type]
        segments.extend([merged] if merged is not None else [])
    else:
        records = [document for segment in sources
                   for document in _live_records(segment, index.deleted)]
        if records:
            postings = encode_postings_file(live_lists(sources, index.deleted))
            name = _next_segment_name(directory, index)
            segments.append(_write_segment(directory, name, records, postings, previous))
    for segment in sources:
        index.deleted.difference_update(segment.documents)
    index.replace_segments(segments, keep_buffer=True)
    return list(sources)


def _all_flushed(segments: Sequence[Segment]) -> bool:
    """Whether every one of `segments` is read from its files (a streamed merge's)."""
    return all(isinstance(segment, FrozenSegment) and isinstance(segment.documents, SegmentRows)
               for segment in segments)


def _live_records(segment: Segment, deleted: set[int]) -> Iterator[DocumentRecord]:
    documents = segment.documents
    for doc_id in documents:
        if doc_id not in deleted:
            yield documents[doc_id]


def buffer_segment(directory: Directory, index: InvertedIndex, segments: Sequence[Segment],
                   previous: Segment | None, *, streamed: bool = True) -> None:
    """Write the live rows of `index`'s buffer as a new segment's files (durable, named
    by no manifest yet), then make `segments` and that segment the index's segments and
    empty its buffer (its rows' tombstones dropped). `previous` is the segment before
    it, whose group table starts the new one's (`_write_segment`). Its files are
    written a record at a time (`_write_buffered_segment`), or held whole when not
    `streamed` (the oracle): the same bytes.

    A flush commits the manifest after it; an open transaction's rows
    (`engine.backends.reference.streaming`) are written so as they are read, and named
    by the manifest only when the transaction commits.
    """
    buffer = index.buffer
    live = [record for doc_id, record in buffer.documents.items() if doc_id not in index.deleted]
    segments = list(segments)
    if live:
        name = _next_segment_name(directory, index)
        lists = buffer.posting_columns(index.deleted)
        segments.append(
            _write_buffered_segment(directory, name, live, lists, previous) if streamed
            else _write_segment(directory, name, live, encode_postings_file(lists), previous))
    index.deleted.difference_update(buffer.documents)
    index.replace_segments(segments)


def remove_segment_files(directory: Directory, segments: Sequence[Segment]) -> None:
    """Delete the files of `segments`, which no manifest names (an open transaction's,
    when it does not commit)."""
    for segment in segments:
        for file_name in segment_file_names(segment.name):
            if directory.exists(file_name):
                directory.remove(file_name)


def merge_index(
    directory: Directory, index: InvertedIndex, profile: str, config: EngineConfig, *,
    streamed: bool = True,
) -> None:
    """Rewrite every live row into one segment (tombstones merged away) and commit.

    With nothing buffered the flushed segments are merged `streamed`, as a tier merge
    (`merge_tail`); otherwise, or with `streamed=False` (the oracle), from the records
    and lists held whole: the same files."""
    new_segments: list[Segment] = []
    if streamed and not len(index.buffer) and _all_flushed(index.segments):
        merged = _write_merged_segment(directory, _next_segment_name(directory, index),
                                       index.segments, index.deleted, None)  # type: ignore[arg-type]
        new_segments.extend([merged] if merged is not None else [])
    else:
        live = list(index.documents())
        if live:
            postings = encode_postings_file(live_lists(index.all_segments(), index.deleted))
            name = _next_segment_name(directory, index)
            new_segments.append(_write_segment(directory, name, live, postings))
    index.deleted.clear()
    index.replace_segments(new_segments)
    commit_manifest(directory, index, profile)
