"""`IndexView`: the read-only face of the index at one version, the only thing search reads.

Owns: what a query may read from an `InvertedIndex` (rows, texts, posting lists, the
corpus statistics of bm25, window states, the row columns) and the per-version caches of
what is derived from them (term columns, impact orders, token bitmaps), and reading the
row tables of the segments whose rows a query names (`_read_tables_of`: until then an
unread segment's rows in the row columns are placeholders). Must not touch: writes of
any kind, scope rules, scoring, orders, excerpts (the search stage, `engine.search`,
does those with what it reads here).

The index hands out one view per version (`InvertedIndex.view()`): the same object while
nothing changes, a new one after any change. A version is `(generation, next_doc_id,
document_count, total_tokens)`: adding a row raises `next_doc_id`, deleting one lowers
`document_count` with `next_doc_id` unchanged, so two different live sets of one index
never share a version; a commit that adds no row still moves `generation`. Flushes and
merges keep the live set, so they keep the version.

A view is valid while its index stays at its version. The statistics are copied into the
view, but its reads go to the index, and the row columns are shared with the next view
(row records never change and doc ids are never reused, so the next view only extends
them with the new doc ids and drops deleted rows from the row lists). The search stage
takes a view at the start of a query and drops it at the end, so this holds.

Costs: a view's row columns are brought up to its version the first time a query reads
them (`rows`), O(new rows) (`RowColumns.extend`): a one-word query whose term the index
does not hold reads none, so opening a store for one such search fills no column (each
partition of a store that does not hold the word skips them). Only rows of flushed
segments wait so (`buffered_rows_uncovered`). The term cache
holds the columns of the terms queried at this version of the rows (at most
`CACHED_TERMS`; a segment keeps its own decoded lists, so a refill is a concatenation, not
a decode), and beside it the impact cache their rows grouped by `(f, D)`
(`engine.index.impact_order`), made when a one-word query first asks, and the bitmaps of
the tokens of phrases over the rows laid end to end (`engine.index.token_bitmaps`), made
when a phrase of common tokens first asks (O(rows) for the line, O(line + positions) a
token; at most `CACHED_BITMAP_SLOTS` slots in all).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar

from engine.index.documents import DocumentRecord
from engine.index.impact_order import ImpactOrder
from engine.index.lifecycle import WindowIndexState
from engine.index.postings import EMPTY_COLUMNS, Posting, PostingColumns
from engine.index.row_columns import RowColumns
from engine.index.segment_rows import SegmentRows
from engine.index.termdict import index_term
from engine.light_values import FrozenValue

if TYPE_CHECKING:
    from engine.index.inverted_index import InvertedIndex
    from engine.index.token_bitmaps import TokenLine

#: The term cache is emptied when it reaches this many entries.
CACHED_TERMS = 1024
#: The token bitmaps a view keeps hold at most this many slots (bits) in all.
CACHED_BITMAP_SLOTS = 1 << 28


def index_version(index: InvertedIndex) -> tuple[int, int, int, int]:
    """What changes whenever the live rows or the generation of `index` change."""
    return (index.generation, index.next_doc_id, index.document_count, index.total_tokens)


class IndexView(FrozenValue):
    """The live rows of one `InvertedIndex` at one version (module docstring).

    A frozen value with `__slots__` (`engine.light_values.FrozenValue`), equal only to itself,
    rather than a frozen dataclass: every search makes this class, and a dataclass's costs
    many times a plain class's to make.

    >>> from engine.index.inverted_index import InvertedIndex
    >>> from engine.model import IndexEntry
    >>> index = InvertedIndex()
    >>> _ = index.add_entry(IndexEntry("w1", "m1", "user", 5.0, "a b a", 0), ["a", "b", "a"])
    >>> view = index.view()
    >>> view is index.view(), view.document_count, view.average_length
    (True, 1, 3.0)
    >>> view.term_columns("a", prefix=False).positions_of(0), list(view.rows.lengths)
    ((0, 2), [3])
    >>> _ = index.add_entry(IndexEntry("w1", "m2", "user", 6.0, "b", 1), ["b"])
    >>> newer = index.view()
    >>> newer is view, newer.document_count, list(newer.rows.lengths)
    (False, 2, [3, 1])
    >>> newer.version = (0, 0, 0, 0)
    Traceback (most recent call last):
    ...
    dataclasses.FrozenInstanceError: cannot assign to field 'version'
    """

    __slots__ = ("_bitmaps", "_impacts", "_index", "_line", "_rows", "_rows_filled", "_terms",
                 "version")
    #: The constructor's arguments, in order (a copy is made again from them).
    _compared = ("_index", "version", "_rows", "_terms", "_impacts", "_bitmaps", "_line",
                 "_rows_filled")

    _index: InvertedIndex
    version: tuple[int, int, int, int]
    #: The per-row columns (`rows`), shared with the views before and after this one.
    _rows: RowColumns
    _terms: dict[tuple[str, bool], PostingColumns]
    _impacts: dict[tuple[str, bool], ImpactOrder]
    _bitmaps: dict[tuple[str, bool], int]
    _line: list[TokenLine]
    #: Empty until `rows` has brought the columns up to this view's version.
    _rows_filled: list[bool]
    #: True: fill the columns when the view is made (the clear path, the tests' oracle).
    fill_rows_at_view: ClassVar[bool] = False

    def __init__(self, _index: InvertedIndex, version: tuple[int, int, int, int],
                 _rows: RowColumns, _terms: dict[tuple[str, bool], PostingColumns] | None = None,
                 _impacts: dict[tuple[str, bool], ImpactOrder] | None = None,
                 _bitmaps: dict[tuple[str, bool], int] | None = None,
                 _line: list[TokenLine] | None = None,
                 _rows_filled: list[bool] | None = None) -> None:
        initial = object.__setattr__
        initial(self, "_index", _index)
        initial(self, "version", version)
        initial(self, "_rows", _rows)
        initial(self, "_terms", {} if _terms is None else _terms)
        initial(self, "_impacts", {} if _impacts is None else _impacts)
        initial(self, "_bitmaps", {} if _bitmaps is None else _bitmaps)
        initial(self, "_line", [] if _line is None else _line)
        initial(self, "_rows_filled", [] if _rows_filled is None else _rows_filled)

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"IndexView(version={self.version!r})"

    @property
    def rows(self) -> RowColumns:
        """Per-row columns of the live rows (`engine.index.row_columns`), filled up to
        this version the first time they are read (the view is valid only while its
        index stays at its version, so they are the same columns as at its making)."""
        if not self._rows_filled:
            self._rows.extend(self._index)
            self._rows.forget_deleted(self._index)
            self._rows_filled.append(True)
        return self._rows

    # ----- corpus statistics (FTS5's, over the whole index) ---------------------------

    @property
    def generation(self) -> int:
        """The transcript-store generation whose changes this view reflects."""
        return self.version[0]

    @property
    def document_count(self) -> int:
        """FTS5's `N`: live rows in the whole index."""
        return self.version[2]

    @property
    def total_tokens(self) -> int:
        """The summed token counts of the live rows."""
        return self.version[3]

    @property
    def average_length(self) -> float:
        """FTS5's `avgdl` (0 for an empty index)."""
        return self.total_tokens / self.document_count if self.document_count else 0.0

    @property
    def window_states(self) -> Mapping[str, WindowIndexState]:
        """The index state of every window (read-only)."""
        return MappingProxyType(self._index.window_states)

    @property
    def window_states_stamp(self) -> int:
        """The states' change stamp (`engine.index.window_states`): equal stamps, equal
        states. A state can change while the version stays the same."""
        return self._index.window_states.stamp

    # ----- rows ---------------------------------------------------------------------

    def document(self, doc_id: int) -> DocumentRecord:
        """The live row `doc_id` (KeyError when deleted or unknown)."""
        return self._index.document(doc_id)

    def documents(self) -> Iterator[DocumentRecord]:
        """Every live row, in doc-id order."""
        return self._index.documents()

    def live_doc_ids(self) -> Iterator[int]:
        """Every live row's doc id, increasing (no records are made)."""
        return self._index.live_doc_ids()

    def text(self, doc_id: int) -> str:
        """The text of live row `doc_id`."""
        return self._index.text(doc_id)

    def non_ascii_rows(self) -> list[int]:
        """The live rows whose text holds a non-ASCII character, increasing (listed the
        first time a view asks, then kept up to date by the next views)."""
        self.rows.ensure_non_ascii(self._index)
        return self.rows.non_ascii_rows

    def visible_texts(self) -> list[str]:
        """The texts of `non_ascii_rows()`, each up to its first NUL (what SQLite's LIKE
        reads), in the same order; read from the segments the first time they are asked."""
        self.rows.ensure_non_ascii(self._index)
        return self.rows.visible_texts(self._index)

    def cjk_candidates(self, needle: str) -> set[int] | None:
        """Rows that may hold `needle`, from the CJK gram index (built on first use); None:
        the needle has no CJK character, so any row may (`engine.index.cjk_grams`)."""
        self._read_tables_of(None)
        return self._index.cjk_grams.candidates(needle)

    # ----- postings -----------------------------------------------------------------

    def postings(self, term: str) -> list[Posting]:
        """The live posting list of `term` (the clear version of `term_columns`)."""
        postings = self._index.postings(term)
        self._read_tables_of([posting.doc_id for posting in postings])
        return postings

    def terms_with_prefix(self, prefix: str) -> list[str]:
        """Every term that starts with `prefix`, sorted, without repeats."""
        return self._index.terms_with_prefix(prefix)

    def term_columns(self, term: str, *, prefix: bool) -> PostingColumns:
        """The live postings of one phrase token (every completion merged if `prefix`),
        cached for this version.

        Equal to `engine.index.matching.token_positions` (the clear version), as columns;
        the token is cut to FTS5's 32,768 bytes first.
        """
        term = index_term(term)
        key = (term, prefix)
        cached = self._terms.get(key)
        if cached is None:
            if prefix:
                cached = self._prefix_columns(term)
            else:
                cached = self._index.term_columns(term)
            self._read_tables_of(cached.doc_ids)
            if len(self._terms) >= CACHED_TERMS:  # a long-running reader: keep it bounded
                self._terms.clear()
            self._terms[key] = cached
        return cached

    def term_impacts(self, term: str, *, prefix: bool) -> ImpactOrder:
        """`term_columns(term, prefix=prefix)` grouped by `(f, D)`
        (`engine.index.impact_order`), kept as long as those columns are.

        >>> from engine.index.inverted_index import InvertedIndex
        >>> from engine.model import IndexEntry
        >>> index = InvertedIndex()
        >>> _ = index.add_entry(IndexEntry("w1", "m1", "user", 5.0, "a b a", 0), ["a", "b", "a"])
        >>> _ = index.add_entry(IndexEntry("w1", "m2", "user", 6.0, "a", 1), ["a"])
        >>> impacts = index.view().term_impacts("a", prefix=False)
        >>> [(runs.frequency, runs.lengths, runs.doc_ids) for runs in impacts.by_frequency]
        [(1, (1,), ((1,),)), (2, (3,), ((0,),))]
        >>> impacts is index.view().term_impacts("a", prefix=False)
        True
        """
        key = (index_term(term), prefix)
        cached = self._impacts.get(key)
        if cached is None:  # emptied, like the term cache, when the rows change
            cached = ImpactOrder.of(self.term_columns(term, prefix=prefix), self.rows.lengths)
            if len(self._impacts) >= CACHED_TERMS:
                self._impacts.clear()
            self._impacts[key] = cached
        return cached

    def token_line(self) -> TokenLine:
        """The live rows on one line of token slots (`engine.index.token_bitmaps`), made
        the first time a view is asked (the module is imported then: a search without a
        phrase of common tokens never loads it)."""
        if not self._line:
            from engine.index.token_bitmaps import TokenLine

            self._read_tables_of(None)
            self._line.append(TokenLine.of(self.rows.lengths))
        return self._line[0]

    def term_bitmap(self, term: str, *, prefix: bool) -> int:
        """`term_columns(term, prefix=prefix)` as a bitmap over `token_line()`
        (`engine.index.token_bitmaps.term_bitmap`), kept for this version while the kept
        bitmaps hold at most `CACHED_BITMAP_SLOTS` slots (the oldest go first).

        >>> from engine.index.inverted_index import InvertedIndex
        >>> from engine.model import IndexEntry
        >>> index = InvertedIndex()
        >>> _ = index.add_entry(IndexEntry("w1", "m1", "user", 5.0, "a b a", 0), ["a", "b", "a"])
        >>> _ = index.add_entry(IndexEntry("w1", "m2", "user", 6.0, "a", 1), ["a"])
        >>> view = index.view()
        >>> bin(view.term_bitmap("a", prefix=False)), view.token_line().starts
        ('0b10101', [0, 4])
        """
        key = (index_term(term), prefix)
        cached = self._bitmaps.get(key)
        if cached is None:
            from engine.index.token_bitmaps import term_bitmap

            line = self.token_line()
            cached = term_bitmap(self.term_columns(term, prefix=prefix), line)
            room = CACHED_BITMAP_SLOTS // max(line.size, 1)
            while self._bitmaps and len(self._bitmaps) >= room:
                del self._bitmaps[next(iter(self._bitmaps))]
            if room:
                self._bitmaps[key] = cached
        return cached

    def _read_tables_of(self, doc_ids: Sequence[int] | None) -> None:
        """Read the columns of each segment table not read yet that holds one of
        `doc_ids` (increasing; None: every row): until its table is read, a segment's
        rows hold placeholders in `rows` (`RowColumns.lazy_tables`), so a row named to a
        query reads its segment's table first (a search reads only the tables of the
        segments that hold its terms)."""
        for segment in self._index.segments:
            documents = segment.documents
            if documents.__class__ is SegmentRows and not documents.columns_read:
                if doc_ids is not None:
                    at = bisect_left(doc_ids, documents.first)
                    if at == len(doc_ids) or doc_ids[at] >= documents.end:
                        continue
                documents.read_columns()

    def _prefix_columns(self, prefix: str) -> PostingColumns:
        parts = [self.term_columns(completion, prefix=False)
                 for completion in self._index.terms_with_prefix(prefix)]
        parts = [part for part in parts if part.doc_ids]
        if not parts:
            return EMPTY_COLUMNS
        if len(parts) == 1:
            return parts[0]
        merged: dict[int, list[int]] = {}
        for part in parts:
            for doc_id, positions in zip(part.doc_ids, part.positions):
                found = merged.get(doc_id)
                if found is None:
                    merged[doc_id] = list(positions)
                else:
                    found.extend(positions)
        doc_ids = sorted(merged)
        positions_list = [tuple(sorted(merged[doc_id])) for doc_id in doc_ids]
        return PostingColumns(doc_ids, list(map(len, positions_list)), positions_list)


