"""The live inverted index: flushed segments, the buffer, tombstones and window states.

Owns: adding and deleting rows, the corpus statistics bm25 needs (row count `N` and total
tokens, exact), term lookup across segments, and the per-window index state of
`engine.index.lifecycle`. Must not touch: files (`engine.index.writer` persists and
`engine.index.loading` loads an `InvertedIndex`), transcripts (the backend hands in
`IndexEntry` values and analyzed terms), query policy, scoring or ordering.

Statistics follow FTS5: `document_count` counts every live row of the whole index, in all
sessions and agents, including stale rows of windows that need a rebuild (they stay until
reconcile replaces them); deleted rows do not count. `total_tokens` sums the lengths of the
same rows, so `average_length = total_tokens / document_count` is FTS5's `avgdl`.

Deleting a row records its doc id as a tombstone; rows in the buffer are forgotten at the
next flush, rows in flushed segments when segments are merged. A query's posting list
drops its tombstoned rows by a set lookup a row (the clear version) or, when the list is
long and `EngineConfig.tombstone_runs` allows, run by run (`term_columns`).

The search stage never reads an `InvertedIndex` itself: `view()` hands it the read-only
`engine.index.view.IndexView` of the current version.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from operator import sub

from engine.config import EngineConfig
from engine.index.cjk_grams import CjkGramIndex
from engine.index.documents import DocumentRecord
from engine.index.lifecycle import WindowIndexState
from engine.index.postings import (
    DeletedRuns,
    Posting,
    PostingColumns,
    columns_without_deleted,
    columns_without_runs,
    concatenate,
    concatenate_columns,
    without_deleted,
)
from engine.index.segment import Segment, segment_posting_columns, segment_statistics
from engine.index.segment_rows import SegmentRows, segment_bounds
from engine.index.termdict import MAX_TERM_BYTES, index_term
from engine.index.view import IndexView, index_version, next_view
from engine.index.window_states import WindowStates
from engine.index.write_buffer import WriteBuffer
from engine.model import IndexEntry

#: A term of at most this many code points is under FTS5's 32,768-byte cut (4 bytes each).
_ALWAYS_SHORT = MAX_TERM_BYTES // 4


def _encodable(text: str) -> bool:
    """Whether `text` has no lone surrogate (one C pass; `documents.fts_text` is the clear
    rule a row's text follows).

    >>> _encodable("déjà vu"), _encodable("a\\ud800b")
    (True, False)
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _may_need_a_cut(terms: Sequence[str]) -> bool:
    """Whether a term of `terms` is longer than `_ALWAYS_SHORT` code points (then
    `index_term` may cut it): `max(map(len, terms)) > _ALWAYS_SHORT`, the clear rule,
    asked only when the terms' lengths added up (one `join` in C, cheaper than `max`
    over a length a term) pass it.

    >>> _may_need_a_cut([]), _may_need_a_cut(["a"] * 9000), _may_need_a_cut(["a" * 9000])
    (False, False, True)
    """
    if len("".join(terms)) <= _ALWAYS_SHORT:
        return False
    return max(map(len, terms)) > _ALWAYS_SHORT


class InvertedIndex:
    """Segments in doc-id order, then the buffer; plus tombstones and window states.

    >>> index = InvertedIndex()
    >>> entry = IndexEntry("w1", "m1", "user", 5.0, "Hello hello", 0)
    >>> index.add_entry(entry, ["hello", "hello"]).doc_id
    0
    >>> index.document_count, index.total_tokens, index.postings("hello")
    (1, 2, [Posting(doc_id=0, positions=(0, 1))])
    >>> index.delete_window_rows("w1"), index.document_count
    (1, 0)
    """

    def __init__(
        self,
        segments: Sequence[Segment] = (),
        *,
        deleted: Iterable[int] = (),
        next_doc_id: int = 0,
        window_states: dict[str, WindowIndexState] | None = None,
        generation: int = 0,
        statistics: tuple[int, int] | None = None,
        deleted_runs: Iterable[range] | None = None,
        indexing: bool | None = None,
        config: EngineConfig | None = None,
    ) -> None:
        """`statistics` is `(document_count, total_tokens)` of the segments' live rows
        when the manifest recorded them; else they are summed from the segments.
        `deleted_runs`, when the manifest stored them, are `deleted` as ranges;
        `indexing` is the store's `indexing` flag at `generation` the manifest recorded
        (the owner of the store sets it before a flush; None: unknown). Of `config`,
        `tombstone_runs` and `tombstone_runs_factor` are read."""
        self.config = config or EngineConfig()
        self.segments: list[Segment] = list(segments)
        self.buffer = WriteBuffer()
        self.deleted: set[int] = set(deleted)
        self.next_doc_id = next_doc_id
        self.window_states = WindowStates(window_states or {})
        #: The transcript-store generation whose changes this index reflects.
        self.generation = generation
        #: The `indexing` flag at `generation`, for the manifest (see `__init__`).
        self.indexing = indexing
        self._segment_starts: list[int] = []
        #: Live doc ids by window session id, increasing (built when first needed).
        self._by_session: dict[str, array[int]] | None = None
        self._cjk_grams: CjkGramIndex | None = None
        self._view: IndexView | None = None
        self._deleted_runs = None if deleted_runs is None else DeletedRuns.of_ranges(deleted_runs)
        self._index_segment_starts()
        if statistics is not None:
            self._count, self.total_tokens = statistics
        else:
            self._count = -len(self.deleted)
            self.total_tokens = -self._stored_lengths(self.deleted)
            for segment in self.segments:
                rows, tokens = segment_statistics(segment)
                self._count += rows
                self.total_tokens += tokens

    # ----- rows ----------------------------------------------------------------------

    def _index_segment_starts(self) -> None:
        self._segment_starts = [segment_bounds(segment.documents)[0] if segment.documents
                                else self.next_doc_id for segment in self.segments]

    def _rows_holding(self, doc_id: int) -> Mapping[int, DocumentRecord]:
        """The rows of the only segment that can hold row `doc_id` (KeyError: none can)."""
        number = bisect_right(self._segment_starts, doc_id) - 1
        if number < 0:
            raise KeyError(doc_id)
        return self.segments[number].documents

    def _stored_row(self, doc_id: int) -> DocumentRecord:
        """Row `doc_id` of a segment or the buffer, deleted or not (KeyError: none)."""
        record = self.buffer.documents.get(doc_id)
        if record is not None:
            return record
        return self._rows_holding(doc_id)[doc_id]

    def _stored_lengths(self, doc_ids: set[int]) -> int:
        """The summed token counts of stored rows `doc_ids` (deleted or not), read from
        the segments' length columns without making records."""
        total = 0
        found = 0
        for segment in self.segments:
            documents = segment.documents
            if isinstance(documents, SegmentRows):
                first = documents.first
                inside = list(filter(range(first, documents.end).__contains__, doc_ids))
                if inside:  # a segment's table is read only when it holds one of them
                    lengths = documents.table.lengths
                    total += sum(map(lengths.__getitem__, map(sub, inside, repeat(first))))
                    found += len(inside)
        if found == len(doc_ids):
            return total
        in_tables = [segment.documents for segment in self.segments
                     if isinstance(segment.documents, SegmentRows)]
        return total + sum(self._stored_row(doc_id).length for doc_id in doc_ids
                           if not any(doc_id in rows for rows in in_tables))

    def session_ids_maybe_indexed(self) -> set[str]:
        """Every window session id that may have a live row: a superset of the windows
        that have one, read from the segments' group tables (no row is read)."""
        found: set[str] = set()
        for segment in self.segments:
            documents = segment.documents
            if isinstance(documents, SegmentRows):
                found.update(session_id for session_id, _role in documents.head.group_table)
            else:
                found.update(record.session_id for record in documents.values())
        found.update(record.session_id for record in self.buffer.documents.values())
        return found

    def _sessions(self) -> dict[str, array[int]]:
        """Live doc ids by window session id, increasing, made the first time a writer
        needs them: an `array('q')` a window, not a set of int objects (no object a
        row). Segments, then the buffer hold increasing doc ids, and a new row's doc id
        follows every other, so appending keeps each array sorted; a deleted row is
        found by bisection."""
        if self._by_session is None:
            by_session: dict[str, array[int]] = {}
            deleted = self.deleted
            for segment in [*self.segments, self.buffer]:
                documents = segment.documents
                if isinstance(documents, SegmentRows):
                    pairs = documents.doc_ids_by_session().items()
                else:
                    pairs = ((documents[doc_id].session_id, [doc_id])
                             for doc_id in sorted(documents))
                for session_id, doc_ids in pairs:
                    live = [doc_id for doc_id in doc_ids if doc_id not in deleted]
                    if live:
                        rows = by_session.get(session_id)
                        if rows is None:
                            by_session[session_id] = array("q", live)
                        elif live[0] > rows[-1]:
                            rows.extend(live)
                        else:  # not met: segments and the buffer follow in doc-id order
                            by_session[session_id] = array("q", sorted([*rows, *live]))
            self._by_session = by_session
        return self._by_session

    def _remember(self, record: DocumentRecord) -> None:
        self._count += 1
        self.total_tokens += record.length
        if self._by_session is not None:
            rows = self._by_session.get(record.session_id)
            if rows is None:
                self._by_session[record.session_id] = array("q", (record.doc_id,))
            else:
                rows.append(record.doc_id)  # the greatest doc id yet: stays sorted
        if self._cjk_grams is not None:
            self._cjk_grams.add(record.doc_id, record.text)

    def add_entry(self, entry: IndexEntry, terms: Sequence[str]) -> DocumentRecord:
        """Add one row for `entry` whose analyzed text is `terms`; return the new row."""
        text = entry.text
        if text.isascii() or _encodable(text):  # no lone surrogate: `fts_text` is a no-op
            record = DocumentRecord(self.next_doc_id, entry.session_id, entry.message_id,
                                    entry.role, entry.timestamp, text, len(terms), entry.seq)
        else:
            record = DocumentRecord.from_entry(self.next_doc_id, entry, len(terms))
        self.next_doc_id += 1
        if _may_need_a_cut(terms):  # rare: a term that may need a cut
            terms = [index_term(term) for term in terms]
        self.buffer.add(record, terms)
        self._remember(record)
        return record

    def delete_document(self, doc_id: int) -> None:
        """Delete one live row (a tombstone until flush or merge drops it)."""
        record = self.document(doc_id)
        if self._by_session is not None:
            rows = self._by_session[record.session_id]
            position = bisect_left(rows, doc_id)
            if position < len(rows) and rows[position] == doc_id:
                del rows[position]
            if not rows:
                del self._by_session[record.session_id]
        self._forget(doc_id, record.length)

    def _forget(self, doc_id: int, length: int) -> None:
        """Tombstone live row `doc_id` of `length` tokens (its window's doc ids are the
        caller's); its text is read only for the CJK grams, when they are kept."""
        self._count -= 1
        self.total_tokens -= length
        if self._cjk_grams is not None:
            self._cjk_grams.remove(doc_id, self.text(doc_id))
        self.deleted.add(doc_id)
        self._deleted_runs = None

    def _live_length(self, doc_id: int) -> int:
        """`self.document(doc_id).length`, a flushed row's read from its segment's table
        without making its record (which would read its text record into the segment's
        cache): a window's rows are deleted without reading their texts."""
        if doc_id in self.deleted:
            raise KeyError(doc_id)
        record = self.buffer.documents.get(doc_id)
        if record is not None:
            return record.length
        documents = self._rows_holding(doc_id)
        if isinstance(documents, SegmentRows):
            return documents.length_of(doc_id)
        return documents[doc_id].length

    def delete_window_rows(self, session_id: str) -> int:
        """Delete every row of window `session_id`; return how many there were."""
        sessions = self._sessions()
        doc_ids = sessions.get(session_id)
        if doc_ids is None:
            return 0
        try:
            for doc_id in doc_ids:
                self._forget(doc_id, self._live_length(doc_id))
        except BaseException:
            self._by_session = None  # made again from the rows when next needed
            raise
        del sessions[session_id]
        return len(doc_ids)

    def deleted_runs(self) -> DeletedRuns:
        """The tombstones as runs (from the manifest when it stored them, else made
        from `deleted` and kept until the next delete).

        A flush or merge only removes tombstones (of rows no segment holds any more;
        doc ids are never reused), so runs made before it stay a safe filter: the ids
        they still name are in no posting list.
        """
        if self._deleted_runs is None:
            self._deleted_runs = DeletedRuns.of(self.deleted)
        return self._deleted_runs

    @property
    def cjk_grams(self) -> CjkGramIndex:
        """CJK character grams of the live rows (the fast path of the CJK retry).

        Built from the stored texts the first time a retry needs it (so opening a store
        and indexing stay free of it until then), then kept up to date with every added
        and deleted row. Memory only; never written.
        """
        if self._cjk_grams is None:
            grams = CjkGramIndex()
            for doc_id in self.live_doc_ids():
                grams.add(doc_id, self.text(doc_id))
            self._cjk_grams = grams
        return self._cjk_grams

    def replace_segments(self, segments: Sequence[Segment], *, keep_buffer: bool = False) -> None:
        """After a flush or merge: these segments now hold every live row; empty buffer
        (with `keep_buffer`, after a merge of segments only: they hold every live row
        but the buffer's, which stays).

        The caller has already dropped the tombstones the new segments no longer need.
        """
        self.segments = list(segments)
        if not keep_buffer:
            self.buffer = WriteBuffer()
        self._index_segment_starts()

    def absorb(self, pending: InvertedIndex) -> None:
        """Take over every row of `pending`, an index started at this one's
        `next_doc_id` (so its doc ids follow all of this one's), segments, buffer and
        tombstones: what an open transaction indexed, once it committed
        (`engine.backends.reference.streaming`). This index's buffer must be empty, so
        that its rows stay in doc-id order (segments, then the buffer). Window states
        are the caller's to move.
        """
        if len(self.buffer) or pending.next_doc_id < self.next_doc_id:
            raise ValueError("internal error: rows absorbed behind a non-empty buffer or "
                             "before this index's doc ids")
        if pending.segments and pending.segments[0].documents and segment_bounds(
                pending.segments[0].documents)[0] < self.next_doc_id:
            raise ValueError("internal error: absorbed rows overlap this index's doc ids")
        self.segments.extend(pending.segments)
        self.buffer = pending.buffer
        self.deleted |= pending.deleted
        self._deleted_runs = None
        self.next_doc_id = pending.next_doc_id
        self._count += pending.document_count
        self.total_tokens += pending.total_tokens
        self._by_session = None
        self._cjk_grams = None
        self._index_segment_starts()

    # ----- reading -------------------------------------------------------------------

    def view(self) -> IndexView:
        """The read-only view of the index as it is now: the same object until the rows or
        the generation change (`engine.index.view`). Search reads the index through it."""
        view = self._view
        if view is None or view.version != index_version(self):
            view = self._view = next_view(self, view)
        return view

    @property
    def document_count(self) -> int:
        """FTS5's `N`: live rows in the whole index."""
        return self._count

    @property
    def average_length(self) -> float:
        """FTS5's `avgdl` (0 for an empty index)."""
        return self.total_tokens / self._count if self._count else 0.0

    def document(self, doc_id: int) -> DocumentRecord:
        """The live row `doc_id` (KeyError when deleted or unknown)."""
        if doc_id in self.deleted:
            raise KeyError(doc_id)
        return self._stored_row(doc_id)

    def is_live(self, doc_id: int) -> bool:
        """Whether `doc_id` is a live row (no record is made)."""
        if doc_id in self.deleted:
            return False
        if doc_id in self.buffer.documents:
            return True
        number = bisect_right(self._segment_starts, doc_id) - 1
        return number >= 0 and doc_id in self.segments[number].documents

    def text(self, doc_id: int) -> str:
        """The text of live row `doc_id` (read from its segment's file when flushed)."""
        record = self.buffer.documents.get(doc_id)
        if record is not None and doc_id not in self.deleted:
            return record.text
        if doc_id in self.deleted:
            raise KeyError(doc_id)
        documents = self._rows_holding(doc_id)
        if isinstance(documents, SegmentRows):
            return documents.text_of(doc_id)
        return documents[doc_id].text

    def texts(self, doc_ids: Sequence[int]) -> list[str]:
        """The texts of live rows `doc_ids` (increasing): `[self.text(d) for d in doc_ids]`,
        reading each segment's text records once."""
        texts: list[str] = []
        start = 0
        for segment in self.segments:
            documents = segment.documents
            end = documents.end if isinstance(documents, SegmentRows) else (
                segment_bounds(documents)[1] + 1 if documents else 0)
            stop = bisect_left(doc_ids, end, start)
            chunk = doc_ids[start:stop]
            if isinstance(documents, SegmentRows):
                texts.extend(documents.texts_of(chunk))
            else:
                texts.extend(documents[doc_id].text for doc_id in chunk)
            start = stop
        texts.extend(self.buffer.documents[doc_id].text for doc_id in doc_ids[start:])
        return texts

    def live_doc_ids(self) -> Iterator[int]:
        """Every live row's doc id, increasing (no records are made)."""
        deleted = self.deleted
        for segment in [*self.segments, self.buffer]:
            documents = segment.documents
            ids: Iterable[int] = documents if isinstance(documents, SegmentRows) else sorted(documents)
            if deleted:
                yield from (doc_id for doc_id in ids if doc_id not in deleted)
            else:
                yield from ids

    def documents(self) -> Iterator[DocumentRecord]:
        """Every live row, in doc-id order."""
        for segment in [*self.segments, self.buffer]:
            documents = segment.documents
            ids = documents if isinstance(documents, SegmentRows) else sorted(documents)
            for doc_id in ids:
                if doc_id not in self.deleted:
                    yield documents[doc_id]

    def window_doc_ids(self, session_id: str) -> list[int]:
        """The doc ids of window `session_id`'s live rows, increasing."""
        return list(self._sessions().get(session_id, ()))

    def all_segments(self) -> list[Segment]:
        """Flushed segments in order, then the buffer."""
        return [*self.segments, self.buffer]

    def postings(self, term: str) -> list[Posting]:
        """The live posting list of `term` over the whole index, doc ids increasing."""
        lists = [segment.postings(term) for segment in self.all_segments()]
        joined = concatenate(lists)
        return without_deleted(joined, self.deleted) if self.deleted else joined

    def term_columns(self, term: str) -> PostingColumns:
        """`postings(term)` as columns (the fast query path; uncached here).

        With `config.tombstone_runs`, a list longer than `config.tombstone_runs_factor`
        times the tombstone runs drops its deleted rows run by run
        (`columns_without_runs`); any other one row by row (`columns_without_deleted`,
        the clear version).
        """
        parts = [segment_posting_columns(segment, term) for segment in self.all_segments()]
        joined = concatenate_columns(parts)
        if not self.deleted:
            return joined
        config = self.config
        if config.tombstone_runs and (
                len(joined) > config.tombstone_runs_factor * len(self.deleted_runs().starts)):
            return columns_without_runs(joined, self.deleted_runs())
        return columns_without_deleted(joined, self.deleted)

    def terms_with_prefix(self, prefix: str) -> list[str]:
        """Every term of any segment that starts with `prefix`, sorted, without repeats."""
        found: set[str] = set()
        for segment in self.all_segments():
            found.update(segment.terms_with_prefix(prefix))
        return sorted(found)
