"""A window's event positions kept as runs (`EventPositions`) against the clear version, a
list of `RecordPosition`s: for any appends (contiguous, with gaps, across log files, in
bulk with `extend_run`), every reader answers as the list does (a position at a time,
`to_list`, each column's slices, `holds_run`); an import's contiguous events cost one
int32 each; a window whose runs are about one an event is flattened; and a run is cut
before its events reach past `RUN_SPAN` from its first offset."""

from __future__ import annotations

from array import array
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.transcript.event_positions import RUN_SPAN, EventPositions
from engine.transcript.log_positions import RecordPosition

NAMES = ("file_numbers", "offsets", "lengths")
TYPECODES = {"file_numbers": "i", "offsets": "q", "lengths": "i"}

# One step: (file change, gap after the previous event, length, how many in bulk).
STEPS = st.lists(st.tuples(st.integers(0, 2), st.sampled_from([0, 0, 0, 3, -5]),
                           st.integers(1, 40), st.integers(0, 5)), max_size=30)


def written(steps: list[tuple[int, int, int, int]]
            ) -> tuple[EventPositions, list[RecordPosition]]:
    """The positions of `steps` (each an event appended, or a bulk `extend_run` of some
    events right after it), and the list of them, the clear version."""
    positions, expected = EventPositions(), []
    file_number, offset = 1, 8
    for file_change, gap, length, bulk in steps:
        if file_change == 2:
            file_number, offset = file_number + 1, 8
        offset = max(offset + gap, 0)
        if bulk:
            lengths = array("i", [length + number for number in range(bulk)])
            positions.extend_run(file_number, offset, lengths)
        else:
            lengths = array("i", [length])
            positions.append_at(file_number, offset, length)
        for each in lengths:
            expected.append(RecordPosition(file_number, offset, each))
            offset += each
    return positions, expected


@settings(max_examples=400, deadline=None)
@given(STEPS, st.lists(st.tuples(st.integers(0, 80), st.integers(0, 80)), max_size=5))
def test_runs_answer_as_the_list_of_positions(steps: list[tuple[int, int, int, int]],
                                              slices: list[tuple[int, int]]) -> None:
    positions, expected = written(steps)
    assert len(positions) == positions.count == len(expected)
    assert [positions[seq] for seq in range(len(expected))] == expected
    assert positions.to_list() == expected
    for count in range(len(expected) + 1):
        assert positions.to_list(count) == expected[:count]
    for index, name in enumerate(NAMES):
        column = array(TYPECODES[name], [position[index] for position in expected])
        whole = array(TYPECODES[name])
        positions.extend_column(whole, name, 0, len(expected))
        assert whole == column
        for low, high in slices:
            low, high = min(low, len(expected)), min(high, len(expected))
            part = array(TYPECODES[name])
            positions.extend_column(part, name, low, high)
            assert part == column[low:high]
    flat = array("i"), array("q"), array("i")
    positions.extend_into(*flat)
    assert list(zip(*flat)) == [tuple(position) for position in expected]
    with pytest.raises(IndexError):
        positions[len(expected)]


@settings(max_examples=200, deadline=None)
@given(STEPS)
def test_a_run_is_held_when_it_is_every_position(steps: list[tuple[int, int, int, int]]
                                                 ) -> None:
    positions, expected = written(steps)
    if not expected:
        assert not positions.holds_run(1, 8, array("i"))
        return
    first = expected[0]
    contiguous = all(
        (after.file_number, after.offset) == (before.file_number, before.offset + before.length)
        for before, after in pairwise(expected))
    lengths = array("i", [position.length for position in expected])
    assert positions.holds_run(first.file_number, first.offset, lengths) == contiguous
    assert not positions.holds_run(first.file_number, first.offset + 1, lengths)
    assert not positions.holds_run(first.file_number + 1, first.offset, lengths)
    assert not positions.holds_run(first.file_number, first.offset, lengths[:-1])


def test_an_import_costs_one_int32_an_event() -> None:
    positions = EventPositions()
    positions.extend_run(3, 8, array("i", [30] * 1000))
    for number in range(1000):
        positions.append_at(3, 30008 + 25 * number, 25)
    assert (len(positions.ends), positions.run_seqs, positions.file_numbers) == (2000, None,
                                                                                None)
    assert positions[1500] == RecordPosition(3, 30008 + 25 * 500, 25)


def test_a_window_of_runs_of_one_event_is_flattened() -> None:
    positions = EventPositions()
    for number in range(10):  # a commit record between each two
        positions.append_at(1, 8 + 40 * number, 30)
    assert positions.ends is None and len(positions.offsets) == 10
    assert positions.to_list() == [RecordPosition(1, 8 + 40 * number, 30)
                                   for number in range(10)]
    positions.append_at(2, 8, 5)
    assert positions[10] == RecordPosition(2, 8, 5) and positions.count == 11


def test_a_run_is_cut_before_it_reaches_past_its_span() -> None:
    half = (RUN_SPAN + 1) // 2
    positions = EventPositions()
    positions.append_at(1, 100, half - 1)
    positions.append_at(1, 100 + half - 1, half)  # ends at RUN_SPAN from the run's start
    positions.append_at(1, 100 + 2 * half - 1, 10)  # would end past it: a new run
    positions.extend_run(1, 100 + 2 * half + 9, array("i", [half, half, 7]))
    assert len(positions.run_seqs) == 3
    assert positions.to_list() == [
        RecordPosition(1, 100, half - 1), RecordPosition(1, 99 + half, half),
        RecordPosition(1, 99 + 2 * half, 10), RecordPosition(1, 109 + 2 * half, half),
        RecordPosition(1, 109 + 3 * half, half), RecordPosition(1, 109 + 4 * half, 7)]


def test_a_bulk_run_goes_on_up_to_its_span_and_no_further() -> None:
    """`extend_run`'s own bound: events in bulk that end exactly at `RUN_SPAN` from the
    run's first offset stay in the run; one unit more starts a new run."""
    lengths = array("i", [RUN_SPAN - 10, 4, 6])
    exact = EventPositions()
    exact.extend_run(1, 8, lengths)
    assert exact.run_seqs is None and len(exact.ends) == 3
    past = EventPositions()
    past.extend_run(1, 8, array("i", [RUN_SPAN - 10, 4, 7]))
    assert past.run_seqs is not None and len(past.run_seqs) == 2
    assert past.to_list() == [RecordPosition(1, 8, RUN_SPAN - 10),
                              RecordPosition(1, RUN_SPAN - 2, 4),
                              RecordPosition(1, RUN_SPAN + 2, 7)]


@pytest.mark.parametrize("flat", [False, True])
def test_a_seq_out_of_range_is_refused_in_either_form(flat: bool) -> None:
    positions = EventPositions()
    for number in range(3):
        positions.append_at(1, 8 + (40 if flat else 30) * number, 30)
    assert (positions.ends is None) is flat
    for seq in (-1, 3):
        with pytest.raises(IndexError):
            positions[seq]
