"""Transcript log record payloads: every kind round-trips; grammar violations are refused."""

from __future__ import annotations

import pytest

from engine.codec.framing import DecodeError, decode_frame_at, encode_payload
from engine.codec.log_file import (
    CommitRecord,
    DeleteSessionRecord,
    EventRecord,
    ReplaceRecord,
    WindowRecord,
    decode_log_payload,
    describe_payload,
    encode_log_record,
    is_commit_payload,
)
from engine.codec.meta_file import StoreMeta, decode_meta_file, encode_meta_file
from engine.errors import CorruptFile
from engine.model import SessionWindow

WINDOW = SessionWindow(
    "s-2", "agent:work:main", previous_session_id="s-1", reason="reset", current=True,
    title="Café", kind="chat", incognito=False, archived=True, group="g", created_at=12.5,
    extra={"chatType": "direct", "nested": [1, {"x": None}]},
)


@pytest.mark.parametrize("record", [
    WindowRecord(WINDOW),
    EventRecord("s-2", 7, 1700000000000.5, {"type": "message", "id": "ab12", "z": 1, "a": [1]}),
    DeleteSessionRecord("agent:work:main", ("s-1", "s-2")),
    ReplaceRecord("s-2", 3, True),
    ReplaceRecord("s-2", 0, False),
    CommitRecord(42, 1700000000000.0),
])
def test_every_record_kind_round_trips(record: object) -> None:
    frame = decode_frame_at(encode_log_record(record))
    decoded = decode_log_payload(frame.payload)
    assert decoded == record
    if isinstance(record, WindowRecord):
        assert decoded.window.extra == WINDOW.extra  # extra is excluded from ==
    if isinstance(record, EventRecord):
        assert list(decoded.event) == ["type", "id", "z", "a"]  # key order kept


@pytest.mark.parametrize(("value", "reason"), [
    (["w", {"session_id": "s", "session_key": "k", "colour": 1}], "unknown fields"),
    (["w", {"session_key": "k"}], "session_id is not a string"),
    (["e", "s", -1, 0.0, {}], "seq is not a natural number"),
    (["e", "s", 0, 0.0, []], "event is not a map"),
    (["d", "k", [1]], "session ids are not a list of strings"),
    (["r", "s", -1, False], "event_count is not a natural number"),
    (["r", "s", True, False], "event_count is not a natural number"),
    (["r", "s", 1, 0], "rebuild_deferred is not a boolean"),
    (["r", "s", 1], "replace record: expected 3 fields"),
    (["c", 0, 0.0], "transaction id is not a positive integer"),
    (["z"], "unknown segment record tag"),
    ({"not": "a list"}, "not a tagged list"),
])
def test_grammar_violations_raise_decode_error(value: object, reason: str) -> None:
    with pytest.raises(DecodeError, match=reason):
        decode_log_payload(encode_payload(value))


def test_commit_detection_and_description() -> None:
    assert is_commit_payload(encode_payload(["c", 3, 1.0])) is True
    assert is_commit_payload(encode_payload(["e", "s", 0, 1.0, {}])) is False
    assert describe_payload(["d", "k", ["a"]]) == {
        "kind": "delete_session", "session_key": "k", "session_ids": ["a"]}
    assert describe_payload(["c", 3, 1.0]) == {
        "kind": "commit", "transaction_id": 3, "committed_at": 1.0}


def test_meta_file_round_trip_and_damage() -> None:
    data = encode_meta_file(StoreMeta("sqlite", 5.0))
    assert decode_meta_file(data, "store.meta") == StoreMeta("sqlite", 5.0)
    damaged = bytearray(data)
    damaged[20] ^= 0xFF
    with pytest.raises(CorruptFile, match="store.meta: corrupt at byte offset"):
        decode_meta_file(bytes(damaged), "store.meta")
