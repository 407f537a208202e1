"""Per-row columns of the live index, indexed by doc id: what the fast query path reads.

Owns: three compact per-row arrays filled from the segments' row tables and the buffer,
the numbering of `(session_id, role)` groups, and the list of live rows whose text holds
a non-ASCII character with their texts. Must not touch: the index itself (read through
its public methods and its segments' rows only: `SegmentRows.head`, `read_columns`,
`when_read`), files, scope rules, scoring, orders
(the search stage, `engine.search.fast_path`, does those over these columns). The index
hands the columns out inside its read-only `engine.index.view.IndexView`.

Why: a query over a common word touches most rows, and a `DocumentRecord` per row is a
dict lookup and several attribute reads. Here a row is a position in three compact
arrays (8 bytes a row, no object per value):

* `lengths[doc_id]` — bm25's `D`;
* `groups[doc_id]` — the ordinal of the row's `(session_id, role)`; a request's scope is
  then a `bytearray` over the few thousand groups (`group_sessions`, `group_roles`);
* `timestamps[doc_id]` — the timestamp as a double when it is a plain number that a double
  holds exactly (the `recent` order then compares `(timestamp, doc_id)` tuples); rows with
  another timestamp (NULL, NaN, text, an int beyond 2**53) are counted in
  `odd_timestamps`, and while that count is not zero the search stage uses the general
  SQLite-order key instead;
* `non_ascii_rows` — the live rows whose text holds a non-ASCII character: what a CJK
  substring retry has to scan, listed the first time a retry needs them
  (`ensure_non_ascii`). Which rows they are comes from the row's stored flag
  (`DocumentRecord.text_is_ascii`), so filling the columns reads no text from disk; the
  texts themselves are read the first time a retry scans them (`visible_texts`). Unlike
  the gram index of `engine.index.cjk_grams`, a first retry after opening a store builds
  nothing else.

Row records never change and doc ids are never reused, so when the index changes the
columns are only extended with the new doc ids (`extend`) and the deleted rows dropped
from the row lists (`forget_deleted`). Costs: filling the columns is O(rows) once per
opened index, then O(new rows). `extend` numbers a flushed segment's groups and counts
its odd timestamps from its table record alone; each of the three columns is copied
from the tables (in C) the first time it is read, so a search copies only the columns
it reads (a one-word search over a whole store: the lengths); a segment whose table is
not read yet (`SegmentRows.columns_read`) gives placeholders, replaced in place when it
is first read (the view reads the tables of the rows a query names first). A buffered
row's columns are made from its record at once, after every waiting copy.
"""

from __future__ import annotations

import math
from array import array
from functools import partial
from itertools import compress, count, filterfalse, islice, repeat
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from engine.codec.group_table import StoredGroups
from engine.index.segment_rows import SegmentRows

if TYPE_CHECKING:
    from engine.index.inverted_index import InvertedIndex

T = TypeVar("T")

#: Every int of at most this magnitude is exactly a double.
EXACT_INT = 2**53


def plain_number(value: object) -> bool:
    """Whether a timestamp is a number SQLite orders as a number (not NaN) that a double
    holds exactly (so a `timestamps` array keeps its order and its ties).

    >>> [plain_number(value) for value in (1, 2.5, float("nan"), None, "3", True, 2**60)]
    [True, True, False, False, False, False, False]
    """
    if value.__class__ is int:
        return -EXACT_INT <= value <= EXACT_INT  # type: ignore[operator]
    return value.__class__ is float and not math.isnan(value)  # type: ignore[arg-type]


#: `_role_sessions` not given: a fresh empty dict (None is a value of its own).
_FRESH = object()


