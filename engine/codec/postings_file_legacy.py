"""Posting lists of postings-file layout 1 (delta-coded blocks), read only.

Owns: the msgpack value of a layout-1 posting list, and turning one into columns.
Must not touch: files, framing (`engine.codec.postings_file` reads records and calls
this for a record that is not layout 2). Layout 1 is never written by the engine; its
encoder stays as the recipe of the committed compat fixtures and as the tests' way to
make such lists.

Grammar (the payload of one record of a postings file, written before issue 5)::

    list_value := [block, ...]
    block      := [last_doc_id, doc_gaps, position_gaps]
                  doc_gaps: one int per document of the block; the document ids are
                    the running sum of the gaps, continuing from the previous block's
                    last_doc_id (0 before the first block), so gaps are > 0 except
                    that the first gap of the list may be 0;
                  position_gaps: one array per document, its token positions as a
                    running sum (first entry absolute, then gaps > 0)
                  every block but the last holds exactly `block_size` documents
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import accumulate
from operator import sub
from typing import Any

from engine.codec.framing import DecodeError

#: A decoded posting list: `(doc_id, positions)` pairs, doc ids increasing.
PostingPairs = list[tuple[int, tuple[int, ...]]]


def _running_gaps(values: Sequence[int], start: int = 0) -> list[int]:
    """Each value minus the one before it (the first minus `start`); `values` non-empty.

    >>> _running_gaps([3, 4, 9], 1), _running_gaps((5,))
    ([2, 1, 5], [5])
    """
    return [values[0] - start, *map(sub, values[1:], values)]


def _running_sum(gaps: Iterable[int], start: int = 0) -> list[int]:
    values = []
    total = start
    for gap in gaps:
        total += gap
        values.append(total)
    return values


def encode_posting_columns(
    doc_ids: Sequence[int], positions: Sequence[Sequence[int] | int], block_size: int
) -> Any:
    """The msgpack value of one posting list given as two parallel columns: the doc ids
    (increasing) and each document's positions (increasing; a bare int means that one
    position, as the index's write buffer keeps single positions).

    A block's first doc gap continues from the previous block's last doc id, so the gaps
    of the whole list are computed once and cut into blocks.

    >>> encode_posting_columns([3, 7, 9], [[0, 4], 2, [1, 2, 3]], block_size=2)
    [[7, [3, 4], [[0, 4], [2]]], [9, [2], [[1, 1, 1]]]]
    >>> encode_posting_columns([], [], block_size=2)
    []
    """
    count = len(doc_ids)
    if count <= 1:  # most terms of a segment occur in one row
        if not count:
            return []
        item = positions[0]
        gaps = ([item] if item.__class__ is int
                else [item[0], *map(sub, item[1:], item)])  # type: ignore[index,arg-type]
        return [[doc_ids[0], [doc_ids[0]], [gaps]]]
    # `_running_gaps`, inlined: this runs once per posting of every flushed row
    doc_gaps = [doc_ids[0], *map(sub, doc_ids[1:], doc_ids)]
    position_gaps = [
        [item] if item.__class__ is int
        else [item[0], *map(sub, item[1:], item)]  # type: ignore[index,arg-type]
        for item in positions
    ]
    if count <= block_size:
        return [[doc_ids[-1], doc_gaps, position_gaps]]
    return [
        [doc_ids[min(begin + block_size, count) - 1], doc_gaps[begin: begin + block_size],
         position_gaps[begin: begin + block_size]]
        for begin in range(0, count, block_size)
    ]


def encode_posting_list(
    postings: Sequence[tuple[int, Sequence[int] | int]], block_size: int
) -> Any:
    """The msgpack value of one posting list of `(doc_id, positions)` pairs.

    >>> encode_posting_list([(3, [0, 4]), (7, [2]), (9, [1, 2, 3])], block_size=2)
    [[7, [3, 4], [[0, 4], [2]]], [9, [2], [[1, 1, 1]]]]
    >>> encode_posting_list([(3, 5)], 2) == encode_posting_list([(3, [5])], 2)
    True
    """
    return encode_posting_columns(
        [doc_id for doc_id, _positions in postings],
        [positions for _doc_id, positions in postings],
        block_size,
    )


def decode_posting_list(value: Any) -> PostingPairs:
    """The posting list of a decoded record value (DecodeError on any inconsistency).

    The running sums use `itertools.accumulate` (C); `_running_sum` is the clear version.
    The checks are `decode_posting_columns`'s.

    >>> decode_posting_list(encode_posting_list([(3, [0, 4]), (7, [2])], 1))
    [(3, (0, 4)), (7, (2,))]
    """
    doc_ids, _counts, gaps = decode_posting_columns(value)
    return list(zip(doc_ids, map(tuple, map(accumulate, gaps))))


def decode_posting_columns(value: Any) -> tuple[list[int], list[int], list[list[int]]]:
    """A record value as columns: doc ids, position counts, and each document's position
    gaps left undecoded (a query sums them only for the rows it shows). Raises
    DecodeError on any inconsistency (these are the checks of `decode_posting_list` too).

    >>> decode_posting_columns(encode_posting_list([(3, [0, 4]), (7, [2])], 1))
    ([3, 7], [2, 1], [[0, 4], [2]])
    """
    if not isinstance(value, list):
        raise DecodeError("posting list is not an array of blocks")
    doc_ids: list[int] = []
    gaps: list[list[int]] = []
    previous_doc = 0
    for block in value:
        if not (isinstance(block, list) and len(block) == 3):
            raise DecodeError("posting block is not [last_doc_id, doc_gaps, position_gaps]")
        last_doc_id, doc_gaps, position_gaps = block
        if not (isinstance(doc_gaps, list) and isinstance(position_gaps, list)):
            raise DecodeError("posting block gaps are not arrays")
        if not doc_gaps or len(doc_gaps) != len(position_gaps):
            raise DecodeError("posting block has mismatched document and position counts")
        block_ids = list(accumulate(doc_gaps, initial=previous_doc))
        del block_ids[0]
        if block_ids[-1] != last_doc_id:
            raise DecodeError(f"posting block ends at doc {block_ids[-1]}, header says {last_doc_id}")
        if set(map(type, position_gaps)) != {list} or not all(position_gaps):
            for doc_id, positions in zip(block_ids, position_gaps):
                if not isinstance(positions, list) or not positions:
                    raise DecodeError(f"document {doc_id} has no positions")
        doc_ids.extend(block_ids)
        gaps.extend(position_gaps)
        previous_doc = last_doc_id
    return doc_ids, list(map(len, gaps)), gaps
