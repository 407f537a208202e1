"""Structural invariants of an `InvertedIndex`, callable from any test; never repairs.

Owns: the list of invariants and the wording of each violation. Must not touch: files,
transcripts (the caller may pass `row_source`, a lookup of the entry a transcript event
yields, to check that every row points at a message that exists), search.

Invariants (the FTS5 `integrity-check` and sortedcontainers `_check()` idea):

1. every segment's terms strictly increase;
2. in every posting list, doc ids strictly increase, each doc id belongs to the segment's
   document table, each position list is non-empty and strictly increasing, and every
   position is below the row's length;
3. every row's positions, over all its terms, are exactly `0 .. length - 1` (each token
   position holds one term);
4. segments hold disjoint, increasing doc-id ranges, all below `next_doc_id`, and the
   buffer's ids come after every flushed one;
5. tombstones name rows that exist; `document_count` (N) and `total_tokens` equal the
   count and the summed lengths of the live rows;
6. with `row_source`: every live row's `(session_id, seq)` yields an entry with the same
   message id, role, timestamp and text (no row points at a missing message), unless
   the row's window needs a rebuild (stale rows of dirty windows are allowed to differ,
   but must still point at an existing event).

Cost: O(total postings), since every posting list of every segment is read.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from engine.index.documents import fts_text
from engine.index.inverted_index import InvertedIndex
from engine.index.segment import Segment
from engine.model import IndexEntry

#: `(session_id, seq) -> (event exists, entry it yields or None)`
RowSource = Callable[[str, int], tuple[bool, IndexEntry | None]]


def _check_segment(segment: Segment, problems: list[str]) -> dict[int, list[int]]:
    """Invariants 1–2 for one segment; returns every row's positions seen."""
    seen: dict[int, list[int]] = {doc_id: [] for doc_id in segment.documents}
    previous_term: str | None = None
    for term in segment.terms():
        if previous_term is not None and term <= previous_term:
            problems.append(f"{segment.name}: term {term!r} does not follow {previous_term!r}")
        previous_term = term
        previous_doc = -1
        for posting in segment.postings(term):
            where = f"{segment.name}: term {term!r} doc {posting.doc_id}"
            if posting.doc_id <= previous_doc:
                problems.append(f"{where}: doc ids not increasing")
            previous_doc = posting.doc_id
            record = segment.documents.get(posting.doc_id)
            if record is None:
                problems.append(f"{where}: no such row in the segment")
                continue
            positions = posting.positions
            if not positions:
                problems.append(f"{where}: empty position list")
            if any(later <= earlier for earlier, later in itertools.pairwise(positions)):
                problems.append(f"{where}: positions not increasing")
            if positions and (positions[0] < 0 or positions[-1] >= record.length):
                problems.append(f"{where}: position outside 0..{record.length - 1}")
            seen[posting.doc_id].extend(positions)
    return seen


def check_index(index: InvertedIndex, row_source: RowSource | None = None) -> list[str]:
    """Every violated invariant, as readable lines (an empty list: all hold)."""
    problems: list[str] = []
    all_rows: dict[int, object] = {}
    previous_last = -1
    for segment in index.all_segments():
        doc_ids = sorted(segment.documents)
        if doc_ids and doc_ids[0] <= previous_last:
            problems.append(f"{segment.name}: doc ids overlap or precede an earlier segment")
        if doc_ids:
            previous_last = doc_ids[-1]
            if doc_ids[-1] >= index.next_doc_id:
                problems.append(f"{segment.name}: doc id {doc_ids[-1]} >= next_doc_id")
        for doc_id, positions in _check_segment(segment, problems).items():
            record = segment.documents[doc_id]
            all_rows[doc_id] = record
            if sorted(positions) != list(range(record.length)):
                problems.append(
                    f"{segment.name}: doc {doc_id} positions do not cover 0..{record.length - 1}"
                )
    for doc_id in sorted(index.deleted):
        if doc_id not in all_rows:
            problems.append(f"tombstone {doc_id} names no row")
    live = [record for doc_id, record in all_rows.items() if doc_id not in index.deleted]
    if index.document_count != len(live):
        problems.append(f"N is {index.document_count}, live rows are {len(live)}")
    total = sum(record.length for record in live)  # type: ignore[attr-defined]
    if index.total_tokens != total:
        problems.append(f"total tokens is {index.total_tokens}, live rows hold {total}")
    if row_source is not None:
        problems.extend(_check_rows(index, row_source))
    return problems


def _check_rows(index: InvertedIndex, row_source: RowSource) -> list[str]:
    """Invariant 6: each live row points at an existing message with the same fields."""
    problems = []
    for record in index.documents():
        exists, entry = row_source(record.session_id, record.seq)
        where = f"row {record.doc_id} ({record.session_id} seq {record.seq})"
        if not exists:
            problems.append(f"{where}: points at a missing message")
            continue
        state = index.window_states.get(record.session_id)
        if state is not None and state.needs_rebuild:
            continue
        if entry is None:
            problems.append(f"{where}: its event yields no searchable message")
        elif (entry.message_id, entry.role, entry.timestamp, fts_text(entry.text)) != (
            record.message_id, record.role, record.timestamp, record.text
        ):
            problems.append(f"{where}: differs from its message {entry.message_id!r}")
    return problems
