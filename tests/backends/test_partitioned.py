"""The partitioned store's routing: one partition per agent, on both backends.

Writes go to the partition of the window's agent (`global` and `unknown` to `main`'s); a
transaction across agents commits after its block, all or nothing across agents through
the store's journal (its crash cases: tests/durability/test_commit_journal.py), and
writes nothing when the block fails; an agent id that cannot name a folder is refused; a search scoped
to an agent without a partition answers nothing and creates nothing; old single-index
stores are refused with the way to re-import.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.backends.reference.backend import ReferenceBackend
from engine.cli import main
from engine.errors import InputError, StoreError, UnknownSession, UnsupportedVersion
from engine.model import SearchRequest, SearchResult, SessionWindow
from engine.store.archives import archive_session
from engine.store.partitioned import PartitionedSnapshotStore, PartitionedStore
from engine.store.registry import detect_backend, open_backend

BACKENDS = ("reference", "sqlite", "postgres")
NO_HITS = SearchResult(hits=(), truncated=False, indexing=False)


def message(message_id: str, parent: str | None, text: str, timestamp: float = 5) -> dict:
    return {"type": "message", "id": message_id, "parentId": parent, "timestamp": timestamp,
            "message": {"role": "user", "content": text}}


def put(store: PartitionedStore, session_id: str, key: str, *texts: str) -> None:
    """One transaction: a window and one message per text."""
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow(session_id, key))
        parent = None
        for number, text in enumerate(texts):
            parent_id = f"{session_id}-{number}"
            transaction.append_event(session_id, message(parent_id, parent, text))
            parent = parent_id


def agent_folders(path: Path) -> list[str]:
    return sorted(child.name for child in (path / "agents").iterdir())


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def store(tmp_path: Path, backend_name: str) -> Iterator[PartitionedStore]:
    opened = open_backend(tmp_path / "store", backend=backend_name, create=True)
    try:
        yield opened
    finally:
        opened.close()


def test_each_agent_is_a_partition_and_global_and_unknown_live_in_main(
        store: PartitionedStore, tmp_path: Path, backend_name: str) -> None:
    with store.transaction() as transaction:
        for session_id, key in (("w", "agent:work_team:main"), ("g", "global"),
                                ("u", "unknown"), ("m", "agent:main:main"),
                                ("x", "agent:workxteam:main")):
            transaction.put_window(SessionWindow(session_id, key))
            transaction.append_event(session_id, message(f"{session_id}1", None, "saffron"))
    assert list(store.partitions()) == agent_folders(tmp_path / "store") == [
        "main", "work_team", "workxteam"]
    assert [window.session_id for window in store.partition("main").windows()] == ["g", "u", "m"]
    assert [window.session_id for window in store.partition("work_team").windows()] == ["w"]
    # store-wide reads: partitions in agent order, each in insertion order
    assert [window.session_id for window in store.windows()] == ["g", "u", "m", "w", "x"]
    assert store.session_keys() == ["global", "unknown", "agent:main:main",
                                    "agent:work_team:main", "agent:workxteam:main"]
    assert store.window("x").session_key == "agent:workxteam:main"
    assert [event.seq for event in store.events("g")] == [0] and store.event_count("u") == 1
    assert store.windows_of("unknown") == [SessionWindow("u", "unknown")]
    with pytest.raises(UnknownSession, match="unknown session id 'nope'"):
        store.window("nope")
    layout = {"reference": "agents/main/store.meta",
              "sqlite": "agents/main/agent/openclaw-agent.sqlite",
              "postgres": "agents/main/postgres.json"}[backend_name]
    assert (tmp_path / "store" / layout).is_file()
    assert detect_backend(tmp_path / "store") == backend_name
    keys = {hit.session_key for hit in store.search(SearchRequest("saffron", agent_id="main")).hits}
    assert keys == {"agent:main:main", "global", "unknown"}
    keys = {hit.session_key for hit in store.search(SearchRequest("saffron", agent_id="work_team")).hits}
    assert keys == {"agent:work_team:main"}


def test_a_failed_block_writes_nothing_in_any_partition(store: PartitionedStore,
                                                         tmp_path: Path) -> None:
    put(store, "m", "agent:main:main", "kept words")
    before = (store.windows(), store.stats())
    refused = pytest.raises(InputError, match='an event needs a non-blank string "type"')
    with refused, store.transaction() as transaction:
        transaction.append_event("m", message("m-late", "m-0", "lost words"))
        transaction.put_window(SessionWindow("n", "agent:newcomer:main"))  # a new partition
        transaction.append_event("n", message("n1", None, "lost words"))
        transaction.append_event("n", {"type": ""})  # refused: the block fails
    assert (store.windows(), store.stats()) == before
    assert agent_folders(tmp_path / "store") == ["main"] and list(store.partitions()) == ["main"]
    assert store.search(SearchRequest("lost", session_keys=())) == NO_HITS
    put(store, "n", "agent:newcomer:main", "second try")  # the agent's partition is made again
    assert agent_folders(tmp_path / "store") == ["main", "newcomer"]


@pytest.mark.parametrize(("key", "problem"), [
    ("agent:..:main", "agent id '..' is not a valid folder name"),
    ("agent:.:main", "agent id '.' is not a valid folder name"),
    ("agent:a/b:main", "agent id 'a/b' contains '/'"),
    ("agent:a\\b:main", "agent id 'a\\\\b' contains '\\\\'"),
    ("agent:a\x00b:main", "agent id 'a\\x00b' contains '\\x00'"),
])
def test_an_agent_id_that_cannot_name_a_folder_is_refused_and_nothing_written(
        store: PartitionedStore, tmp_path: Path, key: str, problem: str) -> None:
    put(store, "m", "agent:main:main", "kept")
    with pytest.raises(InputError) as refused, store.transaction() as transaction:
        transaction.put_window(SessionWindow("ok", "agent:fine:main"))
        transaction.put_window(SessionWindow("bad", key))
    assert str(refused.value) == problem
    assert agent_folders(tmp_path / "store") == ["main"]
    assert sorted(path.name for path in (tmp_path / "store").iterdir()) == [
        "LOCK", "agents", "generations", "store.meta"]  # generations: from the first put
    assert [window.session_id for window in store.windows()] == ["m"]


def test_a_window_cannot_move_to_another_agents_partition(store: PartitionedStore) -> None:
    put(store, "w", "agent:work:main", "words")
    refused = pytest.raises(InputError, match='window "w" belongs to agent "work" and cannot move')
    with refused, store.transaction() as transaction:
        transaction.put_window(SessionWindow("w", "global"))
    with store.transaction() as transaction:  # another key of the same partition is fine
        transaction.put_window(SessionWindow("w", "agent:work:other"))
    assert store.window("w").session_key == "agent:work:other"


def test_delete_session_is_routed_to_the_keys_partition(store: PartitionedStore) -> None:
    put(store, "w", "agent:work:main", "saffron work")
    put(store, "g", "global", "saffron global")
    with store.transaction() as transaction:
        assert transaction.delete_session("agent:work:main") == 1
        assert transaction.delete_session("agent:absent:main") == 0
        assert transaction.delete_session("agent:..:main") == 0
    assert [window.session_id for window in store.windows()] == ["g"]
    with pytest.raises(UnknownSession):
        store.window("w")
    with pytest.raises(UnknownSession), store.transaction() as transaction:
        transaction.append_event("w", message("late", None, "gone"))
    put(store, "w", "agent:main:again", "the id is free again, in main")
    assert store.window("w").session_key == "agent:main:again"


def test_a_search_for_an_agent_without_partition_answers_nothing_and_creates_nothing(
        store: PartitionedStore, tmp_path: Path, backend_name: str) -> None:
    put(store, "w", "agent:work:main", "saffron")
    store.close()
    reader = open_backend(tmp_path / "store")
    try:
        for request in (SearchRequest("saffron", agent_id="ghost"),
                        SearchRequest("saffron"),  # the default agent main has none here
                        SearchRequest("saffron", session_keys=("agent:ghost:main", "global"))):
            assert reader.search(request) == NO_HITS
        assert agent_folders(tmp_path / "store") == ["work"]
        with pytest.raises(InputError, match="agent id '..' is not a valid folder name"):
            reader.search(SearchRequest("saffron", agent_id=".."))
        with pytest.raises(InputError, match="agent id is empty"):
            reader.search(SearchRequest("saffron", agent_id=""))
        with pytest.raises(StoreError, match="read-only"), reader.transaction():
            pass
    finally:
        reader.close()


def failing_commits(store: PartitionedStore, monkeypatch: pytest.MonkeyPatch,
                    commits: list[str], failing: set[str]) -> None:
    """Make each partition's commit record its agent in `commits`, or fail (rolled
    back) while its agent is in `failing`."""
    for agent_id, partition in store.partitions().items():
        original = partition.transaction

        def recording(original: Any = original, agent_id: str = agent_id) -> Any:
            context = original()

            class Recorded:
                def __enter__(self) -> Any:
                    return context.__enter__()

                def __exit__(self, *exception: object) -> Any:
                    if exception[0] is None and agent_id in failing:
                        context.__exit__(RuntimeError, RuntimeError("disk full"), None)
                        raise RuntimeError(f"commit of {agent_id} failed")
                    if exception[0] is None:
                        commits.append(agent_id)
                    return context.__exit__(*exception)

            return Recorded()

        monkeypatch.setattr(partition, "transaction", recording)


def test_a_transaction_across_agents_commits_at_its_decider_and_finishes_the_rest(
        store: PartitionedStore, monkeypatch: pytest.MonkeyPatch) -> None:
    for agent in ("b", "a", "c"):
        put(store, agent, f"agent:{agent}:main", "first")
    commits: list[str] = []
    failing = {"b"}
    failing_commits(store, monkeypatch, commits, failing)
    with pytest.raises(StoreError, match="the transaction committed, but agent 'b'"):
        with store.transaction() as transaction:
            transaction.append_event("c", message("c-late", "c-0", "second"))
            transaction.append_event("c", message("c-later", "c-late", "second"))
            for agent in ("b", "a"):
                transaction.append_event(agent, message(f"{agent}-late", f"{agent}-0", "second"))
    # c (written to first) decided; a followed; b failed, and failed again from the journal
    assert commits == ["c", "a"]
    assert {agent: store.event_count(agent) for agent in "abc"} == {"a": 2, "b": 1, "c": 3}
    journal = store.space.root / "commit.journal"
    assert journal.exists()
    assert any(problem.location == str(journal) for problem in store.problems())
    failing.clear()
    with store.transaction() as transaction:  # first finishes b's share from the journal
        transaction.append_event("b", message("b-new", "b-late", "third"))
    assert {agent: store.event_count(agent) for agent in "abc"} == {"a": 2, "b": 3, "c": 3}
    assert commits == ["c", "a", "b", "b"] and not journal.exists()


def test_a_failed_decider_commits_nothing_anywhere(
        store: PartitionedStore, monkeypatch: pytest.MonkeyPatch) -> None:
    for agent in ("a", "b"):
        put(store, agent, f"agent:{agent}:main", "first")
    commits: list[str] = []
    failing_commits(store, monkeypatch, commits, {"b"})
    with pytest.raises(RuntimeError, match="commit of b failed"):
        with store.transaction() as transaction:  # b, written to first, decides
            for number in range(3):
                transaction.append_event("b", message(f"b-{number + 1}", f"b-{number}", "x"))
            transaction.append_event("a", message("a-late", "a-0", "second"))
            transaction.put_window(SessionWindow("n", "agent:new:main"))
    assert commits == []
    assert {agent: store.event_count(agent) for agent in "ab"} == {"a": 1, "b": 1}
    assert "new" not in store.partitions() and not (store.space.root / "commit.journal").exists()


def test_counts_are_summed_with_a_breakdown_per_agent(store: PartitionedStore) -> None:
    put(store, "m", "agent:main:main", "one", "two")
    put(store, "g", "global", "three")
    put(store, "w", "agent:work:main", "four")
    per_agent = store.partition_stats()
    assert list(per_agent) == ["main", "work"]
    assert [(counts["agents"], counts["sessions"], counts["windows"], counts["events"])
            for counts in per_agent.values()] == [(1, 2, 2, 3), (1, 1, 1, 1)]
    totals = store.stats()
    assert (totals["agents"], totals["sessions"], totals["windows"], totals["events"]) == (
        2, 3, 3, 4)
    assert totals["messages_indexed"] == 4
    assert totals["bytes"] == sum(counts["bytes"] for counts in per_agent.values())
    assert not store.index_status() and store.reconcile() == 0


def test_readers_see_partitions_made_after_they_opened(tmp_path: Path, backend_name: str) -> None:
    writer = open_backend(tmp_path / "store", backend=backend_name, create=True)
    put(writer, "m", "agent:main:main", "saffron main")
    reader = open_backend(tmp_path / "store")
    try:
        put(writer, "w", "agent:work:main", "saffron work")
        if isinstance(reader, PartitionedSnapshotStore):  # the reference reads a snapshot
            assert list(reader.partitions()) == ["main"]
            reader.refresh()
        assert list(reader.partitions()) == ["main", "work"]
        assert len(reader.search(SearchRequest("saffron", session_keys=())).hits) == 2
        assert reader.window("w").session_key == "agent:work:main"
    finally:
        reader.close()
        writer.close()


def age_the_agents_folder(store_path: Path) -> None:
    """Set `agents/`'s modification time an hour back: a listing made now is kept."""
    folder = store_path / "agents"
    old = folder.stat().st_mtime_ns - 3_600 * 10**9
    os.utime(folder, ns=(old, old))


