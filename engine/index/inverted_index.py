"""The live inverted index: flushed segments, the buffer, tombstones and window states.

Owns: adding and deleting rows, the corpus statistics bm25 needs (row count `N` and total
tokens, exact), term lookup across segments, and the per-window index state of
`engine.index.lifecycle`. Must not touch: files (`engine.index.writer` persists and loads
an `InvertedIndex`), transcripts (the backend hands in `IndexEntry` values and analyzed
terms), query policy, scoring or ordering.

Statistics follow FTS5: `document_count` counts every live row of the whole index, in all
sessions and agents, including stale rows of windows that need a rebuild (they stay until
reconcile replaces them); deleted rows do not count. `total_tokens` sums the lengths of the
same rows, so `average_length = total_tokens / document_count` is FTS5's `avgdl`.

Deleting a row records its doc id as a tombstone; rows in the buffer are forgotten at the
next flush, rows in flushed segments when segments are merged.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from engine.index.cjk_grams import CjkGramIndex
from engine.index.documents import DocumentRecord
from engine.index.lifecycle import WindowIndexState
from engine.index.postings import (
    Posting,
    PostingColumns,
    columns_without_deleted,
    concatenate,
    concatenate_columns,
    without_deleted,
)
from engine.index.segment import Segment, segment_posting_columns
from engine.index.termdict import MAX_TERM_BYTES, index_term
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
        deleted: set[int] | None = None,
        next_doc_id: int = 0,
        window_states: dict[str, WindowIndexState] | None = None,
        generation: int = 0,
    ) -> None:
        self.segments: list[Segment] = list(segments)
        self.buffer = WriteBuffer()
        self.deleted: set[int] = set(deleted or ())
        self.next_doc_id = next_doc_id
        self.window_states: dict[str, WindowIndexState] = dict(window_states or {})
        #: The transcript-store generation whose changes this index reflects.
        self.generation = generation
        self._live: dict[int, DocumentRecord] = {}
        self._by_session: dict[str, set[int]] = {}
        self.total_tokens = 0
        self._cjk_grams: CjkGramIndex | None = None
        for segment in self.segments:
            for record in segment.documents.values():
                if record.doc_id not in self.deleted:
                    self._remember(record)

    # ----- rows ----------------------------------------------------------------------

    def _remember(self, record: DocumentRecord) -> None:
        self._live[record.doc_id] = record
        self._by_session.setdefault(record.session_id, set()).add(record.doc_id)
        self.total_tokens += record.length
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
        if terms and max(map(len, terms)) > _ALWAYS_SHORT:  # rare: a term that may need a cut
            terms = [index_term(term) for term in terms]
        self.buffer.add(record, terms)
        self._remember(record)
        return record

    def delete_document(self, doc_id: int) -> None:
        """Delete one live row (a tombstone until flush or merge drops it)."""
        record = self._live.pop(doc_id)
        rows = self._by_session[record.session_id]
        rows.discard(doc_id)
        if not rows:
            del self._by_session[record.session_id]
        self.total_tokens -= record.length
        if self._cjk_grams is not None:
            self._cjk_grams.remove(doc_id, record.text)
        self.deleted.add(doc_id)

    def delete_window_rows(self, session_id: str) -> int:
        """Delete every row of window `session_id`; return how many there were."""
        doc_ids = sorted(self._by_session.get(session_id, ()))
        for doc_id in doc_ids:
            self.delete_document(doc_id)
        return len(doc_ids)

    @property
    def cjk_grams(self) -> CjkGramIndex:
        """CJK character grams of the live rows (the fast path of the CJK retry).

        Built from the stored texts the first time a retry needs it (so opening a store
        and indexing stay free of it until then), then kept up to date with every added
        and deleted row. Memory only; never written.
        """
        if self._cjk_grams is None:
            grams = CjkGramIndex()
            for doc_id in sorted(self._live):
                grams.add(doc_id, self._live[doc_id].text)
            self._cjk_grams = grams
        return self._cjk_grams

    def replace_segments(self, segments: Sequence[Segment]) -> None:
        """After a flush or merge: these segments now hold every live row; empty buffer.

        The caller has already dropped the tombstones the new segments no longer need.
        """
        self.segments = list(segments)
        self.buffer = WriteBuffer()

    # ----- reading -------------------------------------------------------------------

    @property
    def document_count(self) -> int:
        """FTS5's `N`: live rows in the whole index."""
        return len(self._live)

    @property
    def average_length(self) -> float:
        """FTS5's `avgdl` (0 for an empty index)."""
        return self.total_tokens / self.document_count if self.document_count else 0.0

    def document(self, doc_id: int) -> DocumentRecord:
        """The live row `doc_id` (KeyError when deleted or unknown)."""
        return self._live[doc_id]

    def documents(self) -> Iterator[DocumentRecord]:
        """Every live row, in doc-id order."""
        for doc_id in sorted(self._live):
            yield self._live[doc_id]

    def window_doc_ids(self, session_id: str) -> list[int]:
        """The doc ids of window `session_id`'s live rows, increasing."""
        return sorted(self._by_session.get(session_id, ()))

    def indexed_session_ids(self) -> list[str]:
        """Every window that has at least one live row."""
        return sorted(self._by_session)

    def all_segments(self) -> list[Segment]:
        """Flushed segments in order, then the buffer."""
        return [*self.segments, self.buffer]

    def postings(self, term: str) -> list[Posting]:
        """The live posting list of `term` over the whole index, doc ids increasing."""
        lists = [segment.postings(term) for segment in self.all_segments()]
        joined = concatenate(lists)
        return without_deleted(joined, self.deleted) if self.deleted else joined

    def term_columns(self, term: str) -> PostingColumns:
        """`postings(term)` as columns (the fast query path; uncached here)."""
        parts = [segment_posting_columns(segment, term) for segment in self.all_segments()]
        joined = concatenate_columns(parts)
        return columns_without_deleted(joined, self.deleted) if self.deleted else joined

    def terms_with_prefix(self, prefix: str) -> list[str]:
        """Every term of any segment that starts with `prefix`, sorted, without repeats."""
        found: set[str] = set()
        for segment in self.all_segments():
            found.update(segment.terms_with_prefix(prefix))
        return sorted(found)
