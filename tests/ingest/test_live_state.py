"""The live import of a file-based OpenClaw state (engine.ingest.live_state), on both backends.

Each test builds the state of `test_openclaw_state.build_state`, imports it with
`live_import_into_store` into a store folder, changes the source as OpenClaw (or a user)
would, and imports again: what is new is added, nothing else, and searches see it. The
replacement tests at the end import with `import_live_state` into a store made with the
§8.2 limits shrunk, to see a large replacement wait for reconcile.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.errors import MalformedInput
from engine.ingest import import_into_store, live_import_into_store
from engine.ingest.live_marks import MARKS_FILE, StateMarks
from engine.ingest.live_state import LiveReport, import_live_state
from engine.model import SearchRequest
from engine.store.partitioned import PartitionedStore
from engine.store.registry import open_store
from tests.backends.test_replace_and_delete import SMALL_LIMITS, new_store
from tests.ingest.test_openclaw_state import build_state, message, write_jsonl

BACKENDS = ("reference", "sqlite", "postgres")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


def sessions_of(state: Path) -> Path:
    return state / "agents" / "main" / "sessions"


def append_lines(path: Path, rows: list[dict]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(row) + "\n" for row in rows))


def hits(store: Path, text: str) -> list[tuple[str, str]]:
    backend = open_store(store, "search")
    try:
        return [(hit.session_id, hit.message_id)
                for hit in backend.search(SearchRequest(text, session_keys=())).hits]
    finally:
        backend.close()


def counts(store: Path) -> tuple[int, int]:
    backend = open_store(store, "stats")
    try:
        stats = backend.stats()
        return stats["windows"], stats["events"]
    finally:
        backend.close()


def digests(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.fixture
def imported(tmp_path: Path, backend: str) -> tuple[Path, Path]:
    """A state, and a store that imported it once (5 windows, 7 events)."""
    state = build_state(tmp_path / "state")
    store = tmp_path / "store"
    outcome = live_import_into_store(store, backend, state)
    assert (outcome.imported.added, outcome.imported.events) == (5, 7)
    assert outcome.backend == backend and outcome.created
    return state, store


def test_appended_lines_only_are_added_and_searchable(imported: tuple[Path, Path]) -> None:
    state, store = imported
    live = sessions_of(state) / "uuid-1.jsonl"
    append_lines(live, [message("a1b2c3d5", "a1b2c3d4", "assistant", "zanzibar reply"),
                        message("a1b2c3d6", "a1b2c3d5", "user", "zanzibar again")])
    before = digests(state)
    report = live_import_into_store(store, None, state).imported
    assert (report.added, report.extended, report.replaced, report.events) == (0, 1, 0, 2)
    assert report.unchanged == 4
    assert counts(store) == (5, 9)
    assert sorted(hits(store, "zanzibar")) == [("uuid-1", "a1b2c3d5"), ("uuid-1", "a1b2c3d6")]
    assert hits(store, "live") == [("uuid-1", "a1b2c3d4")]  # the old message, once
    assert digests(state) == before


def test_a_new_file_is_imported(imported: tuple[Path, Path]) -> None:
    state, store = imported
    write_jsonl(sessions_of(state) / "uuid-3.jsonl", [message("f00d0001", None, "user", "quokka")])
    report = live_import_into_store(store, None, state).imported
    assert (report.added, report.extended, report.events, report.unchanged) == (1, 0, 1, 5)
    assert hits(store, "quokka") == [("uuid-3", "f00d0001")]
    assert counts(store) == (6, 8)


def test_no_change_adds_nothing_and_says_so(imported: tuple[Path, Path]) -> None:
    state, store = imported
    marks = (store / MARKS_FILE).read_bytes()
    report = live_import_into_store(store, None, state).imported
    assert not report.changed
    assert (report.events, report.unchanged) == (0, 5)
    assert report.summary() == f"state {state}: nothing new (5 windows unchanged)"
    assert counts(store) == (5, 7)
    assert (store / MARKS_FILE).read_bytes() == marks


def test_a_shrunk_file_replaces_the_transcript(imported: tuple[Path, Path]) -> None:
    state, store = imported
    live = sessions_of(state) / "uuid-1.jsonl"
    append_lines(live, [message("a1b2c3d5", "a1b2c3d4", "assistant", "zanzibar reply")])
    live_import_into_store(store, None, state)
    lines = live.read_text(encoding="utf-8").splitlines(keepends=True)
    live.write_text("".join(lines[:2]), encoding="utf-8")  # the reply is gone
    report = live_import_into_store(store, None, state).imported
    assert (report.replaced, report.added, report.events) == (1, 0, 2)
    assert hits(store, "zanzibar") == []
    assert hits(store, "live") == [("uuid-1", "a1b2c3d4")]
    # the key's other windows (two reset archives) are kept, with their events
    assert hits(store, "older") == [("uuid-1.reset.1769900000000", "00000001")]
    assert hits(store, "oldest") == [("uuid-1.reset.1769800000000", "00000002")]
    assert counts(store) == (5, 7)


def test_a_file_changed_before_its_known_end_replaces_the_transcript(
        imported: tuple[Path, Path]) -> None:
    state, store = imported
    digest = sessions_of(state) / "uuid-2.jsonl"
    write_jsonl(digest, [message("c0ffee00", None, "assistant", "walrus edited"),
                         message("c0ffee01", "c0ffee00", "user", "walrus follow-up")])
    report = live_import_into_store(store, None, state).imported
    assert (report.replaced, report.events) == (1, 2)
    assert hits(store, "digest") == []
    assert sorted(hits(store, "walrus")) == [("uuid-2", "c0ffee00"), ("uuid-2", "c0ffee01")]
    assert counts(store) == (5, 8)
    # the same bytes again: nothing new
    assert not live_import_into_store(store, None, state).imported.changed


def test_a_malformed_line_names_file_and_line_and_sets_only_its_file_aside(
        imported: tuple[Path, Path]) -> None:
    state, store = imported
    live = sessions_of(state) / "uuid-1.jsonl"
    append_lines(live, [message("a1b2c3d5", "a1b2c3d4", "assistant", "zanzibar reply")])
    bad = sessions_of(state) / "uuid-2.jsonl"
    with bad.open("a", encoding="utf-8") as handle:
        handle.write('{"type": "message", "id": "z"}\n')
    warnings: list[str] = []
    report = live_import_into_store(store, None, state, warn=warnings.append).imported
    assert report.newly_set_aside == (
        f'{bad}:2: a message event needs a "message" object',)
    assert report.set_aside == (("agents/main/sessions/uuid-2.jsonl",
                                 report.newly_set_aside[0]),)
    assert [warning.split("; ")[0] for warning in warnings] == list(report.newly_set_aside)
    assert counts(store) == (5, 8)  # the good file's new line; the bad file as it was
    assert hits(store, "zanzibar") == [("uuid-1", "a1b2c3d5")]
    assert hits(store, "digest") == [("uuid-2", "c0ffee00")]
    again = live_import_into_store(store, None, state, warn=warnings.append).imported
    assert (again.newly_set_aside, len(again.set_aside), len(warnings)) == ((), 1, 1)
    bad.write_text(bad.read_text(encoding="utf-8").splitlines(keepends=True)[0], encoding="utf-8")
    mended = live_import_into_store(store, None, state).imported
    assert (mended.set_aside, mended.events) == ((), 0)


def test_an_unfinished_last_line_waits_for_its_newline(imported: tuple[Path, Path]) -> None:
    state, store = imported
    live = sessions_of(state) / "uuid-1.jsonl"
    whole = json.dumps(message("a1b2c3d5", "a1b2c3d4", "assistant", "numbat reply")) + "\n"
    with live.open("a", encoding="utf-8") as handle:
        handle.write(whole[:30])
    report = live_import_into_store(store, None, state).imported
    assert (report.events, report.notes[-1]) == (
        0, f"{live}:3: the last line is incomplete (no newline yet); left for the next import")
    with live.open("a", encoding="utf-8") as handle:
        handle.write(whole[30:])
    report = live_import_into_store(store, None, state).imported
    assert (report.extended, report.events) == (1, 1)
    assert hits(store, "numbat") == [("uuid-1", "a1b2c3d5")]


def test_a_last_line_imported_without_its_newline_is_continued(
        imported: tuple[Path, Path]) -> None:
    state, store = imported
    digest = sessions_of(state) / "uuid-2.jsonl"
    digest.write_bytes(digest.read_bytes() + json.dumps(
        message("c0ffee01", "c0ffee00", "user", "walrus")).encode())  # no newline
    assert live_import_into_store(store, None, state).imported.events == 1
    with digest.open("a", encoding="utf-8") as handle:
        handle.write("\n" + '{"type": "message", "id": "z"}\n')
    aside = live_import_into_store(store, None, state).imported
    assert aside.newly_set_aside[0].startswith(f"{digest}:3: ")
    digest.write_bytes(digest.read_bytes()[:-len('{"type": "message", "id": "z"}\n')])
    append_lines(digest, [message("c0ffee02", "c0ffee01", "user", "walrus again")])
    assert live_import_into_store(store, None, state).imported.events == 1
    assert sorted(hits(store, "walrus")) == [("uuid-2", "c0ffee01"), ("uuid-2", "c0ffee02")]


def test_a_crash_before_the_marks_were_written_imports_nothing_twice(
        imported: tuple[Path, Path]) -> None:
    """The marks are written after the commit: old marks (or none) after a crash there
    are distrusted, and the store's events decide what is new."""
    state, store = imported
    old_marks = (store / MARKS_FILE).read_bytes()
    live = sessions_of(state) / "uuid-1.jsonl"
    append_lines(live, [message("a1b2c3d5", "a1b2c3d4", "assistant", "zanzibar reply")])
    live_import_into_store(store, None, state)
    (store / MARKS_FILE).write_bytes(old_marks)  # as if the process died before the marks
    append_lines(live, [message("a1b2c3d6", "a1b2c3d5", "user", "zanzibar again")])
    report = live_import_into_store(store, None, state).imported
    assert (report.extended, report.events, report.replaced) == (1, 1, 0)
    (store / MARKS_FILE).unlink()
    assert not live_import_into_store(store, None, state).imported.changed
    (store / MARKS_FILE).write_text("{not json", encoding="utf-8")
    report = live_import_into_store(store, None, state).imported
    assert not report.changed
    assert report.notes[0].startswith(f"{store / MARKS_FILE}: ignored (")
    assert counts(store) == (5, 9)
    assert sorted(hits(store, "zanzibar")) == [("uuid-1", "a1b2c3d5"), ("uuid-1", "a1b2c3d6")]