def test_a_reader_keeps_its_listing_of_partitions_only_while_the_folder_is_unchanged(
        tmp_path: Path) -> None:
    """The SQLite reader lists `agents/` before every read, but reuses the last listing
    while the folder's time is unchanged and settled; a partition made later moves the
    folder's time, so it is found at the next read."""
    path = tmp_path / "store"
    writer = open_backend(path, backend="sqlite", create=True)
    put(writer, "m", "agent:main:main", "saffron main")
    age_the_agents_folder(path)
    reader = open_backend(path)
    try:
        assert list(reader.partitions()) == ["main"]
        put(writer, "w", "agent:work:main", "saffron work")  # a rename into agents/
        assert list(reader.partitions()) == ["main", "work"]
        age_the_agents_folder(path)
        assert list(reader.partitions()) == ["main", "work"]
        # A folder that appears while the time is made to stay as it was is not listed:
        # the listing was kept (the time moves with every real change, see the docstring).
        before = (path / "agents").stat().st_mtime_ns
        (path / "agents" / "other").mkdir()
        os.utime(path / "agents", ns=(before, before))
        assert list(reader.partitions()) == ["main", "work"]
    finally:
        reader.close()
        writer.close()


def test_an_immutable_reader_keeps_status_answers_until_a_writer_appears(
        tmp_path: Path) -> None:
    """A SQLite reader of a file no writer has open (immutable) keeps its searches'
    status answers (`indexing`, archived windows in scope); when a writer opens the file
    (a `-wal` appears), the reader reopens and reads the status again."""
    path = tmp_path / "store"
    writer = open_backend(path, backend="sqlite", create=True)
    put(writer, "m", "agent:main:main", "saffron main")
    put(writer, "n", "agent:main:other", "saffron other")
    writer.close()
    reader = open_backend(path)
    try:
        request = SearchRequest("saffron", session_keys=())
        first = reader.search(request)
        assert (len(first.hits), first.archived_transcripts_excluded) == (2, 0)
        assert reader.search(request) == first
        writer = open_backend(path, writer=True)
        try:
            archive_session(writer, "agent:main:other")
            answer = reader.search(request)
            assert ([hit.session_id for hit in answer.hits],
                    answer.archived_transcripts_excluded) == (["m"], 1)
        finally:
            writer.close()
    finally:
        reader.close()
    # a writer that comes and goes between two reads of a new immutable reader: its -wal,
    # or, where a clean close removed it, the file's time and size tell the reader
    reader = open_backend(path)
    try:
        assert len(reader.search(request).hits) == 1
        writer = open_backend(path, writer=True)
        put(writer, "p", "agent:main:third", "saffron third")
        writer.close()
        answer = reader.search(request)
        assert ({hit.session_id for hit in answer.hits},
                answer.archived_transcripts_excluded) == ({"m", "p"}, 1)
    finally:
        reader.close()


