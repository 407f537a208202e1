"""The values of the modules a store-opening command imports (a search's start-up among
them) that nothing rebuilds with `dataclasses.replace` are NamedTuples, not frozen
dataclasses: a NamedTuple's class costs a fraction of a frozen dataclass's to make, and
a fresh search pays for every class of every module it imports (issue 33, item 5). Each
module's docstring says so; this test keeps them so, and checks that they still behave
as the dataclasses did where a caller can tell: by name, by keyword, in a `match`, in
their `repr`, and equal when their fields are."""

from __future__ import annotations

import dataclasses
import sys

import pytest

from engine.cli.commands import CommandEntry
from engine.codec import FileKind
from engine.codec.catalog_file import PositionsRegion
from engine.codec.compaction_file import CompactionState
from engine.codec.framing import Damage, FileHeader, Footer, Frame
from engine.codec.log_file import (
    CommitRecord,
    DeleteSessionRecord,
    EventRecord,
    ReplaceRecord,
    WindowRecord,
)
from engine.codec.meta_file import RootMeta, StoreMeta
from engine.codec.postings_file import PostingArrays
from engine.codec.terms_file import RowTable
from engine.store.layout import PartitionKind
from engine.transcript.changes import EventAppended, SessionDeleted, TranscriptReplaced, WindowPut
from engine.transcript.checkpoint import LoadedCheckpoint
from engine.transcript.evidence import CommittedClaim
from engine.transcript.log_positions import (
    CommittedTransaction,
    LogCursor,
    RecordPosition,
    SealedLogFile,
)

VALUE_CLASSES = (
    CommandEntry, FileKind, PositionsRegion, CompactionState, Damage, FileHeader, Footer,
    Frame, CommitRecord, DeleteSessionRecord, EventRecord, ReplaceRecord, WindowRecord,
    RootMeta, StoreMeta, PostingArrays, RowTable, PartitionKind, EventAppended,
    SessionDeleted, TranscriptReplaced, WindowPut, LoadedCheckpoint, CommittedClaim,
    CommittedTransaction, RecordPosition, SealedLogFile,
)


@pytest.mark.parametrize("value_class", VALUE_CLASSES, ids=lambda cls: cls.__name__)
def test_the_start_up_values_are_named_tuples(value_class: type) -> None:
    assert issubclass(value_class, tuple) and hasattr(value_class, "_fields")
    assert not dataclasses.is_dataclass(value_class)
    # its module's docstring or its own says why (a NamedTuple without one gets a made-up one)
    said = f"{sys.modules[value_class.__module__].__doc__} {value_class.__doc__}"
    assert "NamedTuple" in said


def test_they_read_as_the_dataclasses_did() -> None:
    frame = Frame(offset=16, length=4, crc=7, payload=b"abcd")
    assert frame == Frame(16, 4, 7, b"abcd") and frame.end == 28
    assert repr(frame) == "Frame(offset=16, length=4, crc=7, payload=b'abcd')"
    assert CommittedClaim("log", 3) == CommittedClaim("log", 3, None, None, None)
    with pytest.raises(AttributeError):
        frame.offset = 0  # type: ignore[misc]
    match CommitRecord(3, 1.0):
        case CommitRecord(transaction_id=generation):
            assert generation == 3
        case _:
            pytest.fail("a record matches its class pattern")


def test_a_log_record_and_a_change_are_never_equal() -> None:
    # A record and the change it stands for can have the same fields; as dataclasses
    # they were unequal, and `change_of` returning the record would fail the tests.
    window = object()
    pairs = [(WindowRecord(window), WindowPut(window)),
             (DeleteSessionRecord("k", ("a",)), SessionDeleted("k", ("a",)))]
    for record, change in pairs:
        assert record != change and change != record and record != tuple(record)
        assert not record == change and not change == record  # noqa: SIM201
        assert change not in {record} and record not in [change]
        assert record == type(record)(*record) and hash(record) == hash(tuple(record))
        assert not record != type(record)(*record)  # noqa: SIM202


def test_values_rebuilt_with_replace_stay_dataclasses() -> None:
    # `engine.transcript.log_reader` moves a cursor on with `dataclasses.replace`.
    cursor = LogCursor()
    assert dataclasses.replace(cursor, sealed=True).sealed