class RowColumns:
    """Per-row columns indexed by doc id, for doc ids below `covered`.

    A mutable value with `__slots__`, written out rather than a dataclass (every search
    makes this class, and a dataclass's costs many times a plain class's to make): every
    field a keyword of the constructor, compared and printed as the dataclass did.

    >>> from engine.index.inverted_index import InvertedIndex
    >>> from engine.model import IndexEntry
    >>> index = InvertedIndex()
    >>> _ = index.add_entry(IndexEntry("w1", "m1", "user", 5.0, "a b", 0), ["a", "b"])
    >>> _ = index.add_entry(IndexEntry("w2", "m2", "assistant", None, "a", 1), ["a"])
    >>> rows = RowColumns()
    >>> rows.extend(index)
    >>> list(rows.lengths), list(rows.groups), rows.odd_timestamps
    ([2, 1], [0, 1], 1)
    >>> rows.group_sessions, rows.group_roles
    (['w1', 'w2'], ['user', 'assistant'])
    >>> RowColumns() == RowColumns(), rows == RowColumns()
    (True, False)
    """

    __slots__ = ("_covered", "_groups", "_lengths", "_role_sessions", "_timestamps", "_waiting",
                 "dead", "group_roles", "group_sessions", "known_groups", "non_ascii_ready",
                 "non_ascii_rows", "non_ascii_texts", "numbered_like", "odd_timestamps")
    #: The fields in the constructor's order, which equality and the repr follow.
    _FIELD_NAMES = ("lengths", "groups", "timestamps", "odd_timestamps", "known_groups",
                    "group_sessions", "group_roles", "non_ascii_rows", "non_ascii_texts",
                    "non_ascii_ready", "dead", "numbered_like", "_role_sessions")

    _lengths: array
    _groups: array
    _timestamps: array
    #: Doc ids below this are numbered (`group_sessions`, `odd_timestamps`): their
    #: columns are filled, or wait in `_waiting` to be copied when first read.
    _covered: int
    #: Each column's name -> the table parts still to copy into it, in doc-id order:
    #: `(first doc id, segment rows, first slot, group translation or None)`.
    _waiting: dict[str, list[tuple[int, SegmentRows, int, list[int] | None]]]
    odd_timestamps: int
    #: `(session_id, role) -> group`, made when first asked for (`group_ids`); while it is
    #: None, the pairs are distinct and `_role_sessions` holds each role's session ids.
    known_groups: dict[tuple[str, str], int] | None
    group_sessions: list[str]
    group_roles: list[str]
    non_ascii_rows: list[int]
    non_ascii_texts: list[str]
    non_ascii_ready: bool
    dead: int
    #: The stored group table (`engine.codec.group_table`) whose pairs are exactly
    #: `group_sessions` and `group_roles` in their order, if one is known.
    numbered_like: StoredGroups | None
    #: While `known_groups` is None: every role's session ids (a set each), which tell
    #: whether a stored tail's pairs are new without making a pair (`_tail_is_new`).
    _role_sessions: dict[str, set[str]] | None
    #: False: number a stored tail through `group_ids` (the clear path, the tests' oracle).
    lazy_group_ids: ClassVar[bool] = True
    #: False: copy a table's columns when it is numbered (the clear path, the tests'
    #: oracle), not when each column is first read.
    lazy_columns: ClassVar[bool] = True
    #: False: a column first read reads every table (the clear path, the tests' oracle);
    #: True: a table not read yet (`SegmentRows.columns_read`) gives placeholders, which
    #: its first read replaces (`SegmentRows.when_read`).
    lazy_tables: ClassVar[bool] = True

    def __init__(self, lengths: array | None = None, groups: array | None = None,
                 timestamps: array | None = None, odd_timestamps: int = 0,
                 known_groups: dict[tuple[str, str], int] | None = None,
                 group_sessions: list[str] | None = None, group_roles: list[str] | None = None,
                 non_ascii_rows: list[int] | None = None,
                 non_ascii_texts: list[str] | None = None, non_ascii_ready: bool = False,
                 dead: int = 0, numbered_like: StoredGroups | None = None,
                 _role_sessions: Any = _FRESH) -> None:
        self._lengths = array("I") if lengths is None else lengths
        self._groups = array("I") if groups is None else groups
        self._timestamps = array("d") if timestamps is None else timestamps
        self._covered = len(self._lengths)
        self._waiting = {"lengths": [], "groups": [], "timestamps": []}
        self.odd_timestamps = odd_timestamps
        self.known_groups = known_groups
        self.group_sessions = [] if group_sessions is None else group_sessions
        self.group_roles = [] if group_roles is None else group_roles
        self.non_ascii_rows = [] if non_ascii_rows is None else non_ascii_rows
        self.non_ascii_texts = [] if non_ascii_texts is None else non_ascii_texts
        self.non_ascii_ready = non_ascii_ready
        self.dead = dead
        self.numbered_like = numbered_like
        self._role_sessions = {} if _role_sessions is _FRESH else _role_sessions

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()  # type: ignore[attr-defined]

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in self._FIELD_NAMES)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}"
                          for name, value in zip(self._FIELD_NAMES, self._fields()))
        return f"RowColumns({shown})"

    @property
    def group_ids(self) -> dict[tuple[str, str], int]:
        """`(session_id, role) -> group` of every numbered pair, in number order. Made
        from `group_sessions` and `group_roles` the first time it is asked for (when a
        table's groups are translated or a buffered row is numbered): a search of a
        store whose segments' tables start each other's asks for none of it."""
        known = self.known_groups
        if known is None:
            known = self.known_groups = dict(zip(zip(self.group_sessions, self.group_roles),
                                                 count()))
            self._role_sessions = None
        return known

    @property
    def covered(self) -> int:
        """Doc ids below this have their columns filled (or waiting to be copied from
        their tables when first read: `lengths`, `groups`, `timestamps`)."""
        return self._covered

    @property
    def lengths(self) -> array:
        """bm25's `D` of each doc id below `covered` (0: no row)."""
        if self._waiting["lengths"]:
            self._fill("lengths", self._lengths)
        return self._lengths

    @property
    def groups(self) -> array:
        """The group number of each doc id below `covered` (0: no row)."""
        if self._waiting["groups"]:
            self._fill("groups", self._groups)
        return self._groups

    @property
    def timestamps(self) -> array:
        """The timestamp of each doc id below `covered` as a double (0.0: no row, or a
        timestamp counted in `odd_timestamps`)."""
        if self._waiting["timestamps"]:
            self._fill("timestamps", self._timestamps)
        return self._timestamps

    def _fill(self, name: str, column: array) -> None:
        """Copy the table parts waiting for column `name` into `column`, in C, with
        placeholders for the doc ids no table holds (deleted before it was written).

        A part leaves the queue only once it is copied whole: a copy that fails (out of
        memory, say) cuts the column back to where the part started and leaves it
        waiting, so the next read copies it again rather than padding its rows with
        placeholders (which `serve`, answering on after an error, would then use)."""
        waiting = self._waiting[name]
        zero = 0.0 if column.typecode == "d" else 0
        while waiting:
            first, rows, start, translation = waiting[0]
            before = len(column)
            try:
                missing = first - before
                if missing > 0:
                    column.extend(repeat(zero, missing))
                if rows.columns_read or not self.lazy_tables:
                    _copy_part(column, len(column), getattr(rows.read_columns(), name),
                               start, translation)
                else:  # placeholders, replaced when the table is first read
                    at = len(column)
                    column.frombytes(bytes(column.itemsize * (rows.end - rows.first - start)))
                    rows.when_read(partial(_copy_column, column, at, name, start, translation))
            except BaseException:
                del column[before:]
                raise
            del waiting[0]

    def _fill_all(self) -> None:
        """Copy every waiting table part (before buffered rows are appended)."""
        self.lengths, self.groups, self.timestamps  # noqa: B018 (filled when read)

    def extend(self, index: InvertedIndex) -> None:
        """Fill the columns of doc ids `covered .. index.next_doc_id - 1`.

        A flushed segment's groups are numbered from its table (`_extend_from_table`), and
        each of its columns is copied from it in C when first read (`_fill`); the buffer's
        rows one by one (`_extend_from_records`). Ids without a row (deleted
        before their segment was written) get placeholders: posting lists never name them.
        """
        for segment in index.segments:
            documents = segment.documents
            if isinstance(documents, SegmentRows) and documents.end > self.covered:
                self._extend_from_table(documents, index.deleted)
        self._extend_from_records(index, index.next_doc_id)

    def _extend_from_table(self, rows: SegmentRows, deleted: set[int]) -> None:
        """Number the groups of a table's rows from doc id `covered` on and count its odd
        timestamps; its columns wait until each is first read (`_fill`)."""
        start = max(self._covered, rows.first) - rows.first
        table = rows.head
        stored = table.stored_groups
        if self._take_tail(stored):
            translation = None
        else:
            translation = self._translation(table.group_table)
            same = translation is None and len(self.group_sessions) == stored.size
            self.numbered_like = stored if same else None
        part = (rows.first, rows, start, None)
        for name, waiting in self._waiting.items():
            # `translation` (None: the table numbers its groups as these columns do)
            waiting.append(part if name != "groups" else (*part[:3], translation))
        self._covered = rows.end
        self.odd_timestamps += sum(1 for slot in table.odd_timestamps if slot >= start)
        if self.non_ascii_ready:
            non_ascii = rows.non_ascii_doc_ids(rows.first + start)
            self.non_ascii_rows.extend(filterfalse(deleted.__contains__, non_ascii))
        if not self.lazy_columns:
            self._fill_all()

    def _take_tail(self, stored: StoredGroups) -> bool:
        """Number a stored table's pairs without making its pairs, when it is not
        decoded and starts with the table these columns are numbered like (or is a whole
        table and these columns have no group yet): its tail's pairs then take the next
        numbers, as `_translation` would give them. False (nothing changed) otherwise,
        or when a tail pair is already numbered (a table's pairs are distinct, so only
        a damaged one does that)."""
        if stored.decoded or stored.previous is not self.numbered_like or (
                len(self.group_sessions) != (0 if stored.previous is None
                                             else stored.previous.size)):
            return False
        sessions = stored.tail_sessions()
        roles = list(stored.tail_roles())
        if self.known_groups is None and self.lazy_group_ids:
            if not self._tail_is_new(sessions, roles):
                return False
        else:
            numbers = dict(zip(zip(sessions, roles), count(len(self.group_sessions))))
            if len(numbers) != len(sessions) or \
                    not numbers.keys().isdisjoint(self.group_ids.keys()):
                return False
            self.group_ids.update(numbers)
        self.group_sessions.extend(sessions)
        self.group_roles.extend(roles)
        self.numbered_like = stored
        return True

    def _tail_is_new(self, sessions: list[str], roles: list[str]) -> bool:
        """Whether the pairs of `sessions` and `roles` (a stored tail) are distinct and
        none is numbered yet, checked one role at a time over sets of session ids (no
        pair is made); when they are, they are added to `_role_sessions`. The clear
        version is the dict of the pairs that `group_ids` would be, checked likewise."""
        role_sessions = self._role_sessions
        assert role_sessions is not None, "kept while known_groups is None"
        new: dict[str, set[str]] = {}
        for role in set(roles):
            with_role = set(compress(sessions, map(role.__eq__, roles)))
            if len(with_role) != roles.count(role) or not with_role.isdisjoint(
                    role_sessions.get(role, ())):
                return False
            new[role] = with_role
        for role, with_role in new.items():
            role_sessions.setdefault(role, set()).update(with_role)
        return True

    def _translation(self, group_table: tuple[tuple[str, str], ...]) -> list[int] | None:
        """This table's group numbers in these columns' numbering (registering its new
        pairs); None when they are the same numbers. A segment's table starts with the
        one of the segment before it (`engine.index.writer`), so the shared prefix is
        compared in one step and only the pairs after it are looked up."""
        known = len(self.group_sessions)
        if known == 0 and len(set(group_table)) == len(group_table):  # the first table
            self.known_groups = {pair: number for number, pair in enumerate(group_table)}
            self._role_sessions = None
            self.group_sessions = [session_id for session_id, _role in group_table]
            self.group_roles = [role for _session_id, role in group_table]
            return None
        prefix = min(known, len(group_table))
        # `group_ids` holds the pairs in number order (numbers are given in insertion
        # order), so its keys are the pairs to compare, without making new tuples.
        same_prefix = group_table[:prefix] == tuple(islice(self.group_ids, prefix))
        if not same_prefix:
            return [self._group(session_id, role) for session_id, role in group_table]
        tail = [self._group(session_id, role) for session_id, role in group_table[prefix:]]
        if tail == list(range(prefix, len(group_table))):
            return None
        return [*range(prefix), *tail]

    def _group(self, session_id: str, role: str) -> int:
        key = (session_id, role)
        group = self.group_ids.get(key)
        if group is None:
            self.numbered_like = None
            group = self.group_ids[key] = len(self.group_sessions)
            self.group_sessions.append(session_id)
            self.group_roles.append(role)
        return group

    def _extend_from_records(self, index: InvertedIndex, end: int) -> None:
        """The columns of doc ids `covered .. end - 1`, one record at a time (the clear
        version of `_extend_from_table`). A column-at-a-time version with `map` measured
        slower than this loop."""
        if end <= self._covered:
            return
        self._fill_all()
        try:
            self._append_records(index, range(self._covered, end))
        finally:
            self._covered = len(self._lengths)

    def _append_records(self, index: InvertedIndex, doc_ids: range) -> None:
        """Append the columns of `doc_ids` (`_extend_from_records`), a record at a time."""
        group_ids = self.group_ids
        lengths, groups, timestamps = self._lengths, self._groups, self._timestamps
        document = index.document
        for doc_id in doc_ids:
            try:
                record = document(doc_id)
            except KeyError:
                lengths.append(0)
                groups.append(0)
                timestamps.append(0.0)
                continue
            lengths.append(record.length)
            group = group_ids.get((record.session_id, record.role))
            if group is None:
                group = self._group(record.session_id, record.role)
            groups.append(group)
            if self.non_ascii_ready and not record.text_is_ascii:  # the stored flag
                self.non_ascii_rows.append(doc_id)
            timestamp = record.timestamp
            if plain_number(timestamp):
                timestamps.append(timestamp)
            else:
                timestamps.append(0.0)
                self.odd_timestamps += 1

    def forget_deleted(self, index: InvertedIndex) -> None:
        """Drop deleted rows from the row lists (the per-doc columns keep placeholders)."""
        dead = index.next_doc_id - index.document_count
        if dead == self.dead:
            return
        if not self.non_ascii_ready:  # built from the live rows when first needed
            self.dead = dead
            return
        if len(self.non_ascii_texts) == len(self.non_ascii_rows):
            self.non_ascii_rows, self.non_ascii_texts = live_rows(
                index, self.non_ascii_rows, self.non_ascii_texts)
        else:
            self.non_ascii_rows = [doc_id for doc_id in self.non_ascii_rows
                                   if index.is_live(doc_id)]
            self.non_ascii_texts = []
        self.dead = dead

    def ensure_non_ascii(self, index: InvertedIndex) -> None:
        """Fill `non_ascii_rows` from the live rows the first time a CJK retry needs it
        (from the segments' stored flags, in C, and the buffer's records); later
        `extend` calls keep it up to date. Opening a store and every other query skip it.
        """
        if self.non_ascii_ready:
            return
        deleted = index.deleted
        rows: list[int] = []
        for segment in index.all_segments():
            documents = segment.documents
            if isinstance(documents, SegmentRows):
                rows.extend(filterfalse(deleted.__contains__,
                                        documents.non_ascii_doc_ids(documents.first)))
            else:
                rows.extend(sorted(doc_id for doc_id, record in documents.items()
                                   if doc_id not in deleted and not record.text_is_ascii))
        self.non_ascii_rows = rows
        self.non_ascii_texts = []
        self.non_ascii_ready = True
        self.dead = index.next_doc_id - index.document_count

    def visible_texts(self, index: InvertedIndex) -> list[str]:
        """The texts of `non_ascii_rows` up to any NUL (what LIKE sees), read when a
        CJK retry first needs them (then kept and extended)."""
        texts = self.non_ascii_texts
        missing = self.non_ascii_rows[len(texts):]
        if missing:
            texts.extend(text if "\x00" not in text else text.split("\x00", 1)[0]
                         for text in index.texts(missing))
        return texts