def test_a_store_the_plain_import_filled_is_continued(tmp_path: Path, backend: str) -> None:
    state = build_state(tmp_path / "state")
    store = tmp_path / "store"
    import_into_store(store, backend, [state])
    append_lines(sessions_of(state) / "uuid-2.jsonl",
                 [message("c0ffee01", "c0ffee00", "user", "walrus")])
    report = live_import_into_store(store, None, state).imported
    assert (report.added, report.extended, report.replaced, report.events) == (0, 1, 0, 1)
    assert hits(store, "walrus") == [("uuid-2", "c0ffee01")]


def test_a_reset_moves_the_current_window_and_keeps_the_archive_once(
        imported: tuple[Path, Path]) -> None:
    """OpenClaw's reset renames the live file to a `.reset.<stamp>` archive and starts a
    new session id (so `sessions.json` names none of the key's archives any more): the
    store's window goes on (one copy of its messages), is retired, the archives keep
    their key, and the new window is the key's current one."""
    state, store = imported
    sessions = sessions_of(state)
    (sessions / "uuid-1.jsonl").rename(sessions / "uuid-1.jsonl.reset.1769950000000")
    write_jsonl(sessions / "uuid-4.jsonl", [message("beef0001", None, "user", "fresh start")])
    index = json.loads((sessions / "sessions.json").read_text(encoding="utf-8"))
    index["agent:main:main"] = {"sessionId": "uuid-4", "updatedAt": 1769960000000}
    (sessions / "sessions.json").write_text(json.dumps(index), encoding="utf-8")
    report = live_import_into_store(store, None, state).imported
    assert (report.added, report.events, report.replaced) == (1, 1, 0)
    assert hits(store, "live") == [("uuid-1", "a1b2c3d4")]
    assert hits(store, "fresh") == [("uuid-4", "beef0001")]
    opened = open_store(store, "stats")
    try:
        windows = {window.session_id: window for window in opened.windows_of("agent:main:main")}
    finally:
        opened.close()
    assert [session_id for session_id, window in windows.items() if window.current] == ["uuid-4"]
    assert set(windows) == {"uuid-1.reset.1769800000000", "uuid-1.reset.1769900000000",
                            "uuid-1", "uuid-4"}
    assert windows["uuid-1"].extra["sourceFile"] == "uuid-1.jsonl.reset.1769950000000"
    assert not live_import_into_store(store, None, state).imported.changed


