"""Persisting the inverted index: flush the buffer to a segment, merge, commit the manifest.

Owns: which index files exist (`index/manifest`, `index/segment-NNNNNN.terms` and
`.postings`), the order they are written in, and loading them back. Must not touch: the
byte layouts (`engine.codec.*_file`), transcripts, search.

Call order of a flush (the manifest is the commit point, written last and atomically):

1. write the new segment's postings file, then its terms file (`write_atomic`: durable);
2. write the manifest naming the new segment list, the tombstones, the window states and
   the transcript-store generation the index now reflects (`write_atomic`);
3. only then remove files no manifest names any more (merged-away segments, or leftovers
   of a flush that crashed before step 2).

A crash before step 2 leaves the previous manifest in charge: the index it describes is
complete for an older generation, and the backend replays the transcript changes after
that generation on open. A crash after step 2 leaves only unreferenced files, removed by
the next writer. Readers never see a half-written index.

A merge writes one segment holding every live row of all segments and the buffer, with
no tombstones, then commits it the same way. Sizes come from `engine.config.EngineConfig`
(`index_flush_documents`, `index_merge_segments`); tests shrink them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence

from engine.codec.manifest_file import Manifest, decode_manifest, encode_manifest
from engine.codec.postings_file import (
    check_postings_ends,
    check_postings_file,
    encode_postings_file,
    read_posting_record,
)
from engine.codec.terms_file import check_terms_file, encode_terms_file, open_terms_file
from engine.config import EngineConfig
from engine.directory import Directory
from engine.errors import CorruptFile, StoreError
from engine.index.documents import DocumentRecord
from engine.index.inverted_index import InvertedIndex
from engine.index.lifecycle import WindowIndexState
from engine.index.postings import (
    FlatPositions,
    Posting,
    PostingColumns,
    columns_without_deleted,
    concatenate_columns,
)
from engine.index.segment import FrozenSegment, Segment, read_posting_columns
from engine.index.segment_rows import SegmentRows, segment_bounds
from engine.index.stored_terms import PostingsSlot, StoredTermDictionary

INDEX_FOLDER = "index/"
MANIFEST_NAME = "index/manifest"
SEGMENT_PATTERN = re.compile(r"^index/(segment-(\d{6}))\.(terms|postings)$")


def segment_file_names(name: str) -> tuple[str, str]:
    """The terms and postings file names of segment `name`.

    >>> segment_file_names("segment-000003")
    ('index/segment-000003.terms', 'index/segment-000003.postings')
    """
    return f"{INDEX_FOLDER}{name}.terms", f"{INDEX_FOLDER}{name}.postings"


# ----- loading ------------------------------------------------------------------------


def load_segment(directory: Directory, name: str) -> FrozenSegment:
    """Open a flushed segment: read its terms file's table (texts, message ids and term
    records are read when asked for) and check its postings file's ends.

    Both files stay open (`Directory.open_read`) for as long as the segment is used, so a
    writer's merge that removes them does not pull them from under a reader.
    """
    terms_name, postings_name = segment_file_names(name)
    terms_location = directory.location(terms_name)
    postings_location = directory.location(postings_name)
    terms_handle = directory.open_read(terms_name)
    try:
        postings_handle = directory.open_read(postings_name)
    except BaseException:
        terms_handle.close()
        raise
    try:
        reader = open_terms_file(terms_handle.read, terms_handle.size(), terms_location)
        lists = check_postings_ends(postings_handle.read, postings_handle.size(),
                                    postings_location)
        if lists != reader.table.term_count:
            raise CorruptFile(postings_location, 0, f"holds {lists} posting lists, its terms "
                              f"file names {reader.table.term_count}")
    except BaseException:
        terms_handle.close()
        postings_handle.close()
        raise
    read = postings_handle.read

    def read_postings(slot: PostingsSlot) -> list[Posting]:
        lists = read_posting_record(read, slot.offset, slot.length, postings_location)
        return [Posting(doc_id, positions) for doc_id, positions in lists.pairs()]

    def read_columns(slot: PostingsSlot) -> PostingColumns:
        # The query path's shape: positions stay in their flat array until a shown row
        # or a phrase needs them (`FlatPositions`).
        lists = read_posting_record(read, slot.offset, slot.length, postings_location)
        return PostingColumns(lists.doc_ids, lists.counts,
                              FlatPositions.of_counts(lists.positions, lists.counts))

    return FrozenSegment(name, SegmentRows(reader), StoredTermDictionary(reader),
                         read_postings, read_columns)


def check_segment_rows(directory: Directory, entry: tuple,
                       documents: Mapping[int, DocumentRecord]) -> None:
    """Raise `CorruptFile` naming the terms file when the rows a segment's terms file holds
    are not the ones the manifest names for it (its first and last doc id and its row
    count): a terms file of another segment, or an older copy, put in its place.

    >>> check_segment_rows(None, ("segment-000001", 1, 2, 2), {1: None, 2: None})
    """
    name, first, last, count = entry[:4]
    found = (*segment_bounds(documents), len(documents)) if documents else (None, None, 0)
    if found != (first, last, count):
        terms_name = segment_file_names(name)[0]
        raise CorruptFile(directory.location(terms_name), 0,
                          f"holds rows {found[0]}..{found[1]} ({found[2]} rows), the "
                          f"manifest names {first}..{last} ({count} rows) for {name}: a "
                          "terms file of another segment or an older copy")


def manifest_bytes(directory: Directory) -> bytes | None:
    """The committed manifest as raw bytes (None when absent): a cheap change detector."""
    if not directory.exists(MANIFEST_NAME):
        return None
    return directory.read_bytes(MANIFEST_NAME)


def read_manifest(directory: Directory) -> Manifest | None:
    """The committed manifest, or None when the index was never flushed."""
    if not directory.exists(MANIFEST_NAME):
        return None
    return decode_manifest(directory.read_bytes(MANIFEST_NAME), directory.location(MANIFEST_NAME))


class ProfileMismatch(StoreError):
    """The committed index was built with another analyzer than the one in use."""


def load_index(
    directory: Directory, profile: str, *, attempts: int = 3, config: EngineConfig | None = None,
) -> InvertedIndex:
    """The committed index (an empty one at generation 0 when there is no manifest),
    reading its posting lists as `config` says (`InvertedIndex`).

    A reader can race a writer that merges: the segments a manifest names may be
    removed before the reader opens them. Then the manifest has changed, so the load is
    retried with the new one (`attempts` times in all). ProfileMismatch when the index
    was built with another analyzer.
    """
    for attempt in range(attempts):
        manifest = read_manifest(directory)
        if manifest is None:
            return InvertedIndex(config=config)
        if manifest.profile != profile:
            raise ProfileMismatch(
                f"{directory.location(MANIFEST_NAME)}: index was built with "
                f"{manifest.profile!r}, this engine analyzes with {profile!r}"
            )
        try:
            segments = [load_segment(directory, entry[0]) for entry in manifest.segments]
            for entry, segment in zip(manifest.segments, segments, strict=True):
                check_segment_rows(directory, entry, segment.documents)
        except StoreError:
            if attempt + 1 == attempts or read_manifest(directory) == manifest:
                raise
            continue
        states = {
            session_id: WindowIndexState(indexed_seq, leaf, rebuild)
            for session_id, indexed_seq, leaf, rebuild in manifest.windows
        }
        return InvertedIndex(
            segments,
            deleted=manifest.deleted,
            next_doc_id=manifest.next_doc_id,
            window_states=states,
            generation=manifest.generation,
            statistics=manifest.statistics,
            deleted_runs=manifest.deleted_runs,
            indexing=manifest.indexing,
            config=config,
        )
    raise AssertionError("unreachable: the last attempt returns or raises")


def check_index_files(directory: Directory) -> list[str]:
    """Check every byte of the committed index files (what opening leaves to the first
    read of each record): each segment's terms file (`check_terms_file`) and postings
    file (`check_postings_file` with every list decoded); one problem per damaged file.
    """
    problems: list[str] = []
    try:
        manifest = read_manifest(directory)
    except StoreError as error:
        return [str(error)]
    for entry in manifest.segments if manifest is not None else ():
        for name in segment_file_names(entry[0]):
            location = directory.location(name)
            try:
                data = directory.read_bytes(name)
                if name.endswith(".terms"):
                    check_terms_file(data, location)
                else:
                    check_postings_file(data, location, decode_lists=True)
            except StoreError as error:
                problems.append(str(error))
    return problems


# ----- writing ------------------------------------------------------------------------


def _next_segment_name(directory: Directory, index: InvertedIndex) -> str:
    numbers = [0]
    for file_name in directory.list_names(INDEX_FOLDER):
        match = SEGMENT_PATTERN.match(file_name)
        if match:
            numbers.append(int(match.group(2)))
    numbers.extend(int(segment.name.rsplit("-", 1)[1]) for segment in index.segments)
    return f"segment-{max(numbers) + 1:06d}"


def _write_segment(
    directory: Directory,
    name: str,
    documents: Sequence[DocumentRecord],
    postings: tuple[bytes, dict[str, tuple[int, int, int]]],
    previous: Segment | None = None,
) -> FrozenSegment:
    """Write one segment's two files durably and return it opened from them.

    `postings` is the encoded postings file and its slots (`engine.codec.postings_file`,
    from pairs for a merge, from the write buffer's columns for a flush). The segment is
    opened the way a reader opens it (`load_segment`), so its texts leave memory now.
    """
    terms_name, postings_name = segment_file_names(name)
    postings_data, slots = postings
    rows = [
        (r.doc_id, r.session_id, r.message_id, r.role, r.timestamp, r.length, r.seq, r.text)
        for r in documents
    ]
    entries = [(term, *slot) for term, slot in slots.items()]
    directory.write_atomic(postings_name, postings_data)
    # A flushed segment's group table starts with the previous segment's, so the query
    # columns copy its group column as it is (`engine.index.row_columns`).
    prefix = previous.documents.table.group_table if (
        previous is not None and isinstance(previous.documents, SegmentRows)) else ()
    directory.write_atomic(terms_name, encode_terms_file(rows, entries, prefix))
    return load_segment(directory, name)


def _live_lists(
    segments: Sequence[Segment], deleted: set[int]
) -> Iterator[tuple[str, list[int], list[tuple[int, ...]]]]:
    """Every term of `segments` with its live postings as `(term, doc_ids, positions)`,
    in term order (terms left with none dropped). Lists are read without being cached
    by the segments, so a merge holds one term's lists at a time."""
    terms: set[str] = set()
    for segment in segments:
        terms.update(segment.terms())
    for term in sorted(terms):
        joined = concatenate_columns([read_posting_columns(segment, term) for segment in segments])
        if deleted:
            joined = columns_without_deleted(joined, deleted)
        if joined.doc_ids:
            yield term, joined.doc_ids, list(joined.positions)


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
    buffer = index.buffer
    deleted = index.deleted
    live = [record for doc_id, record in buffer.documents.items() if doc_id not in deleted]
    new_segments = []
    for segment in index.segments:
        if len(deleted) >= len(segment.documents) and deleted.issuperset(segment.documents):
            deleted.difference_update(segment.documents)
        else:
            new_segments.append(segment)
    if live:
        name = _next_segment_name(directory, index)
        postings = encode_postings_file(buffer.posting_columns(index.deleted))
        previous = new_segments[-1] if new_segments else None
        new_segments.append(_write_segment(directory, name, live, postings, previous))
    index.deleted.difference_update(buffer.documents)
    index.replace_segments(new_segments)
    commit_manifest(directory, index, profile)
    if len(index.segments) >= config.index_merge_segments:
        merge_index(directory, index, profile, config)


def merge_index(
    directory: Directory, index: InvertedIndex, profile: str, config: EngineConfig
) -> None:
    """Rewrite every live row into one segment (tombstones merged away) and commit."""
    sources = index.all_segments()
    live = [record for record in index.documents()]
    new_segments: list[Segment] = []
    if live:
        postings = encode_postings_file(_live_lists(sources, index.deleted))
        name = _next_segment_name(directory, index)
        new_segments.append(_write_segment(directory, name, live, postings))
    index.deleted.clear()
    index.replace_segments(new_segments)
    commit_manifest(directory, index, profile)
