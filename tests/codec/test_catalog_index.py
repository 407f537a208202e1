"""A checkpoint's index records as its reader decodes them (issue 33, item 5): the `keys`
record as tuples, kept as decoded, the same keys as the clear way (each pair copied into
tuples) and the same errors for a body of another shape; a `windows` record with the
columns a search does not read left unread until a window is built, the same windows.

Oracles: `keys_of` over the body decoded as lists, and `decode_payload` (the clear way,
as before) of the same payload; `read_catalog_file` with its windows built at once.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.codec.catalog_file import (
    WINDOW_FIELD_NAMES,
    built_windows,
    decode_window_columns,
    read_catalog_file,
)
from engine.codec.catalog_index import (
    READ_WINDOW_FIELDS,
    UnreadColumn,
    decode_index_payload,
    keys_of,
)
from engine.codec.framing import DecodeError, decode_payload, encode_payload
from engine.config import EngineConfig
from engine.directory import MemoryDirectory
from engine.model import SessionWindow
from engine.transcript.checkpoint import WindowColumns
from engine.transcript.store import TranscriptStore
from tests.transcript.test_checkpoint_streamed_save import checkpoint_bytes

names = st.text(alphabet="ab:é会\ud800", max_size=40)


def outcome(body: object) -> object:
    try:
        return keys_of(body)
    except (DecodeError, TypeError, ValueError) as error:
        return type(error), str(error)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(names, st.lists(names, max_size=4)), max_size=20))
def test_decoded_keys_are_the_clear_ones_and_kept_as_decoded(pairs):
    payload = encode_payload(["keys", [[key, session_ids] for key, session_ids in pairs]])
    value = decode_index_payload(payload)
    clear = tuple((key, tuple(session_ids)) for key, session_ids in pairs)
    assert value[0] == "keys" and keys_of(value[1]) == clear
    assert keys_of(value[1]) is value[1]  # no copy of the decoded body
    assert keys_of(decode_payload(payload)[1]) == clear


@pytest.mark.parametrize("body", [
    [["k", ["w1"], "x"]], [["k"]], [["k", "w1"]], [[1, ["w1"]]], [["k", [2]]], [["k", None]],
    [5], [], [["k", []]], [[["k"], ["w1"]]], {"k": ["w1"]},
], ids=repr)
def test_a_body_of_any_shape_gives_what_the_clear_way_gives(body):
    payload = encode_payload(["keys", body])
    assert outcome(decode_index_payload(payload)[1]) == outcome(decode_payload(payload)[1])


def test_other_records_decode_as_before():
    for value in (["sealed", [[1, 2, 3]]], ["transactions", b"", b""], ["key", [1]]):
        payload = encode_payload(value)
        assert decode_index_payload(payload) == decode_payload(payload) == value


values = st.one_of(st.none(), st.booleans(), names, st.floats(allow_nan=False),
                   st.integers(-2**40, 2**40), st.dictionaries(names, names, max_size=2))


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 40).flatmap(lambda count: st.lists(
    st.lists(values, min_size=count, max_size=count), min_size=len(WINDOW_FIELD_NAMES),
    max_size=len(WINDOW_FIELD_NAMES))))
def test_a_windows_record_decodes_to_the_clear_columns(columns):
    payload = encode_payload(["windows", list(WINDOW_FIELD_NAMES), columns, b"\0" * 4])
    value, clear = decode_index_payload(payload), decode_payload(payload)
    assert value[:2] == clear[:2] and value[3] == clear[3]
    for name, column, clear_column in zip(WINDOW_FIELD_NAMES, value[2], clear[2], strict=True):
        assert isinstance(column, list if name in READ_WINDOW_FIELDS else UnreadColumn)
        assert len(column) == len(clear_column) and list(column) == clear_column


@pytest.mark.parametrize("columns", [
    [["w"], ["k"], "not a column", *[[None]] * 12],
    [["w"], ["k"], [None, None], *[[None]] * 12],
    [["w"], ["k"], *[[None]] * 13][:-1] + [[5]],
], ids=["a column that is no array", "ragged columns", "extra not a map"])
def test_a_windows_record_of_another_shape_is_refused_alike(columns):
    payload = encode_payload(["windows", list(WINDOW_FIELD_NAMES), columns, b""])
    value, clear = decode_index_payload(payload), decode_payload(payload)
    with pytest.raises(DecodeError) as read:
        decode_window_columns(value[1], value[2])
    with pytest.raises(DecodeError) as cleared:
        decode_window_columns(clear[1], clear[2])
    assert str(read.value) == str(cleared.value)


def test_a_checkpoint_read_for_a_search_leaves_the_other_columns_unread():
    directory = MemoryDirectory()
    config = EngineConfig(checkpoint_windows_per_record=2)
    with TranscriptStore.create(directory, config=config) as store:
        for number in range(5):
            with store.transaction() as transaction:
                transaction.put_window(SessionWindow(
                    f"w{number}", f"agent:main:{number % 2}", title=f"title {number}",
                    reason="reset" if number else "initial", archived=number == 3,
                    created_at=number + 0.5, extra={"n": number}))
    data = checkpoint_bytes(directory)
    read = lambda offset, length: data[offset: offset + length]
    windows = read_catalog_file(read, len(data), "c", windows_of=WindowColumns).windows
    clear = read_catalog_file(read, len(data), "c").windows
    records = windows._records
    assert windows.scope_rows() == [(window.session_id, window.session_key, window.archived)
                                    for window in clear]
    title = WINDOW_FIELD_NAMES.index("title")
    assert all(isinstance(record[title], UnreadColumn) and record[title]._values is None
               for record in records)  # read by no scope row
    assert windows.column("title") == [f"title {number}" for number in range(5)]
    assert windows == clear == built_windows([[list(column) for column in record]
                                              for record in records])
    assert [window.extra for window in windows] == [{"n": number} for number in range(5)]


@pytest.mark.parametrize("change", [lambda payload: payload + b"\xc0",
                                    lambda payload: payload[:-3],
                                    lambda payload: payload[:12] + b"\xc1" + payload[13:]],
                         ids=["bytes after it", "cut short", "not msgpack"])
def test_a_windows_payload_that_is_no_value_is_refused_as_before(change):
    payload = change(encode_payload(["windows", list(WINDOW_FIELD_NAMES),
                                     [["w"], ["k"], *[["x"]] * 13], b"\0" * 4]))
    with pytest.raises(DecodeError) as read:
        decode_index_payload(payload)
    with pytest.raises(DecodeError) as clear:
        decode_payload(payload)
    assert str(read.value) == str(clear.value)
