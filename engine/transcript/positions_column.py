"""Every window's event positions in catalog order, one column at a time, without a copy.

Owns: `PositionsColumn`, one column (log file numbers, offsets or lengths) of the event
positions of a catalog's windows, concatenated in catalog order, as a sequence whose
slices are arrays made when taken: what a streamed checkpoint save reads
(`checkpoint.checkpoint_of(..., whole_positions=False)`; the checkpoint's bytes take a
slice of each column per positions record, `engine.codec.catalog_file_pieces`). Must not touch:
the catalog (its windows' positions are read, never changed: it must not change while
a column is read) or the bytes (`engine.codec`).

Why. The save used to copy every position into three arrays of its own first (a log
file number, an offset and a length an event, held through the whole save), at the
commit where a large import peaks;
a column holds one pointer a window and gives out one record's slice at a time (a
window kept as runs expands its part of the slice then, `EventPositions.extend_column`). Its
oracle is the whole arrays (`checkpoint_of` with `whole_positions=True`, what it was):
the same slices, tested in `tests/transcript/test_positions_column.py`.

>>> from engine.transcript.event_positions import EventPositions
>>> first, empty, second = EventPositions(), EventPositions(), EventPositions()
>>> for offset in (8, 20, 31):
...     first.append_at(1, offset, 12)
>>> second.append_at(2, 8, 5)
>>> column = PositionsColumn.of([first, empty, second], "offsets")
>>> len(column), column[1:4], column[-1], list(column)
(4, array('q', [20, 31, 8]), 8, [8, 20, 31, 8])
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import overload

from engine.transcript.event_positions import EventPositions

#: Each column's array type, as the catalog (and the checkpoint file) keep it.
TYPECODES = {"file_numbers": "i", "offsets": "q", "lengths": "i"}


class PositionsColumn(Sequence[int]):
    """One column of the positions of `positions` (each window's, in order), joined."""

    __slots__ = ("_attribute", "_length", "_positions", "_starts", "_typecode")

    def __init__(self, positions: Sequence[EventPositions], starts: array,
                 attribute: str) -> None:
        """The column `attribute` of `positions`, window i's starting at `starts[i]`
        (`of` makes them; every window's arrays must be loaded)."""
        self._positions = positions
        self._starts = starts
        self._attribute = attribute
        self._typecode = TYPECODES[attribute]
        self._length = starts[-1] + len(positions[-1]) if positions else 0

    @classmethod
    def of(cls, positions: Sequence[EventPositions], attribute: str) -> PositionsColumn:
        """The column `attribute` of `positions`, their arrays loaded now (what loading
        raises). Windows without events are left out."""
        held = [events for events in positions if len(events)]
        for events in held:
            events.load()
        starts = array("q", accumulate((len(events) for events in held[:-1]), initial=0))
        return cls(held, starts if held else array("q"), attribute)

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> array: ...

    def __getitem__(self, index: int | slice) -> int | array:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._length)
            if step != 1:
                raise ValueError("a positions column is sliced with step 1 only")
            return self._slice(start, stop)
        number = index + self._length if index < 0 else index
        if not 0 <= number < self._length:
            raise IndexError("position index out of range")
        return self._slice(number, number + 1)[0]

    def __iter__(self) -> Iterator[int]:
        for events in self._positions:  # a copy a window: no view held between items
            part = array(self._typecode)
            events.extend_column(part, self._attribute, 0, len(events))
            yield from part

    def _slice(self, start: int, stop: int) -> array:
        result = array(self._typecode)
        positions, starts = self._positions, self._starts
        window = bisect_right(starts, start) - 1
        while start < stop:
            events = positions[window]
            first = starts[window]
            low, high = start - first, min(len(events), stop - first)
            events.extend_column(result, self._attribute, low, high)
            start = first + high
            window += 1
        return result