def test_a_writer_search_inside_a_rolled_back_transaction_leaves_no_status_behind(
        store: PartitionedStore) -> None:
    """The SQLite writer keeps status answers until its connection changes a row; a
    search inside a transaction that is then rolled back must not leave the rolled-back
    state's answer kept (a rollback does not move the change count)."""
    put(store, "m", "agent:main:main", "saffron main")
    request = SearchRequest("saffron", session_keys=())
    assert store.search(request).archived_transcripts_excluded == 0
    with pytest.raises(RuntimeError), store.transaction() as transaction:
        transaction.put_window(SessionWindow("old", "agent:main:old", archived=True))
        # SQLite and PostgreSQL read their own open transaction; the reference backend
        # reads the last commit (a snapshot), so it does not see the window yet
        inside = store.search(request).archived_transcripts_excluded
        assert inside == (0 if store.name == "reference" else 1)
        raise RuntimeError("abandon")
    answer = store.search(request)
    assert ([hit.session_id for hit in answer.hits], answer.archived_transcripts_excluded,
            answer.indexing) == (["m"], 0, False)


def test_capabilities_follow_the_partitions(tmp_path: Path) -> None:
    reference = open_backend(tmp_path / "r", backend="reference", create=True)
    sqlite = open_backend(tmp_path / "s", backend="sqlite", create=True)
    try:
        assert type(reference) is PartitionedSnapshotStore and reference.name == "reference"
        assert type(sqlite) is PartitionedStore and sqlite.name == "sqlite"
    finally:
        reference.close()
        sqlite.close()


