"""The case of a session key in history (issue 27, item 6).

OpenClaw stores every key in one form (`engine.model.canonical_session_key`: lower-cased
but for opaque peer ids) and its Gateway reads a given key in that form, so every
spelling of a key opens its session. The store writes keys in that form; `chat.history`
(`read_history`) reads a given key in it, and names the key in it; a store written before
keys were stored in that form (a partition holding `agent:main:Mixed`) is still read by
the key as given. The tool's resolution is checked against the real OpenClaw in
`tests/oracles/test_openclaw_history_targets.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import HistoryRequest, read_history
from engine.errors import UnknownSession
from engine.model import SessionWindow
from engine.store.registry import open_backend
from tests.history.transcripts import BASE_TIME, Transcript, new_store, write

BACKENDS = ("reference", "sqlite", "postgres")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_key_written_with_capitals_is_stored_lower_cased_and_read_in_any_case(
        tmp_path: Path, backend: str) -> None:
    transcript = Transcript("w1", "agent:main:Telegram:Group:42")
    transcript.messages("m", 3)
    store = new_store(tmp_path, backend)
    try:
        write(store, transcript)
        assert store.session_keys() == ["agent:main:telegram:group:42"]
        for spelling in ("agent:main:Telegram:Group:42", "AGENT:MAIN:TELEGRAM:GROUP:42",
                         " agent:main:telegram:group:42 "):
            page = read_history(store, HistoryRequest(spelling))
            assert page.session_key == "agent:main:telegram:group:42"
            assert [message["content"] for message in page.messages] == [
                "text of m0", "text of m1", "text of m2"]
        with pytest.raises(UnknownSession, match="agent:main:Nope"):  # named as given
            read_history(store, HistoryRequest("agent:main:Nope"))
    finally:
        store.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_partition_written_before_keys_were_lower_cased_is_read_by_the_key_as_given(
        tmp_path: Path, backend: str) -> None:
    store = new_store(tmp_path, backend)
    try:
        with store.transaction() as transaction:  # make the agent's partition
            transaction.put_window(SessionWindow("w0", "agent:main:other"))
        partition = store.partition("main")
        with partition.transaction() as transaction:  # below the store's door, as before
            transaction.put_window(SessionWindow("w1", "agent:main:Mixed"))
            transaction.append_event("w1", {
                "type": "message", "id": "m1", "parentId": None, "timestamp": BASE_TIME,
                "message": {"role": "user", "content": "kept as written"}},
                created_at=float(BASE_TIME))
        store.close()
        store = open_backend(tmp_path / backend)
        page = read_history(store, HistoryRequest("agent:main:Mixed"))
        assert page.session_key == "agent:main:Mixed"
        assert [message["content"] for message in page.messages] == ["kept as written"]
        with pytest.raises(UnknownSession):  # its lower-cased form names no session
            read_history(store, HistoryRequest("agent:main:mixed"))
    finally:
        store.close()