def test_a_vanished_file_keeps_its_window_with_a_note(imported: tuple[Path, Path]) -> None:
    state, store = imported
    gone = sessions_of(state) / "stray.jsonl"
    gone.unlink()
    report = live_import_into_store(store, None, state).imported
    assert f'{gone}: gone; window "stray" stays in the store' in report.notes
    assert hits(store, "orphan") == [("stray", "deadbeef")]


# ---- the database layout, without OpenClaw ------------------------------------------------
# A SQLite store of this engine keeps `agents/<agentId>/agent/openclaw-agent.sqlite` as the
# current OpenClaw does, so it can be the state a live import reads (the real OpenClaw's
# state is imported in tests/ingest/test_live_openclaw_sqlite.py).


def database_state(tmp_path: Path) -> Path:
    """A SQLite store holding `build_state`'s windows, used as a state folder."""
    source = tmp_path / "source"
    import_into_store(source, "sqlite", [build_state(tmp_path / "files")])
    return source


def test_database_windows_are_followed_event_by_event(tmp_path: Path, backend: str) -> None:
    source = database_state(tmp_path)
    store = tmp_path / "store"
    before = digests(source)
    first = live_import_into_store(store, backend, source).imported
    assert (first.added, first.events) == (5, 7)
    assert digests(source) == before
    assert not live_import_into_store(store, None, source).imported.changed
    writer = open_store(source, "import", writer=True)
    try:
        with writer.transaction() as transaction:
            transaction.append_event("uuid-2", message("c0ffee01", "c0ffee00", "user", "walrus"))
    finally:
        writer.close()
    report = live_import_into_store(store, None, source).imported
    assert (report.extended, report.events, report.unchanged) == (1, 1, 4)
    assert hits(store, "walrus") == [("uuid-2", "c0ffee01")]
    (store / MARKS_FILE).unlink()  # no marks: the events are compared, nothing is added twice
    assert not live_import_into_store(store, None, source).imported.changed
    assert counts(store) == (5, 8)