def next_view(index: InvertedIndex, previous: IndexView | None) -> IndexView:
    """The view of `index` now, reusing what `previous` (an older view of the same index)
    already holds: its row columns (extended when the new view's are first read); its term
    cache when the rows are the same."""
    version = index_version(index)
    rows = previous._rows if previous is not None else RowColumns()
    same_rows = previous is not None and previous.version[1:] == version[1:]
    terms = previous._terms if same_rows and previous is not None else {}
    impacts = previous._impacts if same_rows and previous is not None else {}
    bitmaps = previous._bitmaps if same_rows and previous is not None else {}
    line = previous._line if same_rows and previous is not None else []
    view = IndexView(index, version, rows, terms, impacts, bitmaps, line)
    if IndexView.fill_rows_at_view or buffered_rows_uncovered(index, rows):
        view.rows  # noqa: B018 (filled now, as every view was before)
    return view


def buffered_rows_uncovered(index: InvertedIndex, rows: RowColumns) -> bool:
    """Whether `rows` lack a row of the index's write buffer (doc ids past every flushed
    segment's table). Such a row is read from its record, which a later delete removes
    (its columns would then be a placeholder), so a view fills them when it is made, as
    before; a flushed segment's table keeps every row it was written with."""
    table_end = max((segment.documents.end for segment in index.segments
                     if isinstance(segment.documents, SegmentRows)), default=0)
    return index.next_doc_id > max(rows.covered, table_end)