def test_a_second_writer_is_refused(store: PartitionedStore, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="locked by another writer"):
        open_backend(tmp_path / "store", writer=True)


# ---- old single-index stores --------------------------------------------------------


REIMPORT = ("this store keeps every agent in one index, a layout this build no longer "
            "opens (each agent is a partition of its own, as in OpenClaw); re-import its "
            "sources into a new store: session-search import --store NEW SOURCE...")


def test_an_old_single_index_reference_store_is_refused_saying_how_to_reimport(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "old"
    single = ReferenceBackend.create(old)  # what `open_backend` made before partitions
    with single.transaction() as transaction:
        transaction.put_window(SessionWindow("m", "agent:main:main"))
    single.close()
    with pytest.raises(UnsupportedVersion) as refused:
        open_backend(old)
    assert str(refused.value) == f"{old}: {REIMPORT}"
    with pytest.raises(UnsupportedVersion):
        detect_backend(old)
    assert main(["search", "--store", str(old), "saffron"]) == 1
    assert capsys.readouterr().err == f"session-search: error: {old}: {REIMPORT}\n"
    assert main(["import", "--store", str(old), str(tmp_path / "absent.jsonl")]) == 2


def test_an_old_single_index_sqlite_store_is_refused(tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    (old / "session-search.sqlite").write_bytes(b"")
    with pytest.raises(UnsupportedVersion, match="re-import its sources"):
        open_backend(old, writer=True)
    with pytest.raises(UnsupportedVersion, match="re-import its sources"):
        open_backend(old, backend="sqlite", create=True)


def test_a_partition_folder_is_not_a_store(store: PartitionedStore, tmp_path: Path) -> None:
    put(store, "m", "agent:main:main", "words")
    store.close()
    folder = tmp_path / "store" / "agents" / "main"
    with pytest.raises(UnsupportedVersion) as refused:
        open_backend(folder)
    assert str(refused.value) == (f"{folder}: this is the partition of agent 'main' of the "
                                  f"store {tmp_path / 'store'}; open that store instead")


# ---- through the command line -------------------------------------------------------


def test_importing_a_flat_file_with_a_bad_agent_id_imports_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], backend_name: str) -> None:
    flat = tmp_path / "flat.jsonl"
    lines = [{"sessionKey": "agent:main:main", "sessionId": "ok", "messageId": "m1",
              "role": "user", "timestamp": 1767225600000, "text": "fine"},
             {"sessionKey": "agent:..:main", "sessionId": "bad", "messageId": "m1",
              "role": "user", "timestamp": 1767225600001, "text": "escape"}]
    flat.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    store = tmp_path / "store"
    assert main(["import", "--store", str(store), "--backend", backend_name, str(flat)]) == 2
    assert capsys.readouterr().err == (
        f"session-search: error: {flat}:2: agent id '..' is not a valid folder name\n")
    assert not store.exists()  # the store this import made is removed again
    assert not (tmp_path / "agents").exists() and sorted(
        path.name for path in tmp_path.iterdir()) == ["flat.jsonl"]
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(lines[0]) + "\n", encoding="utf-8")
    assert main(["import", "--store", str(store), "--backend", backend_name, str(good)]) == 0
    capsys.readouterr()
    assert main(["import", "--store", str(store), str(flat)]) == 2
    capsys.readouterr()
    with open_backend(store) as reopened:
        assert [window.session_id for window in reopened.windows()] == ["ok"]
        assert list(reopened.partitions()) == ["main"]