def test_a_rewritten_database_window_is_replaced(tmp_path: Path, backend: str) -> None:
    source = database_state(tmp_path)
    store = tmp_path / "store"
    live_import_into_store(store, backend, source)
    writer = open_store(source, "import", writer=True)
    try:
        (window,) = [window for window in writer.windows() if window.session_id == "uuid-2"]
        with writer.transaction() as transaction:
            transaction.delete_session(window.session_key)
            transaction.put_window(window)
            transaction.append_event("uuid-2", message("c0ffee09", None, "user", "walrus one"))
            transaction.append_event("uuid-2", message("c0ffee0a", "c0ffee09", "user", "walrus two"))
    finally:
        writer.close()
    report = live_import_into_store(store, None, source).imported
    assert (report.replaced, report.events) == (1, 2)
    assert hits(store, "digest") == []
    assert sorted(hits(store, "walrus")) == [("uuid-2", "c0ffee09"), ("uuid-2", "c0ffee0a")]
    assert counts(store) == (5, 8)


def test_a_file_that_vanishes_while_read_is_a_clear_error(imported: tuple[Path, Path]) -> None:
    from engine.ingest.live_state import _source_errors

    state, _ = imported
    gone = sessions_of(state) / "stray.jsonl"
    gone.unlink()
    with pytest.raises(MalformedInput, match=f"^{gone}: cannot read: No such file or directory$"):
        with _source_errors(gone):
            gone.stat()


