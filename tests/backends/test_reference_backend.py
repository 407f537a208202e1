"""The reference backend: conformance cases, differential runs against SQLite FTS5,
lifecycle (rewind, reconcile, delete), persistence (flush, merge, reopen, readers) and
`verify`.

Every case of `engine/conformance/cases/` runs here exactly as on the SQLite backend. The
differential test feeds the same random transcripts and requests to both backends and
requires the same kernel result, scores and snippets included (SQLite 3.40.1 is the
parity target).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.backends.reference.backend import ReferenceBackend
from engine.config import EngineConfig
from engine.diagnostics.verify import verify_backend
from engine.directory import MemoryDirectory
from engine.errors import FileSystemError, QueryError, StoreError
from engine.index.check import check_index
from engine.model import SearchRequest, SessionWindow
from engine.store.registry import detect_backend, open_backend
from tests.conformance.suite import CASES, assert_case_passes, case_id, in_process_target
from tests.durability.faulty_directory import ENOSPC, Fault, FaultyDirectory

TINY = EngineConfig(index_flush_documents=3, index_merge_segments=3)


def message(message_id: str, parent: str | None, role: str, text: str, timestamp: float) -> dict:
    return {"type": "message", "id": message_id, "parentId": parent, "timestamp": timestamp,
            "message": {"role": role, "content": text}}


def add_chain(backend, session_id: str, key: str, texts: list[str], *, start: float = 0.0,
              prefix: str = "") -> None:
    """One window with a linear chain of alternating user/assistant messages."""
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow(session_id, key))
        parent = None
        for number, text in enumerate(texts):
            message_id = f"{prefix}m{number + 1}"
            role = "user" if number % 2 == 0 else "assistant"
            transaction.append_event(session_id, message(message_id, parent, role, text, start + number))
            parent = message_id


def ids(result) -> list[str]:
    return [hit.message_id for hit in result.hits]


@pytest.fixture
def backend():
    opened = ReferenceBackend.create_in(MemoryDirectory(), config=TINY)
    yield opened
    opened.close()


# ---- conformance --------------------------------------------------------------------


@pytest.fixture(scope="module")
def conformance_target():
    with in_process_target("reference") as target:
        yield target


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_conformance_case(case, conformance_target) -> None:
    assert_case_passes(conformance_target, case)


# ---- differential: the same transcripts and requests on SQLite FTS5 -----------------

WORDS = ["saffron", "Saffron.", "ballast:", "café", "CAFE", "per-session", "communication",
         "commun", "会议", "明天会议讨论", "the", "OR", "x", "naïve", "ΟΣ", "ος"]
KEYS = ["agent:main:main", "agent:main:b", "agent:work_team:main", "agent:workxteam:main", "global"]


@st.composite
def transcripts(draw):
    windows = []
    for number in range(draw(st.integers(1, 4))):
        key = draw(st.sampled_from(KEYS))
        texts = [
            " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=70 if draw(st.booleans()) else 6)))
            for _ in range(draw(st.integers(0, 8)))
        ]
        windows.append((f"s{number}", key, texts, draw(st.booleans())))
    return windows


differential_requests = st.builds(
    SearchRequest,
    query=st.one_of(
        st.sampled_from(WORDS + ["comm", "sess", "cafe 会议", "saffron the"]),
        st.lists(st.sampled_from(WORDS + ["comm", "sess", "-"]), min_size=1, max_size=3).map(" ".join),
    ),
    agent_id=st.sampled_from(["main", "work_team"]),
    limit=st.sampled_from([None, 1, 3]),
    session_keys=st.sampled_from([(), (), None, ("agent:main:main",)]),
    role=st.sampled_from([None, None, "assistant"]),
    match=st.sampled_from(["exact", "prefix"]),
    order=st.sampled_from(["relevance", "recent"]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(transcripts(), st.lists(differential_requests, min_size=1, max_size=6))
def test_same_results_as_sqlite_fts5(tmp_path_factory, windows, requests):
    from engine.backends.sqlite.backend import SqliteBackend

    folder = tmp_path_factory.mktemp("differential")
    reference = ReferenceBackend.create_in(MemoryDirectory(), config=TINY)
    sqlite = SqliteBackend.create(folder / "sqlite")
    try:
        for session_id, key, texts, rewind in windows:
            for target in (reference, sqlite):
                add_chain(target, session_id, key, texts, start=float(len(texts) % 3))
                if rewind and texts:
                    with target.transaction() as transaction:
                        transaction.append_event(session_id, {"type": "leaf", "id": f"leaf-{session_id}", "parentId": f"m{len(texts)}", "targetId": "m1"})
        for request in requests:
            assert reference.search(request) == sqlite.search(request), request
        assert reference.reconcile() == sqlite.reconcile()
        for request in requests:
            assert reference.search(request) == sqlite.search(request), request
    finally:
        reference.close()
        sqlite.close()


# ---- lifecycle ---------------------------------------------------------------------


def test_rewound_text_is_hidden_until_reconcile_then_gone(backend):
    add_chain(backend, "w", "agent:main:main", ["alpha origin", "beta abandoned"])
    with backend.transaction() as transaction:
        transaction.append_event("w", {"type": "leaf", "id": "l1", "parentId": "m2", "targetId": "m1"})
    dirty = backend.search(SearchRequest("beta", agent_id="main"))
    assert (ids(dirty), dirty.indexing) == ([], True)
    assert ids(backend.search(SearchRequest("alpha", agent_id="main"))) == []  # whole window hidden
    assert backend.index.document_count == 2  # stale rows still count in N
    assert backend.reconcile() == 1
    assert ids(backend.search(SearchRequest("beta", agent_id="main"))) == []
    clean = backend.search(SearchRequest("alpha", agent_id="main"))
    assert (ids(clean), clean.indexing) == (["m1"], False)
    assert backend.index.document_count == 1


def test_appends_after_reconcile_are_indexed_forward(backend):
    add_chain(backend, "w", "agent:main:main", ["alpha origin", "beta abandoned"])
    with backend.transaction() as transaction:
        transaction.append_event("w", {"type": "leaf", "id": "l1", "parentId": "m2", "targetId": "m1"})
    backend.reconcile()
    with backend.transaction() as transaction:
        transaction.append_event("w", message("m3", "m1", "assistant", "gamma branch", 9))
    result = backend.search(SearchRequest("gamma", agent_id="main"))
    assert (ids(result), result.indexing) == (["m3"], False)


def test_retained_window_stays_searchable_by_session_id(backend):
    add_chain(backend, "before-reset", "agent:main:main", ["a fresh start"])
    with backend.transaction() as transaction:
        transaction.put_window(SessionWindow("before-reset", "agent:main:main", current=False))
    add_chain(backend, "after-reset", "agent:main:main", ["nothing here"], prefix="n")
    assert ids(backend.search(SearchRequest("fresh", agent_id="main", session_id="before-reset"))) == ["m1"]
    assert ids(backend.search(SearchRequest("fresh", agent_id="main", session_id="after-reset"))) == []


def test_delete_removes_rows_from_search_and_statistics(backend):
    add_chain(backend, "a", "agent:main:a", ["saffron"])
    add_chain(backend, "b", "agent:main:b", ["saffron ballast"], prefix="b")
    backend.flush()
    with backend.transaction() as transaction:
        assert transaction.delete_session("agent:main:a") == 1
    assert ids(backend.search(SearchRequest("saffron", agent_id="main"))) == ["bm1"]
    assert (backend.index.document_count, backend.index.total_tokens) == (1, 2)
    assert check_index(backend.index) == []


def test_failed_transaction_indexes_nothing(backend):
    with pytest.raises(RuntimeError), backend.transaction() as transaction:
        transaction.put_window(SessionWindow("w", "agent:main:main"))
        transaction.append_event("w", message("m1", None, "user", "phantom words", 1))
        raise RuntimeError("abort")
    assert backend.index.document_count == 0
    assert ids(backend.search(SearchRequest("phantom", session_keys=()))) == []


def test_bad_requests_raise_query_errors(backend):
    with pytest.raises(QueryError, match="query must not be empty"):
        backend.search(SearchRequest("   ", agent_id="main"))
    with pytest.raises(QueryError, match="role must be one of"):
        backend.search(SearchRequest("x", agent_id="main", role="tool"))


# ---- persistence ---------------------------------------------------------------------


def test_reopen_loads_segments_and_replays_unflushed_commits():
    directory = MemoryDirectory()
    writer = ReferenceBackend.create_in(directory, config=TINY)
    add_chain(writer, "w", "agent:main:main", [f"word{number} common" for number in range(8)])
    add_chain(writer, "v", "agent:main:v", ["late common"], prefix="v")
    before = writer.search(SearchRequest("common", agent_id="main", limit=25))
    unflushed = len(writer.index.buffer)
    # No close: the last commits live only in the transcript log (a crash).
    crashed = directory.crash_copy()
    reopened = ReferenceBackend.open_in(crashed, writer=True, config=TINY)
    assert unflushed > 0
    assert reopened.search(SearchRequest("common", agent_id="main", limit=25)) == before
    assert verify_backend(reopened).ok
    reopened.close()
    writer.close()


def test_reader_sees_commits_after_refresh(tmp_path):
    writer = open_backend(tmp_path / "store", create=True)
    add_chain(writer, "w", "agent:main:main", ["first words"])
    reader = open_backend(tmp_path / "store")
    assert ids(reader.search(SearchRequest("first", agent_id="main"))) == ["m1"]
    add_chain(writer, "v", "agent:main:v", ["second words"], prefix="v")
    assert ids(reader.search(SearchRequest("second", agent_id="main"))) == []
    reader.refresh()
    assert ids(reader.search(SearchRequest("second", agent_id="main"))) == ["vm1"]
    with pytest.raises(StoreError, match="read-only"):
        reader.reconcile()
    with writer.transaction() as transaction:  # a rewind, then a reconcile by the writer
        transaction.append_event("w", {"type": "leaf", "id": "l1", "parentId": "m1", "targetId": None})
    reader.refresh()
    assert reader.search(SearchRequest("first", agent_id="main")).indexing is True
    writer.reconcile()  # its result is in the index files only, not in the transcript log
    reader.refresh()
    dirty_gone = reader.search(SearchRequest("first", agent_id="main"))
    assert (ids(dirty_gone), dirty_gone.indexing) == ([], False)
    reader.close()
    writer.close()


def test_merge_keeps_results_and_verify_passes(backend):
    for number in range(5):
        add_chain(backend, f"w{number}", "agent:main:main", [f"shared token{number}", "shared"], prefix=f"{number}")
    with backend.transaction() as transaction:
        transaction.delete_session("agent:main:main")
    add_chain(backend, "z", "agent:main:z", ["shared again"], prefix="z")
    before = backend.search(SearchRequest("shared", agent_id="main"))
    backend.merge()
    assert len(backend.index.segments) == 1 and not backend.index.deleted
    assert backend.search(SearchRequest("shared", agent_id="main")) == before
    report = verify_backend(backend)
    assert (report.ok, report.rows_committed, report.rows_expected) == (True, 1, 1)


def test_verify_reports_a_tampered_row(backend):
    add_chain(backend, "w", "agent:main:main", ["genuine text"])
    record = backend.index.document(0)
    backend.index.delete_document(0)
    from engine.model import IndexEntry

    backend.index.add_entry(
        IndexEntry("w", record.message_id, record.role, record.timestamp, "forged text", record.seq),
        ["forged", "text"],
    )
    report = verify_backend(backend)
    assert not report.ok
    assert any("differs from its message 'm1'" in problem for problem in report.problems)
    assert any("postings of term 'forged'" in problem for problem in report.problems)
    backend.rebuild_index()
    assert verify_backend(backend).ok


def test_registry_creates_and_detects_reference_stores(tmp_path):
    created = open_backend(tmp_path / "s", create=True)
    assert created.name == "reference"
    with created.transaction() as transaction:
        transaction.put_window(SessionWindow("w", "agent:main:main"))
    created.close()
    assert detect_backend(tmp_path / "s") == "reference"
    # the root is the partitioned store; the agent's partition is a reference store
    assert not ReferenceBackend.claims(tmp_path / "s")
    assert ReferenceBackend.claims(tmp_path / "s" / "agents" / "main")
    assert not ReferenceBackend.claims(tmp_path)


def test_long_messages_give_the_same_excerpts_as_sqlite(tmp_path):
    """Seeded long texts (sentence marks, repeats): snippet windows and bm25 agree."""
    import random

    from engine.backends.sqlite.backend import SqliteBackend

    generator = random.Random(20261130)
    vocabulary = ["alpha", "beta.", "gamma:", "Delta", "épée", "saffron", "x", "y", "z", "w"]
    texts = [
        " ".join(generator.choice(vocabulary) for _ in range(generator.randint(30, 160)))
        for _ in range(12)
    ]
    reference = ReferenceBackend.create_in(MemoryDirectory(), config=TINY)
    sqlite = SqliteBackend.create(tmp_path / "sqlite")
    try:
        for target in (reference, sqlite):
            add_chain(target, "long", "agent:main:main", texts)
        for query in ["saffron", "epee alpha", "gamma", "delta beta", "sa", "y z"]:
            for match in ("exact", "prefix"):
                request = SearchRequest(query, agent_id="main", limit=25, match=match)
                expected = sqlite.search(request)
                assert reference.search(request) == expected
                assert any(" … " in hit.snippet for hit in expected.hits) or not expected.hits
    finally:
        reference.close()
        sqlite.close()


def test_an_index_built_with_another_analyzer_is_rebuilt_on_open():
    from engine.analysis.profiles import get_analyzer
    from engine.index.loading import read_manifest

    directory = MemoryDirectory()
    other = ReferenceBackend.create_in(directory, analyzer=get_analyzer("unicode61", remove_diacritics=0))
    add_chain(other, "w", "agent:main:main", ["Café crème"])
    other.close()
    assert read_manifest(directory).profile.startswith("custom ")
    reopened = ReferenceBackend.open_in(directory, writer=True)
    assert ids(reopened.search(SearchRequest("cafe", agent_id="main"))) == ["m1"]
    reopened.close()
    assert read_manifest(directory).profile == "unicode61 remove_diacritics=2"


def test_lone_surrogates_are_stored_as_replacement_characters_like_sqlite(tmp_path):
    from engine.backends.sqlite.backend import SqliteBackend

    reference = ReferenceBackend.create_in(MemoryDirectory())
    sqlite = SqliteBackend.create(tmp_path / "sqlite")
    try:
        for target in (reference, sqlite):
            add_chain(target, "w", "agent:main:main", ["broken \ud800 text saffron"])
        request = SearchRequest("saffron", agent_id="main")
        assert reference.search(request) == sqlite.search(request)
        assert reference.search(request).hits[0].snippet == "broken \ufffd text saffron"
        assert verify_backend(reference).ok
    finally:
        reference.close()
        sqlite.close()


def test_transcript_reads_are_answered_like_the_sqlite_backend(backend):
    add_chain(backend, "w", "agent:main:main", ["one", "two"])
    assert [window.session_id for window in backend.windows()] == ["w"]
    assert backend.window("w").session_key == "agent:main:main"
    assert backend.windows_of("agent:main:main") == backend.windows()
    assert backend.session_keys() == ["agent:main:main"]
    assert [stored.seq for stored in backend.events("w")] == [0, 1]
    assert backend.event_count("w") == 2


def test_a_failed_automatic_flush_does_not_fail_the_committed_transaction():
    directory = FaultyDirectory(MemoryDirectory())  # indexed at its commit, then flushed
    backend = ReferenceBackend.create_in(directory, config=replace(
        TINY, stream_large_transactions=False))
    # The transaction's six log writes (header, window, three events, commit) succeed;
    # then the disk is full, from the first write of the flush that is now due.
    directory.faults = (Fault("write", directory.counts["write"] + 7, ENOSPC,
                              until_space_returns=True),)
    add_chain(backend, "w", "agent:main:main", ["one", "two", "three"])  # flush is due
    assert isinstance(backend.flush_error, FileSystemError)
    assert str(backend.flush_error).startswith("memory:index/")
    assert ids(backend.search(SearchRequest("two", agent_id="main"))) == ["m2"]
    directory.space_returns()
    add_chain(backend, "v", "agent:main:v", ["four", "five", "six"], prefix="v")
    assert backend.flush_error is None
    assert len(backend.index.buffer) == 0
    backend.close()


def test_terms_over_32_kib_are_cut_like_fts5(tmp_path):
    """Queries stop at 4,096 UTF-16 units, so only prefix queries reach long terms."""
    from engine.backends.sqlite.backend import SqliteBackend

    reference = ReferenceBackend.create_in(MemoryDirectory())
    sqlite = SqliteBackend.create(tmp_path / "sqlite")
    try:
        for target in (reference, sqlite):
            add_chain(target, "w", "agent:main:main", ["a" * 40000 + " tail", "é" * 20000, "a" * 33000])
        for query, match in (("a" * 4000, "prefix"), ("é" * 4000, "prefix"), ("a" * 4000, "exact"),
                             ("tail", "exact")):
            request = SearchRequest(query, agent_id="main", match=match)
            assert reference.search(request) == sqlite.search(request), (len(query), match)
        assert reference.index.terms_with_prefix("aaa") == ["a" * 32768]
        assert ids(reference.search(SearchRequest("a" * 4000, agent_id="main", match="prefix"))) == ["m3", "m1"]
    finally:
        reference.close()
        sqlite.close()


@pytest.mark.parametrize("file_suffix", [".terms", ".postings"])
def test_damage_inside_an_index_file_is_found_on_read_and_by_verify(file_suffix):
    """Opening reads an index file's ends and table only; a flipped byte in a record is
    reported when that record is read, and verify checks every byte."""
    directory = MemoryDirectory()
    writer = ReferenceBackend.create_in(directory, config=TINY)
    add_chain(writer, "w", "agent:main:main", [f"word{number} common" for number in range(8)])
    writer.merge()
    writer.close()
    name = next(name for name in directory.list_names("index/") if name.endswith(file_suffix))
    data = bytearray(directory.read_bytes(name))
    data[len(data) - 40] ^= 0xFF  # inside the last record, before the footer
    directory.write_atomic(name, bytes(data))
    reopened = ReferenceBackend.open_in(directory, writer=True, config=TINY)
    report = verify_backend(reopened)
    assert not report.ok
    assert any(problem.startswith(f"index: {directory.location(name)}: corrupt at byte offset")
               for problem in report.problems), report.problems
    assert "the index was not compared" in report.problems[-1]
    reopened.rebuild_index()
    assert verify_backend(reopened).ok
    reopened.close()
