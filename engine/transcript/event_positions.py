"""A window's event positions in the log, kept compactly: runs, flat arrays, or a range of
arrays a checkpoint loaded.

Owns: `EventPositions` (one window's positions, in seq order: what the catalog holds per
window and a transaction's overlay per window it wrote) and `SharedPositions` (the
positions a checkpoint loaded, which windows share by range). Must not touch: the replay
rule or the windows (`engine.transcript.catalog`, which holds these and re-exports them),
files, or bytes (the checkpoint's columns are written by `engine.codec`; a save reads them
here a slice at a time, `engine.transcript.positions_column`).

Why apart: the catalog's module was at its size limit, and the positions are a value
with rules of their own (when a run goes on, when a window is flattened) and a clear
version to hold them to: a position at a time, `EventPositions.__getitem__`.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate, chain, islice, repeat
from operator import add, eq, sub

from engine.transcript.log_positions import RecordPosition


class SharedPositions:
    """The event positions of every window a checkpoint loaded, concatenated in catalog
    order (log file numbers int32, offsets int64, lengths int32), which `EventPositions`
    share by range: given at once, or read by `load()` the first time any of them is
    needed."""

    __slots__ = ("_arrays", "_load")

    def __init__(self, arrays: tuple[array, array, array] | None = None,
                 load: Callable[[], tuple[array, array, array]] | None = None) -> None:
        """The three arrays, or the function that reads them on first use."""
        if (arrays is None) == (load is None):
            raise ValueError("shared positions need their arrays or a way to load them")
        self._arrays = arrays
        self._load = load

    @property
    def loaded(self) -> bool:
        """Whether the arrays are in memory."""
        return self._arrays is not None

    def arrays(self) -> tuple[array, array, array]:
        """The three arrays, read now if they were not yet (raises what `load` raises,
        and tries again on the next call)."""
        arrays = self._arrays
        if arrays is None:
            assert self._load is not None
            arrays = self._arrays = self._load()
            self._load = None
        return arrays


#: How far a run's events may reach from its first offset: `EventPositions.ends` are int32.
RUN_SPAN = 2**31 - 1


class EventPositions:
    """The positions of one window's events, in seq order.

    Its own positions are runs while runs pay: events written one right after the other
    in one log file (an import's) have offsets that follow from their lengths, so a run
    keeps its log file, first seq and offset once, and each event its end counted from
    that offset (`ends`, int32: a run is cut before `RUN_SPAN`). One run's file and
    offset are `file` and `offset` alone; from the second on, `run_seqs`, `run_files`,
    `run_offsets` hold every run's (`file`, `offset`: the last's; `file` is a log file's
    number). A window whose runs would outnumber three quarters of its events (a commit
    between most two) is flattened: a log file number, offset and length an event
    (`file_numbers`, `offsets`, `lengths`).

    Positions loaded from a checkpoint are flat too, a range `[start, start + count)` of
    arrays shared by every window (`SharedPositions`: no per-window copy at open, and the
    arrays may not be read yet: they are fetched on the first use of any position); the
    first append to such a window copies its range into arrays of its own.

    The clear version of every reader is a position at a time (`self[seq]`): `to_list`
    and `extend_column` are tested against it (`tests/transcript/test_position_runs.py`).
    """

    __slots__ = ("count", "ends", "file", "file_numbers", "lengths", "offset", "offsets",
                 "run_files", "run_offsets", "run_seqs", "shared", "start")

    def __init__(self) -> None:
        """No events yet, kept as runs."""
        self.ends: array | None = array("i")  # None: flat
        self.file = self.offset = 0  # the last run's log file number and first offset
        self.run_seqs: array | None = None  # None: one run at most
        self.run_files: array | None = None
        self.run_offsets: array | None = None
        self.file_numbers: array | None = None  # flat: 4 bytes each; None: not fetched
        self.offsets: array | None = None  # 8 bytes each
        self.lengths: array | None = None  # framed lengths; payloads are <= 1 GiB
        self.start = -1  # -1: the arrays are this window's own; else the shared range's
        self.count = 0
        self.shared: SharedPositions | None = None

    @classmethod
    def ranges(cls, shared: SharedPositions, counts: array) -> list[EventPositions]:
        """Consecutive ranges of `shared`, `counts[i]` positions long for window i."""
        result = []
        start = 0
        for count in counts:
            positions = cls.__new__(cls)
            positions.ends = positions.run_seqs = positions.run_files = None
            positions.run_offsets = positions.file_numbers = positions.offsets = None
            positions.lengths, positions.file, positions.offset = None, 0, 0
            positions.start = start
            positions.count = count
            positions.shared = shared
            result.append(positions)
            start += count
        return result

    def __len__(self) -> int:
        return self.count

    def load(self) -> None:
        """Fetch the shared arrays now if they are not yet (what fetching raises)."""
        if self.ends is None and self.file_numbers is None:
            assert self.shared is not None
            self.file_numbers, self.offsets, self.lengths = self.shared.arrays()

    def append(self, position: RecordPosition) -> None:
        """Add the position of the next event."""
        self.append_at(position.file_number, position.offset, position.length)

    def append_at(self, file_number: int, offset: int, length: int) -> None:
        """Add the position of the next event, given as its three numbers."""
        ends = self.ends
        if ends:  # runs, the next event right after the last one: the run goes on
            end = offset + length - self.offset
            if offset - self.offset == ends[-1] and file_number == self.file \
                    and end <= RUN_SPAN:
                ends.append(end)
                self.count += 1
                return
        if ends is None:
            if self.start >= 0:
                self._copy_range()
            self.file_numbers.append(file_number)
            self.offsets.append(offset)
            self.lengths.append(length)
        elif self._start_run(file_number, offset):
            ends.append(length)
        else:  # flattened
            self.append_at(file_number, offset, length)
            return
        self.count += 1

    def _start_run(self, file_number: int, offset: int) -> bool:
        """Begin a run at the next event; False when the window was flattened instead."""
        count = self.count
        if count:
            run_seqs = self.run_seqs
            if run_seqs is None:
                run_seqs = self.run_seqs = array("i", (0,))
                self.run_files = array("i", (self.file,))
                self.run_offsets = array("q", (self.offset,))
            if 4 * (len(run_seqs) + 1) > 3 * (count + 1):
                self._flatten()
                return False
            run_seqs.append(count)
            self.run_files.append(file_number)
            self.run_offsets.append(offset)
        self.file, self.offset = file_number, offset
        return True

    def _flatten(self) -> None:
        """Keep these positions as three flat arrays from now on."""
        flat = array("i"), array("q"), array("i")
        for target, name in zip(flat, ("file_numbers", "offsets", "lengths")):
            self.extend_column(target, name, 0, self.count)
        self.file_numbers, self.offsets, self.lengths = flat
        self.ends = self.run_seqs = self.run_files = self.run_offsets = None

    def extend_run(self, file_number: int, offset: int, lengths: array) -> None:
        """Add the positions of the next events, written one right after the other in
        log file `file_number` from `offset`, `lengths` (an `i` array, each positive)
        long each."""
        if not lengths:
            return
        self.append_at(file_number, offset, lengths[0])
        rest = lengths[1:]
        ends = self.ends
        if not rest:
            return
        if ends is None:  # flat
            self.file_numbers.extend(array("i", (file_number,)) * len(rest))
            self.offsets.extend(accumulate(rest[:-1], initial=offset + lengths[0]))
            self.lengths.extend(rest)
            self.count += len(rest)
            return
        if ends[-1] + sum(rest) <= RUN_SPAN:  # one run goes on
            ends.extend(islice(accumulate(rest, initial=ends[-1]), 1, None))
            self.count += len(rest)
            return
        offset += lengths[0]
        for length in rest:
            self.append_at(file_number, offset, length)
            offset += length

    def holds_run(self, file_number: int, offset: int, lengths: array) -> bool:
        """Whether these are, as a run of their own, exactly the positions of events
        written one right after the other in log file `file_number` from `offset`,
        `lengths` long each (what `extend_run` would append to no positions).

        >>> positions = EventPositions()
        >>> positions.extend_run(3, 8, array("i", [10, 20]))
        >>> positions.holds_run(3, 8, array("i", [10, 20]))
        True
        >>> positions.holds_run(3, 8, array("i", [10])), positions.holds_run(2, 8,
        ...                                                 array("i", [10, 20]))
        (False, False)
        """
        ends = self.ends
        return (ends is not None and 0 < self.count == len(lengths) and self.run_seqs is None
                and self.file == file_number and self.offset == offset
                and all(map(eq, ends, accumulate(lengths))))

    def __getitem__(self, seq: int) -> RecordPosition:
        """The position of event `seq`, `0 <= seq < len(self)` (IndexError otherwise,
        in either form: a seq never counts from the end, and a shared range never reads
        past its own events)."""
        if not 0 <= seq < self.count:
            raise IndexError("event position out of range")
        ends = self.ends
        if ends is None:
            if self.file_numbers is None:
                self.load()
            index = seq + max(self.start, 0)
            return RecordPosition(self.file_numbers[index], self.offsets[index],
                                  self.lengths[index])
        run_seqs = self.run_seqs
        if run_seqs is None:
            first, file_number, offset = 0, self.file, self.offset
        else:
            run = bisect_right(run_seqs, seq) - 1
            first, file_number, offset = (run_seqs[run], self.run_files[run],
                                          self.run_offsets[run])
        begin = ends[seq - 1] if seq > first else 0
        return RecordPosition(file_number, offset + begin, ends[seq] - begin)

    def to_list(self, count: int | None = None) -> list[RecordPosition]:
        """The positions of events 0 .. `count` - 1 (default: all of them)."""
        total = self.count if count is None else count
        ends = self.ends
        if ends is None:
            return [self[seq] for seq in range(total)]
        result: list[RecordPosition] = []
        for file_number, offset, begins, low, high in self._runs_within(0, total):
            result.extend(RecordPosition(file_number, offset + begin, end - begin)
                          for begin, end in zip(begins, ends[low:high]))
        return result

    def extend_into(self, file_numbers: array, offsets: array, lengths: array) -> None:
        """Append these positions to three arrays of the same types."""
        for target, name in ((file_numbers, "file_numbers"), (offsets, "offsets"),
                             (lengths, "lengths")):
            self.extend_column(target, name, 0, self.count)

    def extend_column(self, target: array, name: str, low: int, high: int) -> None:
        """Append the `name` ("file_numbers", "offsets" or "lengths") of events `low` ..
        `high` - 1 to `target`, an array of that column's type (shared ones fetched now).

        >>> positions = EventPositions()
        >>> for file_number, offset, length in ((1, 8, 5), (1, 13, 7), (2, 8, 4)):
        ...     positions.append_at(file_number, offset, length)
        >>> offsets, lengths = array("q"), array("i")
        >>> positions.extend_column(offsets, "offsets", 1, 3)
        >>> positions.extend_column(lengths, "lengths", 0, 3)
        >>> offsets, lengths
        (array('q', [13, 8]), array('i', [5, 7, 4]))
        """
        if low >= high:
            return
        ends = self.ends
        if ends is None:
            self.load()
            base = max(self.start, 0)
            with memoryview(getattr(self, name)) as whole, \
                    whole[base + low: base + high] as part, part.cast("B") as raw:
                target.frombytes(raw)
            return
        for file_number, offset, begins, part_low, part_high in self._runs_within(low, high):
            if name == "file_numbers":
                target.extend(array("i", (file_number,)) * (part_high - part_low))
            elif name == "offsets":
                target.extend(map(add, repeat(offset), begins))
            else:
                target.extend(map(sub, ends[part_low:part_high], begins))

    def _runs_within(self, low: int, high: int
                     ) -> Iterator[tuple[int, int, Iterable[int], int, int]]:
        """For each run holding some of events `low` .. `high` - 1 (runs form): its log
        file number and first offset, the begins (ends counted from that offset) of
        those events, and their range `[part_low, part_high)`."""
        ends = self.ends
        assert ends is not None
        if high > self.count:
            raise IndexError("event position out of range")
        run_seqs = self.run_seqs
        run = 0 if run_seqs is None else bisect_right(run_seqs, low) - 1
        runs = 1 if run_seqs is None else len(run_seqs)
        while low < high:
            if run_seqs is None:
                first, file_number, offset, end = 0, self.file, self.offset, self.count
            else:
                first, file_number, offset = (run_seqs[run], self.run_files[run],
                                              self.run_offsets[run])
                end = run_seqs[run + 1] if run + 1 < runs else self.count
            part_high = min(high, end)
            begins: Iterable[int] = (ends[low - 1: part_high - 1] if low > first
                                     else chain((0,), ends[low: part_high - 1]))
            yield file_number, offset, begins, low, part_high
            low = part_high
            run += 1

    def _copy_range(self) -> None:
        self.load()
        low, high = self.start, self.start + self.count
        self.file_numbers = self.file_numbers[low:high]
        self.offsets = self.offsets[low:high]
        self.lengths = self.lengths[low:high]
        self.start = -1
        self.shared = None
