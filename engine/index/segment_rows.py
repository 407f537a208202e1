"""The rows of a flushed segment, read from its terms file: a mapping from doc id to row.

Owns: answering "which rows does this segment hold, and what is row d" from the columns
of an opened terms file (`engine.codec.terms_file.TermsFileReader`), making a
`DocumentRecord` only when one is asked for, and keeping the few text records read last.
Must not touch: tombstones (a segment's rows never change; the index says which are
deleted), posting lists, bytes (the codec decodes), files.

Why not a dict of records: at a million rows a dict of `DocumentRecord` objects costs
far too much memory and time to build at every open, and a store must reopen fast and
small. Here a row is a slot of the table's arrays (26 bytes), and the rest of a row
(its message id and text) stays on disk until a hit or a CJK retry reads its record.
The table's columns themselves are read the first time a row is (`read_columns`): until
then only its head is, so a search reads the columns of the segments it reads rows of.
Row records are equal to the ones the segment was written from (`tests/index`): the
clear version is the dict the writer held before the flush.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import compress
from typing import Any

from engine.codec.terms_file import (
    NON_ASCII_FLAG,
    ROWS_PER_TEXT_RECORD,
    RowTable,
    TermsFileReader,
)
from engine.index.documents import DocumentRecord
from engine.index.recent_cache import RecentlyUsed

#: A `DocumentRecord` made from the tuple of its nine fields in C (the `NamedTuple`'s
#: generated `__new__` is Python).
_new_record = tuple.__new__

#: `bytes.translate` table: a flags byte to 1 when its text is non-ASCII, else 0.
NON_ASCII_BYTES = bytes((1 if flag & NON_ASCII_FLAG else 0) for flag in range(256))


class SegmentRows(Mapping[int, DocumentRecord]):
    """A segment's rows by doc id (`Mapping`), backed by its terms file's table.

    `first` and `end` bound the doc ids (`first <= doc_id < end`); `head`
    (`engine.codec.terms_file.TableHead`) is read at open, and `table` (`RowTable`, with
    its per-row columns) the first time a row is (`read_columns`, which then runs
    `check_rows` and the `when_read` calls); the index's query columns read it without
    making records. `rows`, when given, is the row count the segment was written with
    (`assume_rows`: the count its manifest names): `len` answers it without reading the
    columns (a writer asks every segment's size to choose its merges).
    """

    def __init__(self, reader: TermsFileReader, cached_records: int = 64,
                 rows: int | None = None) -> None:
        self.reader = reader
        self.head = head = reader.head
        self.first = head.first_doc_id
        self.end = head.first_doc_id + head.span
        #: Called with the rows' `(first doc id, last doc id, count)` (`(None, None, 0)`
        #: when none) when the columns are first read, before any read uses them: what
        #: raises there leaves them unread, so every read raises it (the index's loader
        #: checks them against its manifest so).
        self.check_rows: Callable[[tuple[int | None, int | None, int]], None] | None = None
        self._when_read: list[Callable[[RowTable], None]] = []
        self._text_records: RecentlyUsed[int, list[list[Any]]] = RecentlyUsed(cached_records)
        if rows is not None:  # known without the columns: `len` need not read them
            self._count = rows
        if "table" in vars(reader):  # read at open (`TermsFileReader.lazy_columns`)
            self.read_columns()

    def __getattr__(self, name: str) -> Any:
        """`table` and the row count before the columns are first read: read them now
        (then they are attributes, which later reads find without a call)."""
        if name in ("table", "_count"):
            self.read_columns()
            return vars(self)[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def columns_read(self) -> bool:
        """Whether the columns (`table`) are read: until then only `head` is."""
        return "table" in vars(self)

    def read_columns(self) -> RowTable:
        """The table with its columns, read and checked (`check_rows`) the first time."""
        table = vars(self).get("table")
        if table is not None:
            return table
        table = self.reader.table
        present = table.present
        count = present.count(1)
        if self.check_rows is not None:
            self.check_rows((self.first + present.index(1), self.first + present.rindex(1),
                             count) if count else (None, None, 0))
        waiting = self._when_read
        while waiting:  # one that raises stays, and the next read calls it again
            waiting[0](table)
            del waiting[0]
        self._count = count
        self.table = table
        return table

    def assume_rows(self, rows: int) -> None:
        """Answer `len` with `rows` until the columns are read (then with their count):
        the count a manifest names, which `check_rows` checks when they are."""
        if not self.columns_read:
            self._count = rows

    def when_read(self, call: Callable[[RowTable], None]) -> None:
        """Call `call(table)` when the columns are first read (now if they are)."""
        if self.columns_read:
            call(self.table)
        else:
            self._when_read.append(call)

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        """Whether the segment holds a row: a written one does until its columns are
        read (its first and last slot hold rows), then when they hold one."""
        return not self.columns_read or self._count > 0

    def __contains__(self, doc_id: object) -> bool:
        return (doc_id.__class__ is int and self.first <= doc_id < self.end  # type: ignore[operator]
                and self.table.present[doc_id - self.first] == 1)  # type: ignore[operator]

    def __iter__(self) -> Iterator[int]:
        return compress(range(self.first, self.end), self.table.present)

    def __getitem__(self, doc_id: int) -> DocumentRecord:
        if doc_id not in self:
            raise KeyError(doc_id)
        slot = doc_id - self.first
        table = self.table
        session_id, role = table.stored_groups.pair(table.groups[slot])
        message_id = self._text_record(slot)[0][slot % ROWS_PER_TEXT_RECORD]
        return _new_record(DocumentRecord, (
            doc_id, session_id, message_id, role, table.timestamp(slot), self,
            table.lengths[slot], table.seqs[slot],
            bool(table.flags[slot] & NON_ASCII_FLAG),
        ))

    def length_of(self, doc_id: int) -> int:
        """The token count of row `doc_id` (KeyError when the segment has no such row),
        from the table: no record is made and no text record read."""
        if doc_id not in self:
            raise KeyError(doc_id)
        return self.table.lengths[doc_id - self.first]

    def _text_record(self, slot: int) -> list[list[Any]]:
        return self._text_records.get(slot // ROWS_PER_TEXT_RECORD, self.reader.text_record)

    def text_of(self, doc_id: int) -> str:
        """The text of row `doc_id` (KeyError when the segment has no such row); this is
        the `stored_text` of the records made here."""
        if doc_id not in self:
            raise KeyError(doc_id)
        slot = doc_id - self.first
        return self._text_record(slot)[1][slot % ROWS_PER_TEXT_RECORD]

    def texts_of(self, doc_ids: Iterable[int]) -> list[str]:
        """The texts of rows `doc_ids` (increasing, all in this segment), reading each
        text record once: `[text_of(d) for d in doc_ids]` without its per-row lookups."""
        texts: list[str] = []
        append = texts.append
        current = -1
        record_texts: list[str] = []
        first = self.first
        for doc_id in doc_ids:
            slot = doc_id - first
            number, within = divmod(slot, ROWS_PER_TEXT_RECORD)
            if number != current:
                record_texts = self._text_record(slot)[1]
                current = number
            append(record_texts[within])
        return texts

    def total_tokens(self) -> int:
        """The token count of all rows (slots without a row hold 0)."""
        return sum(self.table.lengths)

    def non_ascii_doc_ids(self, start: int) -> Iterator[int]:
        """The rows from doc id `start` on whose text holds a non-ASCII character."""
        begin = max(start, self.first) - self.first
        flags = self.table.flags[begin:].translate(NON_ASCII_BYTES)
        return compress(range(self.first + begin, self.end), flags)

    def doc_ids_by_session(self) -> dict[str, list[int]]:
        """Every row's doc id under its window's session id, increasing."""
        table = self.table
        by_group: dict[int, list[int]] = {}
        groups = table.groups
        first = self.first
        for slot in compress(range(table.span), table.present):
            by_group.setdefault(groups[slot], []).append(first + slot)
        by_session: dict[str, list[int]] = {}
        for group, doc_ids in by_group.items():
            by_session.setdefault(table.group_table[group][0], []).extend(doc_ids)
        for doc_ids in by_session.values():
            doc_ids.sort()
        return by_session


def segment_bounds(documents: Mapping[int, DocumentRecord]) -> tuple[int, int]:
    """The least and the greatest doc id of a segment's rows (it has at least one).

    >>> segment_bounds({4: None, 2: None, 9: None})
    (2, 9)
    """
    if isinstance(documents, SegmentRows):
        if not documents.columns_read:  # a writer's first and last slot hold rows
            return documents.first, documents.end - 1
        present = documents.table.present
        return documents.first + present.index(1), documents.first + present.rindex(1)
    return min(documents), max(documents)