# ---- replacements go through replace_transcript (issue 14 item 6; behaviour.md §8.2) ----
# The live import is given the store, so a store made with the §8.2 limits shrunk
# (`SMALL_LIMITS`: at most 3 events) makes a replacement of 4 events a large one.


@pytest.fixture
def small_store(tmp_path: Path, backend: str) -> Iterator[PartitionedStore]:
    store = new_store(tmp_path, backend, SMALL_LIMITS)
    try:
        yield store
    finally:
        store.close()


def live(store: PartitionedStore, state: Path, marks: StateMarks,
         received_at: float | None = 50.0) -> tuple[LiveReport, StateMarks]:
    return import_live_state(store, state, marks, received_at=received_at)


def found(store: PartitionedStore, text: str) -> tuple[list[tuple[str, str]], bool]:
    """The (window, message) of every hit, and the `indexing` flag."""
    result = store.search(SearchRequest(text, session_keys=()))
    return sorted((hit.session_id, hit.message_id) for hit in result.hits), result.indexing


def walrus_lines(count: int, word: str = "walrus") -> list[dict]:
    return [message(f"c0ffee{index:02d}", f"c0ffee{index - 1:02d}" if index else None,
                    "user" if index % 2 == 0 else "assistant", f"{word} {index}")
            for index in range(count)]


def test_a_large_file_replacement_stays_hidden_until_reconcile(
        tmp_path: Path, small_store: PartitionedStore) -> None:
    state = build_state(tmp_path / "state")
    _, marks = live(small_store, state, StateMarks())
    before = [window.session_id for window in small_store.windows()]
    write_jsonl(sessions_of(state) / "uuid-2.jsonl", walrus_lines(4))
    report, marks = live(small_store, state, marks, received_at=60.0)
    assert (report.replaced, report.added, report.events) == (1, 0, 4)
    assert found(small_store, "walrus") == ([], True)  # the new text waits for reconcile
    assert found(small_store, "digest") == ([], True)  # the old rows are hidden
    assert found(small_store, "live") == ([("uuid-1", "a1b2c3d4")], True)
    assert small_store.index_status()
    assert [event.created_at for event in small_store.events("uuid-2")] == [60.0] * 4
    assert small_store.reconcile() == 1
    assert found(small_store, "walrus") == (
        [("uuid-2", f"c0ffee{index:02d}") for index in range(4)], False)
    assert found(small_store, "digest") == ([], False)
    assert [window.session_id for window in small_store.windows()] == before
    assert not live(small_store, state, marks)[0].changed


