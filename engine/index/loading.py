"""Loading the inverted index from its files: the manifest, each segment's files, and
the checks that a segment's files are the ones the manifest names.

Owns: the names of the index files (`index/manifest`, `index/segment-NNNNNN.terms` and
`.postings`), opening a committed index (`load_index`, with its retries when a writer's
merge removes what a manifest named) and checking every byte of its files
(`check_index_files`, for `verify`). Must not touch: the byte layouts
(`engine.codec.*_file`), and writing: which files a flush or a merge writes, and in
what order, is `engine.index.writer`'s, which imports this module. A reader (a search)
loads this module and not the writer's, whose flushes and merges it never runs.

A segment whose per-row columns are not read yet has its first and last rows checked
against the manifest at open, and its row count when its columns are first read
(`_check_rows_when_read` sets `SegmentRows.check_rows`): a mismatch found then raises
the same `CorruptFile`, and is not retried as a changed manifest is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from operator import itemgetter

from engine.codec.group_table import StoredGroups
from engine.codec.manifest_file import Manifest, decode_manifest
from engine.codec.postings_file import (
    check_postings_ends,
    check_postings_file,
    read_posting_record,
)
from engine.codec.terms_file import check_terms_file, open_terms_file
from engine.config import EngineConfig
from engine.directory import Directory
from engine.errors import CorruptFile, StoreError
from engine.index.documents import DocumentRecord
from engine.index.inverted_index import InvertedIndex
from engine.index.lifecycle import WindowIndexState
from engine.index.postings import FlatPositions, Posting, PostingColumns
from engine.index.segment import FrozenSegment, Segment
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


def load_segment(directory: Directory, name: str, previous: Segment | None = None,
                 rows: int | None = None) -> FrozenSegment:
    """Open a flushed segment: read its terms file's table head (the per-row columns,
    texts, message ids and term records are read when asked for) and check its postings
    file's ends. `rows` is its row count when known (`SegmentRows`). Its group
    table is linked to `previous`'s (the segment before it) where that table starts it:
    no pair is made at open, and its pairs, once made, hold `previous`'s pair objects.

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
        reader = open_terms_file(terms_handle.read, terms_handle.size(), terms_location,
                                 _stored_groups(previous))
        lists = check_postings_ends(postings_handle.read, postings_handle.size(),
                                    postings_location)
        if lists != reader.head.term_count:
            raise CorruptFile(postings_location, 0, f"holds {lists} posting lists, its terms "
                              f"file names {reader.head.term_count}")
    except BaseException:
        terms_handle.close()
        postings_handle.close()
        raise
    read = postings_handle.read

    def read_postings(slot: PostingsSlot) -> list[Posting]:
        lists = read_posting_record(read, slot.offset, slot.length, postings_location)
        return [Posting(doc_id, positions) for doc_id, positions in lists.pairs()]

    def read_columns(slot: PostingsSlot) -> PostingColumns:
        return posting_columns_at(read, postings_location, slot)

    return FrozenSegment(name, SegmentRows(reader, rows=rows), StoredTermDictionary(reader),
                         read_postings, read_columns)


def posting_columns_at(read: Callable[[int, int], bytes], location: str,
                       slot: PostingsSlot) -> PostingColumns:
    """The posting list at `slot` of a postings file read through `read`, as columns in
    the query path's shape: positions stay in their flat array until a shown row or a
    phrase needs them (`FlatPositions`). A loaded segment's lists and a merge's are read
    so."""
    lists = read_posting_record(read, slot.offset, slot.length, location)
    return PostingColumns(lists.doc_ids, lists.counts,
                          FlatPositions.of_counts(lists.positions, lists.counts))


def check_segment_rows(directory: Directory, entry: tuple,
                       documents: Mapping[int, DocumentRecord]) -> None:
    """Raise `CorruptFile` naming the terms file when the rows a segment's terms file holds
    are not the ones the manifest names for it (its first and last doc id and its row
    count): a terms file of another segment, or an older copy, put in its place.

    >>> check_segment_rows(None, ("segment-000001", 1, 2, 2), {1: None, 2: None})
    """
    found = (*segment_bounds(documents), len(documents)) if len(documents) else (None, None, 0)
    check_rows_found(directory, entry, found)


def check_rows_found(directory: Directory, entry: tuple,
                     found: tuple[int | None, int | None, int]) -> None:
    """`check_segment_rows` of the rows `found`: `(first doc id, last doc id, count)`."""
    name, first, last, count = entry[:4]
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
            segments: list[FrozenSegment] = []
            for entry in manifest.segments:
                previous = segments[-1] if segments else None
                segments.append(load_segment(directory, entry[0], previous))
            for entry, segment in zip(manifest.segments, segments, strict=True):
                _check_rows_when_read(directory, entry, segment.documents)
        except StoreError:
            if attempt + 1 == attempts or read_manifest(directory) == manifest:
                raise
            continue
        return InvertedIndex(
            segments,
            deleted=manifest.deleted,
            next_doc_id=manifest.next_doc_id,
            window_states=window_states_of(manifest.windows),
            generation=manifest.generation,
            statistics=manifest.statistics,
            deleted_runs=manifest.deleted_runs,
            indexing=manifest.indexing,
            config=config,
        )
    raise AssertionError("unreachable: the last attempt returns or raises")


def window_states_of(windows: Sequence[tuple[str, int, str | None, bool]]
                     ) -> dict[str, WindowIndexState]:
    """The index state of each window a manifest lists (`Manifest.windows`: session id,
    indexed seq, leaf, needs rebuild), each state made in C from its three fields
    (`WindowIndexState(*fields)` calls the `NamedTuple`'s Python `__new__` once a window:
    the clear version, and the oracle of this one).

    >>> window_states_of([("w1", 4, "m2", False), ("w2", -1, None, True)])
    {'w1': WindowIndexState(indexed_seq=4, leaf_event_id='m2', needs_rebuild=False), \
'w2': WindowIndexState(indexed_seq=-1, leaf_event_id=None, needs_rebuild=True)}
    """
    return dict(zip(map(itemgetter(0), windows),
                    map(_new_state, map(itemgetter(1, 2, 3), windows))))


#: A `WindowIndexState` made from the tuple of its three fields in C.
_new_state = partial(tuple.__new__, WindowIndexState)


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


def _stored_groups(previous: Segment | None) -> StoredGroups | None:
    """The previous segment's group table as stored, which a loaded one links to where
    it starts with it (`engine.codec.group_table`: no pair is made at open)."""
    if previous is not None and isinstance(previous.documents, SegmentRows):
        return previous.documents.head.stored_groups
    return None


def _check_rows_when_read(directory: Directory, entry: tuple,
                          documents: Mapping[int, DocumentRecord]) -> None:
    """`check_segment_rows`, now or, for a segment whose columns are not read yet and
    whose table spans the doc ids the manifest names, when they are first read (the
    same error then, `SegmentRows.check_rows`): a search need not read the columns of
    a segment whose rows it never reads, nor a writer to learn its size."""
    if isinstance(documents, SegmentRows) and not documents.columns_read and (
            documents.first, documents.end - 1) == tuple(entry[1:3]):
        documents.check_rows = partial(check_rows_found, directory, entry)
        documents.assume_rows(entry[3])  # checked with the rest when the columns are read
    else:
        check_segment_rows(directory, entry, documents)