def _copy_column(column: array, at: int, name: str, start: int,
                 translation: list[int] | None, table: Any) -> None:
    """`_copy_part` of the table's column `name` (`SegmentRows.when_read`)."""
    _copy_part(column, at, getattr(table, name), start, translation)


def _copy_part(column: array, at: int, source: array | memoryview, start: int,
               translation: list[int] | None) -> None:
    """Put `source[start:]` (its group numbers translated when `translation` is not None)
    into `column` from index `at` on, over the placeholders there or at its end, in C.

    >>> column = array("I", [9, 0, 0, 7])
    >>> _copy_part(column, 1, array("I", [5, 1, 2]), 1, None)
    >>> _copy_part(column, 4, array("I", [0, 1]), 0, [3, 4])
    >>> list(column)
    [9, 1, 2, 7, 3, 4]
    """
    if at == len(column):
        if translation is None:
            _append_from(column, source, start)
        else:
            column.extend(map(translation.__getitem__, _from(source, start)))  # type: ignore[arg-type]
        return
    values = array(column.typecode)
    _copy_part(values, 0, source, start, translation)
    column[at: at + len(values)] = values


def _from(column: array, start: int) -> array:
    """`column[start:]`, without the copy when that is the whole column.

    >>> column = array("I", [1, 2, 3])
    >>> _from(column, 0) is column, list(_from(column, 2))
    (True, [3])
    """
    return column if start == 0 else column[start:]


def _append_from(target: array, column: array | memoryview, start: int) -> None:
    """`target.extend(column[start:])` in one C copy, whether the table's column is an
    array or a typed view of its record's bytes (`engine.codec.columns_record.columns_of`),
    which `array.extend` would read one item at a time.

    >>> target = array("I", [9])
    >>> _append_from(target, memoryview(array("I", [1, 2, 3]).tobytes()).cast("I"), 1)
    >>> _append_from(target, array("I", [4]), 0)
    >>> list(target)
    [9, 2, 3, 4]
    """
    if column.__class__ is memoryview and column.format == target.typecode:  # type: ignore[union-attr]
        target.frombytes(column[start:].cast("B"))  # type: ignore[union-attr]
    else:
        target.extend(_from(column, start))  # type: ignore[arg-type]


def live_rows(
    index: InvertedIndex, doc_ids: list[int], texts: list[T]
) -> tuple[list[int], list[T]]:
    """The pairs of `doc_ids` and `texts` (any per-row values) whose rows are live."""
    kept_ids, kept_texts = [], []
    for doc_id, text in zip(doc_ids, texts):
        if index.is_live(doc_id):
            kept_ids.append(doc_id)
            kept_texts.append(text)
    return kept_ids, kept_texts
