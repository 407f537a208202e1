"""The posting lists of a merge: every term of several segments with its live list.

Owns: walking the terms of the segments a merge rewrites, in order, and joining each
term's lists without the deleted rows. Must not touch: which segments are merged or where
the result is written (`engine.index.writer`), byte layouts (`engine.codec`).

`live_lists` is the clear version (every term looked up in every segment);
`merged_lists` walks each flushed segment's term records beside the others'
(`heapq.merge`) and reads each list from its postings file front to back through a
window of its own, so a merge holds one term's lists and a window a segment at a time,
never a file (`tests/index/test_index_structures.py` holds one to the other).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from itertools import groupby
from operator import itemgetter

from engine.directory import ReadHandle
from engine.index.loading import posting_columns_at
from engine.index.postings import (
    FlatPositions,
    PostingColumns,
    columns_without_deleted,
    concatenate_columns,
)
from engine.index.segment import FrozenSegment, Segment, read_posting_columns
from engine.index.stored_terms import PostingsSlot

#: One term's merged list: `(term, doc_ids, positions)`, or flat as the files hold it,
#: `(term, doc_ids, counts, positions)`.
MergedList = (tuple[str, Sequence[int], list[tuple[int, ...]]]
              | tuple[str, Sequence[int], Sequence[int], Sequence[int]])


def live_lists(segments: Sequence[Segment], deleted: set[int]) -> Iterator[MergedList]:
    """Every term of `segments` with its live postings as `(term, doc_ids, positions)`,
    or, when no row of it was dropped, `(term, doc_ids, counts, positions)` as the files
    hold them (flat: copied, never made into a tuple a row), in term order (terms left
    with none dropped). Lists are read without being cached by the segments, so a merge
    holds one term's lists at a time."""
    terms: set[str] = set()
    for segment in segments:
        terms.update(segment.terms())
    for term in sorted(terms):
        listed = live_list(term, concatenate_columns(
            [read_posting_columns(segment, term) for segment in segments]), deleted)
        if listed is not None:
            yield listed


def live_list(term: str, joined: PostingColumns, deleted: set[int]) -> MergedList | None:
    """One term's list of a merge without its deleted rows (None when none is left):
    flat when no row was dropped (copied, never made into a tuple a row)."""
    if deleted:
        joined = columns_without_deleted(joined, deleted)
    if not joined.doc_ids:
        return None
    positions = joined.positions
    if isinstance(positions, FlatPositions) and positions.dense:
        return term, joined.doc_ids, positions.counts, positions.values
    return term, joined.doc_ids, list(positions)


def merged_lists(
    sources: Sequence[tuple[FrozenSegment, ReadHandle, str]], deleted: set[int],
    read_ahead: int = 1 << 18,
) -> Iterator[MergedList]:
    """What `live_lists` yields for flushed segments, each given with its postings file
    open (`(segment, handle, location)`): only the lists a segment holds are read, in
    term order, each file `read_ahead` bytes at a time (`_read_ahead`)."""
    files = [(_read_ahead(handle, read_ahead), location) for _segment, handle, location in sources]
    walks = [_numbered(number, segment.term_slots())
             for number, (segment, _handle, _location) in enumerate(sources)]
    for term, group in groupby(heapq.merge(*walks), key=itemgetter(0)):
        parts = [posting_columns_at(*files[number], slot) for _term, number, slot in group]
        listed = live_list(term, concatenate_columns(parts), deleted)
        del parts  # the segments' lists, joined: not held while the merged list is written
        if listed is not None:
            yield listed
            del listed  # nor while the next term's lists are read


def _read_ahead(handle: ReadHandle, window: int) -> Callable[[int, int], bytes]:
    """`handle.read` for reads that move forward through the file: a read of fewer than
    `window` bytes outside the bytes held reads `window` bytes from its offset.

    >>> from engine.directory.handles import BytesReadHandle
    >>> read = _read_ahead(BytesReadHandle(b"0123456789", "x"), 4)
    >>> read(0, 2), read(2, 2), read(3, 3), read(1, 9)
    (b'01', b'23', b'345', b'123456789')
    """
    held = b""
    held_at = 0
    size = handle.size()

    def read(offset: int, length: int) -> bytes:
        nonlocal held, held_at
        start = offset - held_at
        if start < 0 or start + length > len(held):
            if length >= window:
                return handle.read(offset, length)
            held, held_at, start = handle.read(offset, min(window, size - offset)), offset, 0
        return held[start: start + length]

    return read


def _numbered(number: int, slots: Iterator[tuple[str, PostingsSlot]]
              ) -> Iterator[tuple[str, int, PostingsSlot]]:
    """`(term, number, slot)` for each of a segment's `slots` (its number in a merge)."""
    for term, slot in slots:
        yield term, number, slot