def test_stats_and_dump_walk_the_partitions(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            backend_name: str) -> None:
    store = open_backend(tmp_path / "store", backend=backend_name, create=True)
    put(store, "m", "agent:main:main", "saffron")
    put(store, "w", "agent:work:main", "saffron", "again")
    store.close()
    assert main(["stats", "--store", str(tmp_path / "store"), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert (stats["windows"], stats["events"]) == (2, 3)
    assert {agent: counts["events"] for agent, counts in stats["partitions"].items()} == {
        "main": 1, "work": 2}
    assert main(["stats", "--store", str(tmp_path / "store")]) == 0
    text = capsys.readouterr().out
    header = "\nagent  sessions  windows  events"
    assert header in text and "\nmain " in text and "\nwork " in text
    assert main(["dump", "--store", str(tmp_path / "store"), "--json"]) == 0
    files = {entry["name"]: entry["kind"] for entry in json.loads(capsys.readouterr().out)["files"]}
    assert (files["store.meta"], files["LOCK"]) == ("partitioned", "lock")
    if backend_name == "reference":
        assert files["agents/work/store.meta"] == "store"
        assert files["agents/work/LOCK"] == "lock"
        assert files["agents/work/transcripts/segment-000001.log"] == "segment"
        assert main(["dump", "--store", str(tmp_path / "store"),
                     "agents/work/transcripts/segment-000001.log", "--json"]) == 0
        records = json.loads(capsys.readouterr().out)["records"]
        assert [record["kind"] for record in records][:2] == ["window", "event"]
    elif backend_name == "sqlite":
        assert files["agents/work/agent/openclaw-agent.sqlite"] == "sqlite database"
    assert main(["reconcile", "--store", str(tmp_path / "store"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"reconciled": 0, "rows": 0, "orphans": 0,
                                                   "indexing": False}


@pytest.mark.parametrize("request_", [
    SearchRequest("  shared ", session_keys=()),  # every partition, merged
    SearchRequest("shared", session_keys=("agent:main:a", "agent:ops:b")),  # two, merged
    SearchRequest("shared", agent_id="ops", limit=40),  # one partition
])
def test_a_store_checks_a_request_once_however_many_partitions_answer(
        store: PartitionedStore, request_: SearchRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.query import checked_request

    put(store, "w1", "agent:main:a", "shared words")
    put(store, "w2", "agent:ops:b", "shared words too")
    calls: list[SearchRequest] = []
    real = checked_request.validate_request

    def counted(request: SearchRequest) -> str:
        calls.append(request)
        return real(request)

    monkeypatch.setattr(checked_request, "validate_request", counted)
    result = store.search(request_)
    assert len(result.hits) == (1 if request_.agent_id == "ops" else 2)
    assert calls == [request_]  # the store's door checked it; no partition checked again
