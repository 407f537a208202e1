"""A terms file's group table as the file stores it, decoded to pairs on first use.

Owns: the `(session_id, role)` group table of an opened terms file (grammar: the table
map's `group_sessions`, `group_roles` and `role_names` columns, or its `group_table`
pairs, `engine.codec.terms_file`), checked at open without making a pair, and the pairs
made the first time something asks for them. Must not touch: files, the rest of the
table record, rows (a group number is an index into these pairs; what it means is the
index's).

Why: a segment's group table starts with the whole table of the segment written before
it (`engine.index.writer`), so the tables of a store's segments hold each pair once per
later segment. Making every table's pairs when a store opens cost more than the rest of
the table record, and a first search needs none of them: the query columns
(`engine.index.row_columns`) take each segment's new pairs straight from the columns
(`tail_sessions`, `tail_roles`) when its table starts with the previous one's, which is
checked on the stored bytes (`str.startswith`, one C pass) with the previous table rebuilt
from the tails it holds. So a table holds only the pairs after the previous segment's
(`tail`), and a link to that segment's table (`previous`) until its pairs are made; then
its pairs share the previous table's pair objects and the link is dropped. For the same
reason a linked table's counts are checked at open on its tail alone (`open_columns`):
its previous table's were checked when that one opened, so counting the NULs of every
table's whole list of session ids checked each earlier pair again once per later segment.

`StoredGroups.pairs()` is the decoded table, equal to the clear decode of the file's
columns alone (`decode_pairs`; tests/codec/test_group_table.py holds them equal for
every chain of tables, damaged links included).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from typing import Any

from engine.codec.framing import DecodeError

GroupTable = tuple[tuple[str, str], ...]  # distinct (session_id, role) pairs


def decode_pairs(sessions: str, numbers: bytes, names: list[str]) -> GroupTable:
    """The pairs of a group table's columns, one pair object each (the clear decode).

    >>> decode_pairs("w1\\x00w1\\x00w2", b"\\x00\\x01\\x00", ["user", "assistant"])
    (('w1', 'user'), ('w1', 'assistant'), ('w2', 'user'))
    """
    session_ids = sessions.split("\x00") if numbers else []
    return tuple(zip(session_ids, map(names.__getitem__, numbers)))


def check_columns(sessions: Any, numbers: Any, names: Any) -> None:
    """DecodeError unless the columns make a group table: the types, as many session ids
    as role numbers, every number naming a role. No pair is made.

    >>> check_columns("w1\\x00w2", b"\\x00\\x00", ["user"])
    >>> check_columns("w1", b"\\x00\\x00", ["user"])
    Traceback (most recent call last):
    ...
    engine.codec.framing.DecodeError: group table columns do not match
    """
    check_types(sessions, numbers, names)
    check_counts(sessions, numbers, names)


def check_types(sessions: Any, numbers: Any, names: Any) -> None:
    """DecodeError unless the columns have the types `check_columns` asks for."""
    if not (isinstance(sessions, str) and isinstance(numbers, bytes)
            and isinstance(names, list) and not set(map(type, names)) - {str}):
        raise DecodeError("group table columns have the wrong types")


def check_counts(sessions: str, numbers: bytes, names: list[str]) -> None:
    """DecodeError unless columns of the right types hold as many session ids as role
    numbers, every number naming a role (the rest of `check_columns`)."""
    if numbers and (sessions.count("\x00") + 1 != len(numbers) or max(numbers) >= len(names)):
        raise DecodeError("group table columns do not match")


class StoredGroups:
    """One segment's group table of `size` pairs: decoded (`pairs()` made), or its
    columns' tail (`tail_sessions`, `tail_roles`) after the whole table of `previous`
    (all of it when `previous` is None).

    >>> first = StoredGroups.of_columns("w1\\x00w1", b"\\x00\\x01", ["user", "assistant"], None)
    >>> second = StoredGroups.of_columns("w1\\x00w1\\x00w2", b"\\x00\\x01\\x00",
    ...                                  ["user", "assistant"], first)
    >>> second.previous is first, second.tail_sessions(), list(second.tail_roles())
    (True, ['w2'], ['user'])
    >>> second.pairs()
    (('w1', 'user'), ('w1', 'assistant'), ('w2', 'user'))
    >>> second.pairs()[0] is first.pairs()[0], second.previous, second.decoded
    (True, None, True)
    """

    __slots__ = ("_names", "_pairs", "_tail_numbers", "_tail_split", "_tail_text", "previous",
                 "size")

    def __init__(self, size: int, previous: StoredGroups | None, tail_text: str,
                 tail_numbers: bytes, names: tuple[str, ...],
                 pairs: GroupTable | None = None) -> None:
        self.size = size
        #: The table this one starts with, while this one's pairs are not made.
        self.previous = previous
        self._tail_text = tail_text
        self._tail_numbers = tail_numbers
        self._names = names
        self._pairs = pairs
        #: `tail_sessions()`, split once when first asked for (None: not yet).
        self._tail_split: list[str] | None = None

    @classmethod
    def of_pairs(cls, pairs: GroupTable) -> StoredGroups:
        """A decoded table (built for writing, or read as pairs)."""
        return cls(len(pairs), None, "", b"", (), pairs)

    @classmethod
    def of_columns(cls, sessions: str, numbers: bytes, names: list[str],
                   known: StoredGroups | None) -> StoredGroups:
        """The table of columns that passed `check_columns`, linked to `known` (the
        previous segment's table) when they start with `known`'s whole table. Columns
        not checked yet go through `open_columns`: a table linked here is trusted by the
        next one's tail check."""
        linked = cls._linked_by_columns(sessions, numbers, names, known)
        return linked if linked is not None else cls._of_pairs_link(sessions, numbers, names,
                                                                    known)

    @classmethod
    def open_columns(cls, sessions: Any, numbers: Any, names: Any,
                     known: StoredGroups | None) -> StoredGroups:
        """`of_columns` of columns checked here as `check_columns` checks them
        (DecodeError: malformed). Where they start with `known`'s undecoded table, which
        was checked when it was opened, only the part after it is counted: the NULs of
        the whole list of session ids are `known`'s and the tail's, and `known`'s role
        numbers all name a role of its names, which these names start with."""
        check_types(sessions, numbers, names)
        linked = cls._linked_by_columns(sessions, numbers, names, known)
        if linked is not None:
            check_counts(linked._tail_text, linked._tail_numbers, names)
            return linked
        check_counts(sessions, numbers, names)
        return cls._of_pairs_link(sessions, numbers, names, known)

    @classmethod
    def _linked_by_columns(cls, sessions: str, numbers: bytes, names: list[str],
                           known: StoredGroups | None) -> StoredGroups | None:
        """The table linked to `known` when `known`'s chain is undecoded and these
        columns start with its columns (compared on the stored text), else None. Safe
        on columns of the right types whose counts are not checked yet."""
        size = len(numbers)
        if known is None or not 0 < known.size <= size:
            return None
        columns = known._columns()
        if columns is None:
            return None
        known_text, known_numbers, known_names = columns
        if (numbers.startswith(known_numbers)
                and tuple(names[:len(known_names)]) == known_names
                and sessions.startswith(known_text)
                and (len(sessions) == len(known_text) if size == known.size
                     else sessions.startswith("\x00", len(known_text)))):
            return cls(size, known, sessions[len(known_text) + 1:], numbers[known.size:],
                       tuple(names))
        return None

    @classmethod
    def _of_pairs_link(cls, sessions: str, numbers: bytes, names: list[str],
                       known: StoredGroups | None) -> StoredGroups:
        """The table of checked columns not linked by `_linked_by_columns`: linked to
        `known` when `known`'s chain is decoded and its pairs start these, else alone."""
        size = len(numbers)
        if (known is not None and 0 < known.size <= size and known._chain()[-1].decoded
                and decode_pairs(sessions, numbers[:known.size], names) == known.pairs()):
            cut = sum(map(len, (session_id for session_id, _role in known.pairs())))
            cut += known.size  # the NULs after them
            return cls(size, known, sessions[cut:], numbers[known.size:], tuple(names))
        return cls(size, None, sessions if numbers else "", numbers, tuple(names))

    @property
    def decoded(self) -> bool:
        """Whether the pairs are made (the tail columns are then let go)."""
        return self._pairs is not None

    def _chain(self) -> list[StoredGroups]:
        """This table, then the ones it starts with, newest first."""
        chain = []
        table: StoredGroups | None = self
        while table is not None:
            chain.append(table)
            table = table.previous
        return chain

    def _columns(self) -> tuple[str, bytes, tuple[str, ...]] | None:
        """The whole undecoded table as columns (session ids joined with NUL, role
        numbers, role names), joined from the tails of its chain; None when a table of
        the chain is decoded."""
        chain = self._chain()
        if chain[-1]._pairs is not None:
            return None
        texts = [table._tail_text for table in reversed(chain) if table._tail_numbers]
        numbers = b"".join(table._tail_numbers for table in reversed(chain))
        return "\x00".join(texts), numbers, self._names

    def tail_sessions(self) -> list[str]:
        """Undecoded: the session ids of the pairs after `previous`'s table (split once
        and kept: callers must not change the list)."""
        split = self._tail_split
        if split is None:
            split = self._tail_split = \
                self._tail_text.split("\x00") if self._tail_numbers else []
        return split

    def tail_roles(self) -> Iterator[str]:
        """Undecoded: the roles of those pairs."""
        return map(self._names.__getitem__, self._tail_numbers)

    def pairs(self) -> GroupTable:
        """Every pair, in order; the first ones the previous table's own pair objects."""
        if self._pairs is None:
            undecoded = []
            table: StoredGroups | None = self
            while table is not None and table._pairs is None:
                undecoded.append(table)
                table = table.previous
            pairs: GroupTable = () if table is None else table._pairs  # type: ignore[assignment]
            for table in reversed(undecoded):
                pairs = pairs + tuple(zip(table.tail_sessions(), table.tail_roles()))
                table._pairs = pairs
                table.previous = None  # its pairs hold what it shared
                table._tail_text, table._tail_numbers, table._names = "", b"", ()
                table._tail_split = None
        return self._pairs  # type: ignore[return-value]

    def pair(self, number: int) -> tuple[str, str]:
        """`pairs()[number]` for `0 <= number < size` (IndexError past the end), without
        making the other pairs: read from the tail of the table of the chain that holds
        it (a row's record needs its one pair; making every pair of a large store's
        chain of tables cost more than the rest of the record).

        >>> first = StoredGroups.of_columns("w1\\x00w1", b"\\x00\\x01", ["user", "assistant"], None)
        >>> second = StoredGroups.of_columns("w1\\x00w1\\x00w2", b"\\x00\\x01\\x00",
        ...                                  ["user", "assistant"], first)
        >>> [second.pair(number) for number in range(3)] == list(second.pairs())
        True
        >>> second.pair(3)
        Traceback (most recent call last):
        ...
        IndexError: group 3 of a table of 3
        """
        if not 0 <= number < self.size:
            raise IndexError(f"group {number} of a table of {self.size}")
        table = self
        while table._pairs is None:
            previous = table.previous
            start = 0 if previous is None else previous.size
            if number >= start:
                within = number - start
                return (table.tail_sessions()[within],
                        table._names[table._tail_numbers[within]])
            table = previous  # type: ignore[assignment]
        return table._pairs[number]


def decode_group_table(body: dict[str, Any], known: StoredGroups | None = None) -> StoredGroups:
    """A table map's group table, either form, linked to `known` (the previous
    segment's) where it starts with it; the columns are checked, no pair is made
    (DecodeError: malformed)."""
    if "group_table" in body:
        group_table = tuple(map(tuple, body["group_table"]))
        if set(map(len, group_table)) - {2} or \
                set(map(type, chain.from_iterable(group_table))) - {str}:
            raise DecodeError("group table entry is not [session_id, role]")
        if known is not None:
            group_table = share_prefix(group_table, known.pairs())
        return StoredGroups.of_pairs(group_table)  # type: ignore[arg-type]
    sessions, numbers, names = body["group_sessions"], body["group_roles"], body["role_names"]
    return StoredGroups.open_columns(sessions, numbers, names, known)


def share_prefix(decoded: tuple[Any, ...], known: tuple[Any, ...]) -> tuple[Any, ...]:
    """`decoded` (equal), holding `known`'s objects where `known` starts it: a group table
    starts with the previous segment's, else each open one holds a copy of every earlier pair.

    >>> known = (("w1", "user"),)
    >>> share_prefix((("w1", "user"), ("w2", "user")), known)[0] is known[0]
    True
    """
    size = len(known)
    return known + decoded[size:] if size and decoded[:size] == known else decoded
