"""A postgres partition's schema: its numbered migrations, the bound on the indexed text,
and the refusals of a partition file that does not name its schema.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.backends.postgres import backend as postgres_backend
from engine.backends.postgres import schema
from engine.backends.postgres.backend import PostgresBackend
from engine.errors import CorruptFile, StoreError, UnsupportedVersion
from engine.model import SearchRequest, SessionWindow
from engine.search.postgres_mode import INDEXED_CHARACTERS
from engine.store.registry import open_backend
from tests.parity.strategies import AppendEvent, PutWindow, corpus_of, load_corpus
from tests.parity.test_postgres_differential import differences

pytestmark = pytest.mark.postgres


def message(message_id: str, text: str) -> dict:
    return {"type": "message", "id": message_id, "parentId": None, "timestamp": 5,
            "message": {"role": "user", "content": text}}


def write(backend: PostgresBackend, text: str) -> None:
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("w", "agent:main:main"))
        transaction.append_event("w", message("m1", text))


def found(backend: PostgresBackend, query: str) -> list[str]:
    return [hit.message_id for hit in backend.search(SearchRequest(query)).hits]


def test_a_partition_of_an_older_layout_is_migrated_by_its_writer(
        postgres_stores: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as older:
        older.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
        older.setattr(schema, "FORMAT_VERSION", 1)
        older.setattr(postgres_backend, "FORMAT_VERSION", 1)
        made = PostgresBackend.create(tmp_path / "partition")
        write(made, "harbour lights at dusk")
        made.close()
    with pytest.raises(UnsupportedVersion, match="has layout version 1; open the store as its "
                                                 "writer once"):
        PostgresBackend.open(tmp_path / "partition")
    writer = PostgresBackend.open(tmp_path / "partition", writer=True)
    try:
        assert schema.applied_version(writer.reading_connection(),
                                      writer.partition.schema) == schema.FORMAT_VERSION == 2
        assert found(writer, "dusk") == ["m1"]
    finally:
        writer.close()
    reader = PostgresBackend.open(tmp_path / "partition")
    try:
        assert found(reader, "harbour") == ["m1"]
    finally:
        reader.close()


def test_a_layout_newer_than_this_build_is_refused(postgres_stores: str, tmp_path: Path) -> None:
    made = PostgresBackend.create(tmp_path / "partition")
    made.reading_connection().execute(
        f'INSERT INTO "{made.partition.schema}".session_search_migrations (version, '
        "description) VALUES (99, 'from the future')")
    made.close()
    with pytest.raises(UnsupportedVersion, match="layout version 99, newer than this build"):
        PostgresBackend.open(tmp_path / "partition")


def test_a_text_past_the_indexed_characters_is_stored_whole_and_searched_in_its_start(
        postgres_stores: str, tmp_path: Path) -> None:
    """A text whose tsvector would pass 1 MiB was refused whole (PostgreSQL: "string is
    too long for tsvector"); its first `INDEXED_CHARACTERS` are indexed, and the
    reference's prediction agrees."""
    filler = " ".join(f"w{number:07d}" for number in range(60_000))  # ~540,000 characters
    text = "opening saffron " + filler + " closing ballast"
    assert len(text) > INDEXED_CHARACTERS
    corpus = corpus_of([[PutWindow(SessionWindow("w", "agent:main:main")),
                         AppendEvent("w", message("m1", text), 1.0)]])
    reference = open_backend(tmp_path / "reference", backend="reference", create=True,
                             expectation="postgres")
    store = open_backend(tmp_path / "postgres", backend="postgres", create=True)
    try:
        load_corpus(reference, corpus)
        load_corpus(store, corpus)
        assert store.events("w")[0].event["message"]["content"] == text
        for query, expected in (("saffron", ["m1"]), ("ballast", []), ("w0000001", ["m1"])):
            request = SearchRequest(query)
            answer = store.search(request)
            assert [hit.message_id for hit in answer.hits] == expected, query
            assert differences(answer, reference.search(request)) == []
    finally:
        reference.close()
        store.close()


def test_a_partition_file_must_name_its_own_schema(postgres_stores: str, tmp_path: Path) -> None:
    first = PostgresBackend.create(tmp_path / "first")
    second = PostgresBackend.create(tmp_path / "second")
    first.close()
    second.close()
    file = tmp_path / "first" / "postgres.json"
    value = json.loads(file.read_text())
    value["schema"] = second.partition.schema
    file.write_text(json.dumps(value))
    with pytest.raises(StoreError, match=f"holds partition '{second.partition.partition}'"):
        PostgresBackend.open(tmp_path / "first")
    PostgresBackend.discard(tmp_path / "second")
    with pytest.raises(StoreError, match=f"the schema {second.partition.schema} is not on "
                                         "the server"):
        PostgresBackend.open(tmp_path / "first")
    value["schema"] = 'x"; DROP TABLE y; --'
    file.write_text(json.dumps(value))
    with pytest.raises(CorruptFile, match="not a postgres partition file"):
        PostgresBackend.open(tmp_path / "first")