def test_a_small_file_replacement_is_searchable_at_once_and_the_key_keeps_its_windows(
        tmp_path: Path, small_store: PartitionedStore) -> None:
    state = build_state(tmp_path / "state")
    _, marks = live(small_store, state, StateMarks())
    key = small_store.window("uuid-1").session_key
    order = [window.session_id for window in small_store.windows_of(key)]
    archives = {session_id: [(event.event, event.created_at)
                             for event in small_store.events(session_id)]
                for session_id in order if session_id != "uuid-1"}
    current = sessions_of(state) / "uuid-1.jsonl"
    write_jsonl(current, [message("a1b2c3d9", None, "user", "rewritten")])  # it shrank
    report, _ = live(small_store, state, marks, received_at=70.0)
    assert (report.replaced, report.events) == (1, 1)
    assert found(small_store, "rewritten") == ([("uuid-1", "a1b2c3d9")], False)
    assert found(small_store, "live") == ([], False)
    assert [window.session_id for window in small_store.windows_of(key)] == order
    assert small_store.window("uuid-1").current
    for session_id, events in archives.items():  # untouched, receipt times kept
        assert [(event.event, event.created_at)
                for event in small_store.events(session_id)] == events
    assert [event.created_at for event in small_store.events("uuid-1")] == [70.0]


def test_a_replaced_window_the_state_no_longer_calls_current_is_retired(
        tmp_path: Path, small_store: PartitionedStore) -> None:
    """A replacement and a new current window of its key in one import: the replaced
    window keeps its place and key, retained; the new one is the key's current."""
    state = build_state(tmp_path / "state")
    _, marks = live(small_store, state, StateMarks())
    sessions = sessions_of(state)
    index = json.loads((sessions / "sessions.json").read_text(encoding="utf-8"))
    index["agent:main:main"]["sessionId"] = "uuid-4"
    (sessions / "sessions.json").write_text(json.dumps(index), encoding="utf-8")
    write_jsonl(sessions / "uuid-4.jsonl", [message("f00d0004", None, "user", "newer")])
    write_jsonl(sessions / "uuid-1.jsonl", [message("a1b2c3d9", None, "user", "rewritten")])
    report, marks = live(small_store, state, marks)
    assert (report.replaced, report.added) == (1, 1)
    windows = {window.session_id: window for window in small_store.windows_of("agent:main:main")}
    assert not windows["uuid-1"].current and windows["uuid-4"].current
    assert list(windows)[:3] == ["uuid-1.reset.1769800000000", "uuid-1.reset.1769900000000",
                                 "uuid-1"]
    assert found(small_store, "rewritten") == ([("uuid-1", "a1b2c3d9")], False)
    assert found(small_store, "newer") == ([("uuid-4", "f00d0004")], False)
    assert not live(small_store, state, marks)[0].changed


def rewrite_database_window(source: Path, events: list[dict], stamps: list[float]) -> None:
    """Replace window uuid-2 of the SQLite state at `source` by `events`, each stamped."""
    writer = open_store(source, "import", writer=True)
    try:
        with writer.transaction() as transaction:
            transaction.replace_transcript("uuid-2", events, stamps)
    finally:
        writer.close()


@pytest.mark.parametrize("count", [2, 4])
def test_a_database_replacement_keeps_each_events_own_stamp(
        tmp_path: Path, small_store: PartitionedStore, count: int) -> None:
    source = database_state(tmp_path)
    _, marks = live(small_store, source, StateMarks())
    stamps = [1769940000000.0 + 1000 * index for index in range(count)]
    rewrite_database_window(source, walrus_lines(count), stamps)
    report, marks = live(small_store, source, marks, received_at=99.0)
    assert (report.replaced, report.events) == (1, count)
    assert [event.created_at for event in small_store.events("uuid-2")] == stamps
    large = count > SMALL_LIMITS.sync_rebuild_max_events
    assert found(small_store, "walrus")[1] is large
    assert found(small_store, "digest") == ([], large)
    small_store.reconcile()
    assert found(small_store, "walrus") == (
        [("uuid-2", f"c0ffee{index:02d}") for index in range(count)], False)
    assert [event.created_at for event in small_store.events("uuid-2")] == stamps
    assert not live(small_store, source, marks)[0].changed
