"""The postings file of an index segment: one posting list per term, delta-coded in blocks.

Owns: the bytes of `index/segment-NNNNNN.postings`. Must not touch: files (the index
writer stores what this module returns), terms (the terms file maps each term to the
byte range of its record here). Whole files are read with `framing.decode_sealed_frames`.

Byte grammar (a `framing` file of kind `postings`)::

    postings file := header(magic "SS.POSTS") list_record* footer
    list_record   := one framed record per term, in term order; its payload is
                     [block, ...]                      (msgpack array)
    block         := [last_doc_id, doc_gaps, position_gaps]
                     doc_gaps: one int per document of the block; the document ids are
                       the running sum of the gaps, continuing from the previous block's
                       last_doc_id (0 before the first block), so gaps are > 0 except
                       that the first gap of the list may be 0;
                     position_gaps: one array per document, its token positions as a
                       running sum (first entry absolute, then gaps > 0)
                     every block but the last holds exactly `block_size` documents

`last_doc_id` lets a reader skip a block whose documents all precede the one it wants;
the reference reader decodes whole lists (they are small), so it only checks it.
Opening a file checks its header, footer and the CRC of all its records
(`check_postings_file`); a record's own CRC and its list's structure are checked when the
list is first decoded. (Format unchanged: version 1.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate
from operator import sub
from typing import Any

from engine.codec import FILE_KINDS
from engine.codec.framing import (
    FOOTER_SIZE,
    HEADER_SIZE,
    RECORD_HEAD_SIZE,
    DecodeError,
    decode_footer_at_end,
    decode_frame_at,
    decode_header,
    decode_payload,
    decode_sealed_frames,
    encode_footer,
    encode_header,
    encode_record,
    update_crc,
)
from engine.errors import CorruptFile, StoreError

MAGIC = FILE_KINDS["postings"].magic

#: `read(offset, length)`: exactly that many bytes of the file (StoreError otherwise).
ReadFunction = Callable[[int, int], bytes]
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


def encode_postings_file(
    lists: Iterable[tuple[str, Sequence[tuple[int, Sequence[int] | int]]]], block_size: int
) -> tuple[bytes, dict[str, tuple[int, int, int]]]:
    """The whole file, and `{term: (document_frequency, offset, length)}` of each record.

    `lists` is every `(term, [(doc_id, positions), ...])` in term order.

    >>> data, slots = encode_postings_file([("a", [(0, [1])]), ("b", [(0, [0]), (2, [5])])], 128)
    >>> read = lambda offset, length: data[offset: offset + length]
    >>> slots["b"][0], decode_postings_record(read, *slots["b"][1:], "x")
    (2, [(0, (0,)), (2, (5,))])
    """
    return encode_postings_file_of_columns(
        (
            (term, [doc_id for doc_id, _ in postings], [positions for _, positions in postings])
            for term, postings in lists
        ),
        block_size,
    )


def encode_postings_file_of_columns(
    lists: Iterable[tuple[str, Sequence[int], Sequence[Sequence[int] | int]]], block_size: int
) -> tuple[bytes, dict[str, tuple[int, int, int]]]:
    """`encode_postings_file` for lists given as `(term, doc_ids, positions)` columns
    (see `encode_posting_columns`); the same bytes.

    >>> encode_postings_file_of_columns([("a", [0, 2], [1, [0, 3]])], 128) == (
    ...     encode_postings_file([("a", [(0, [1]), (2, [0, 3])])], 128))
    True
    """
    parts = [encode_header(MAGIC)]
    offset = HEADER_SIZE
    slots: dict[str, tuple[int, int, int]] = {}
    for term, doc_ids, positions in lists:
        record = encode_record(encode_posting_columns(doc_ids, positions, block_size))
        slots[term] = (len(doc_ids), offset, len(record))
        parts.append(record)
        offset += len(record)
    records = b"".join(parts[1:])
    return parts[0] + records + encode_footer(len(slots), update_crc(0, records)), slots


def _record_value(read: ReadFunction, offset: int, length: int, location: str) -> Any:
    """The msgpack value of the framed record of `length` bytes at `offset`."""
    try:
        frame = decode_frame_at(read(offset, length), 0)
        if frame.length + RECORD_HEAD_SIZE != length:
            raise DecodeError("record length disagrees with the term dictionary")
        return decode_payload(frame.payload)
    except (DecodeError, StoreError) as error:
        if isinstance(error, CorruptFile):
            raise
        raise CorruptFile(location, offset, str(error)) from None


def decode_postings_record(
    read: ReadFunction, offset: int, length: int, location: str
) -> PostingPairs:
    """The posting list whose record is the `length` bytes at `offset`, read with
    `read(offset, length)` (CorruptFile on damage, naming the offset)."""
    value = _record_value(read, offset, length, location)
    try:
        return decode_posting_list(value)
    except DecodeError as error:
        raise CorruptFile(location, offset, str(error)) from None


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


def decode_postings_columns_record(
    read: ReadFunction, offset: int, length: int, location: str
) -> tuple[list[int], list[int], list[list[int]]]:
    """`decode_posting_columns` of the record of `length` bytes at `offset`."""
    value = _record_value(read, offset, length, location)
    try:
        return decode_posting_columns(value)
    except DecodeError as error:
        raise CorruptFile(location, offset, str(error)) from None


def check_postings_ends(read: ReadFunction, size: int, location: str) -> int:
    """Check a postings file's header and footer only; return its list count.

    What opening a segment checks (issue 5: the index is read lazily, not loaded whole);
    each record's CRC and structure are checked when its list is first read, and
    `check_postings_file` checks every byte (`verify`).
    """
    if size < HEADER_SIZE + FOOTER_SIZE:
        raise CorruptFile(location, 0, "postings file is too short")
    if decode_header(read(0, HEADER_SIZE), location).magic != MAGIC:
        raise CorruptFile(location, 0, "not a postings file")
    footer = decode_footer_at_end(read(size - FOOTER_SIZE, FOOTER_SIZE))
    if footer is None:
        raise CorruptFile(location, size - FOOTER_SIZE, "postings file has no intact footer")
    return footer.record_count


def check_postings_file(data: bytes, location: str, *, decode_lists: bool = False) -> int:
    """Check a whole postings file; return the list count.

    Always: the header, the footer, and that the records' bytes are the ones the footer's
    CRC seals, so any damaged byte is found here. That takes one `zlib.crc32` over the
    records (C); only when it fails are the records walked one by one, to name the first
    damaged offset. With `decode_lists`, also every record's frame and the structure of
    every posting list (msgpack value, blocks, gaps). Opening a segment leaves those to
    the first read of each list (`decode_postings_record` checks that record's CRC and
    structure and raises the same CorruptFile), so an open costs a CRC pass over the
    file, not a decode of every list (issue 5: 4 s of the reopen time at 100k messages).
    """
    if not decode_lists:
        header = decode_header(data, location)
        footer = decode_footer_at_end(data)
        if (
            header.magic == MAGIC
            and footer is not None
            and footer.offset >= HEADER_SIZE
            and update_crc(0, memoryview(data)[HEADER_SIZE: footer.offset]) == footer.records_crc
        ):
            return footer.record_count
    frames = decode_sealed_frames(data, location, MAGIC)
    if decode_lists:
        for frame in frames:
            decode_postings_record(lambda offset, length: data[offset: offset + length],
                                   frame.offset, frame.length + RECORD_HEAD_SIZE, location)
    return len(frames)


def describe_payload(value: Any) -> dict[str, Any]:
    """A readable dict of one posting-list record, for `session-search dump`."""
    pairs = decode_posting_list(value)
    return {
        "kind": "postings",
        "documents": len(pairs),
        "postings": [[doc_id, list(positions)] for doc_id, positions in pairs],
    }
