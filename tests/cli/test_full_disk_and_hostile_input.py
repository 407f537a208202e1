"""Issue 17 item 5 through the command line: a full disk and hostile input give one clear
line naming the file (or the field), the documented exit status, no traceback, and
nothing committed is lost.

* A full disk (a real 8 MiB tmpfs, `small_disk`) during `import` into an existing store,
  and when the import creates the store: exit 1, one line naming the file the system
  refused; the earlier imports are intact, a new store leaves nothing behind, and once
  space returns the same import goes through (so nothing of the failed one was kept).
  An SQLite store made on a full disk leaves no empty database that a later open would
  call corrupt.
* `close()` of a writer on a full disk raises a `StoreError` naming the file (not a raw
  `OSError`), releases the lock, and the committed transaction is there on reopen.
* A 400-digit integer as a window's `createdAt` (and as `created_at` through the API) is
  refused as a date with a short message; a window `extra` nested 900 deep and a
  `sessionId` holding a lone surrogate are refused on both backends, through the CLI and
  the API, with exit status 2.
* A missing index segment file is one error line naming it, and no `AttributeError`
  from a half-made read handle is printed at exit.
* A damaged or missing `store.meta` (the root's or a partition's) and a partition's
  damaged or missing database are errors naming the file, never "no session-search
  store here" or a store silently short of an agent (each damage through one command;
  `tests/durability/test_corruption_sweep.py` damages every file kind every way).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.errors import InputError, StoreError
from engine.model import SessionWindow
from engine.store.registry import open_backend
from tests.conftest import SmallDisk, postgres_configured

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "engine" / "demo_corpus"
DEMO_EVENTS = 73
BACKENDS = ("reference", "sqlite", "postgres")
#: The backends whose store lives on the disk the full-disk tests fill.
FILE_BACKENDS = ("reference", "sqlite")
DATABASE = Path("agent") / "openclaw-agent.sqlite"
#: How a full disk is worded: by the system, and by SQLite (for a database, and for the
#: shared-memory file a writer's open creates).
FULL_DISK_REASONS = ("No space left on device", "database or disk is full", "disk I/O error")


def engine(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *argv], cwd=ROOT, text=True,
                          capture_output=True, timeout=120, check=False)


def one_error_line(completed: subprocess.CompletedProcess[str], status: int) -> str:
    """The message of a refused command: exit `status`, nothing on standard output, one
    line `session-search: error: MESSAGE` on standard error; returns MESSAGE."""
    assert "Traceback" not in completed.stderr, completed.stderr
    assert "Exception ignored" not in completed.stderr, completed.stderr
    assert (completed.returncode, completed.stdout) == (status, ""), completed
    lines = completed.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("session-search: error: "), lines
    return lines[0].removeprefix("session-search: error: ")


def flat_messages(path: Path, count: int, session: str = "bulk") -> Path:
    """A flat messages file of `count` messages of about 400 bytes in one window."""
    lines = [json.dumps({"sessionKey": f"agent:main:{session}", "sessionId": session,
                         "messageId": f"{session}-{number}", "role": "user",
                         "timestamp": 1767225600000 + number,
                         "text": f"filling words number {number} " * 14})
             for number in range(count)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def stats(store: Path) -> dict[str, int]:
    completed = engine("stats", "--store", str(store), "--json")
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def corpus(folder: Path, window: dict[str, object], events: list[dict[str, object]]) -> Path:
    """A corpus folder with one window and its transcript."""
    (folder / "transcripts").mkdir(parents=True)
    (folder / "sessions.jsonl").write_text(json.dumps(window) + "\n", encoding="utf-8")
    transcript = folder / "transcripts" / f"{window['sessionId']}.jsonl"
    transcript.write_text("".join(json.dumps(event) + "\n" for event in events),
                          encoding="utf-8")
    return folder


def message(number: int = 1) -> dict[str, object]:
    return {"type": "message", "id": f"m{number}", "parentId": None,
            "timestamp": "2026-09-05T14:00:00.000Z",
            "message": {"role": "user", "content": "hello there"}}


def nested(depth: int) -> dict[str, object]:
    value: dict[str, object] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


# ----- a full disk ----------------------------------------------------------------------


@pytest.mark.parametrize("backend", FILE_BACKENDS)
def test_a_full_disk_during_import_is_one_line_and_loses_nothing(
        small_disk: SmallDisk, tmp_path: Path, backend: str) -> None:
    store = small_disk.path / "store"
    first = engine("import", "--quiet", "--backend", backend, "--store", str(store), str(DEMO))
    assert first.returncode == 0, first.stderr
    bulk = flat_messages(tmp_path / "bulk.jsonl", 600)
    small_disk.fill(leave=64 << 10)
    message_line = one_error_line(
        engine("import", "--quiet", "--store", str(store), str(bulk)), 1)
    # The file the disk refused: the log or index of agent main's partition, or (SQLite)
    # its database, or the `-shm` any agent's database needs to be opened as the writer.
    assert message_line.startswith(str(store / "agents")), message_line
    assert any(reason in message_line for reason in FULL_DISK_REASONS), message_line
    counted = stats(store)
    assert counted["events"] == DEMO_EVENTS
    small_disk.free()
    again = engine("import", "--quiet", "--store", str(store), str(bulk))
    assert again.returncode == 0, again.stderr
    assert stats(store)["events"] == DEMO_EVENTS + 600
    found = engine("search", "--store", str(store), "--json", "--agent", "main", "filling")
    assert found.returncode == 0 and json.loads(found.stdout)["hits"]


@pytest.mark.parametrize("backend", FILE_BACKENDS)
@pytest.mark.parametrize("leave", [0, 64 << 10], ids=["no-space", "some-space"])
def test_a_store_created_on_a_full_disk_leaves_nothing_behind(
        small_disk: SmallDisk, tmp_path: Path, backend: str, leave: int) -> None:
    store = small_disk.path / "store"
    bulk = flat_messages(tmp_path / "bulk.jsonl", 600)
    small_disk.fill(leave=leave)
    message_line = one_error_line(
        engine("import", "--quiet", "--backend", backend, "--store", str(store), str(bulk)), 1)
    assert message_line.startswith(str(store)), message_line
    assert any(reason in message_line for reason in FULL_DISK_REASONS), message_line
    assert not store.exists()
    small_disk.free()
    made = engine("import", "--quiet", "--backend", backend, "--store", str(store), str(bulk))
    assert made.returncode == 0, made.stderr
    assert stats(store)["events"] == 600


def test_a_sqlite_database_created_on_a_full_disk_is_whole_or_absent(
        small_disk: SmallDisk) -> None:
    from engine.backends.sqlite.backend import SqliteBackend

    folder = small_disk.path / "partition"
    small_disk.fill()
    with pytest.raises(StoreError, match="cannot create the store") as refused:
        SqliteBackend.create(folder)
    assert str(folder / "openclaw-agent.sqlite") in str(refused.value)
    assert not folder.exists() or list(folder.iterdir()) == []
    small_disk.free()
    SqliteBackend.create(folder).close()
    reopened = SqliteBackend.open(folder)
    try:
        assert reopened.windows() == []
    finally:
        reopened.close()


@pytest.mark.parametrize("backend", FILE_BACKENDS)
def test_close_on_a_full_disk_is_a_store_error_and_the_commit_survives(
        small_disk: SmallDisk, backend: str) -> None:
    store = small_disk.path / "store"
    writer = open_backend(store, backend=backend, create=True)
    with writer.transaction() as transaction:
        transaction.put_window(SessionWindow("w1", "agent:main:w1"))
        for number in range(200):
            transaction.append_event("w1", {
                "type": "message", "id": f"m{number}",
                "parentId": None if number == 0 else f"m{number - 1}", "timestamp": number,
                "message": {"role": "user", "content": f"kept words {number} " * 20}})
    small_disk.fill()
    try:
        writer.close()
    except StoreError as error:  # the reference flushes its index at close: refused
        assert str(error).startswith(str(store / "agents" / "main")), error
        assert "No space left on device" in str(error)
    else:
        assert backend == "sqlite"  # its commits leave nothing to write at close
    small_disk.free()
    with open_backend(store, writer=True) as reopened:  # the lock was released
        assert reopened.event_count("w1") == 200


HOT_WAL_WRITER = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA wal_autocheckpoint = 0")
version = connection.execute("PRAGMA user_version").fetchone()[0]
connection.execute(f"PRAGMA user_version = {version}")  # the same value: one WAL frame
print("committed", flush=True)
time.sleep(120)
"""


def test_a_sqlite_reader_on_a_full_disk_with_a_hot_wal_says_io_not_corrupt(
        small_disk: SmallDisk) -> None:
    """Issue 34, item 3: a writer killed with committed frames in its WAL leaves a hot WAL;
    a reader whose shared-memory file cannot be made on a full disk got `corrupt at byte
    offset 0: not a session-search sqlite store (disk I/O error)`. An I/O error is not
    damage: the message says what happened and that nothing was lost, and once space
    returns the same search answers."""
    import os
    import signal

    store = small_disk.path / "store"
    made = engine("import", "--quiet", "--backend", "sqlite", "--store", str(store), str(DEMO))
    assert made.returncode == 0, made.stderr
    database = store / "agents" / "main" / DATABASE
    writer = subprocess.Popen([sys.executable, "-c", HOT_WAL_WRITER, str(database)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "committed"
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
    assert database.with_name(database.name + "-wal").stat().st_size > 0
    database.with_name(database.name + "-shm").unlink()
    small_disk.fill()
    refused = one_error_line(engine("search", "--store", str(store), "--json", "--agent",
                                    "main", "hello"), 1)
    assert refused.startswith(f"{database}: cannot read: "), refused
    assert "corrupt" not in refused and "nothing in it was lost" in refused, refused
    small_disk.free()
    answered = engine("search", "--store", str(store), "--json", "--agent", "main", "hello")
    assert answered.returncode == 0, answered.stderr
    assert "hits" in json.loads(answered.stdout)


# ----- hostile values -------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_400_digit_created_at_is_refused_as_a_date(tmp_path: Path, backend: str) -> None:
    source = corpus(tmp_path / "corpus", {"sessionId": "s1", "sessionKey": "agent:main:k",
                                           "createdAt": int("9" * 400)}, [message()])
    refused = one_error_line(engine("import", "--quiet", "--backend", backend, "--store",
                                    str(tmp_path / "store"), str(source)), 2)
    assert refused == (f'{source / "sessions.jsonl"}:1: "createdAt" must be epoch milliseconds '
                       "within ±8.64e+15 (got an integer of 400 digits)")
    assert not (tmp_path / "store").exists()
    with open_backend(tmp_path / "api", backend=backend, create=True) as store:
        for created_at in (10**400, -(10**400), 2**64, 1e300):
            with pytest.raises(InputError, match="created_at must be epoch milliseconds"), \
                    store.transaction() as transaction:
                transaction.put_window(SessionWindow("w", "agent:main:w", created_at=created_at))
            with pytest.raises(InputError, match="created_at must be epoch milliseconds"), \
                    store.transaction() as transaction:
                transaction.put_window(SessionWindow("w", "agent:main:w"))
                transaction.append_event("w", message(), created_at=created_at)
        assert store.windows() == []


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("timestamp", [int("9" * 400), -int("9" * 400)], ids=["plus", "minus"])
def test_a_400_digit_timestamp_is_refused_in_flat_and_corpus_imports(
        tmp_path: Path, backend: str, timestamp: int) -> None:
    flat = tmp_path / "flat.jsonl"
    flat.write_text(json.dumps({"sessionKey": "agent:main:k", "sessionId": "s1",
                                "messageId": "m1", "role": "user", "timestamp": timestamp,
                                "text": "hi"}) + "\n", encoding="utf-8")
    refused = one_error_line(engine("import", "--quiet", "--backend", backend, "--store",
                                    str(tmp_path / "store"), str(flat)), 2)
    assert refused == (f'{flat}:1: "timestamp" an integer of 400 digits is not a date: epoch '
                       "milliseconds must be finite and within ±8.64e+15")
    source = corpus(tmp_path / "corpus", {"sessionId": "s1", "sessionKey": "agent:main:k"},
                    [{**message(), "timestamp": timestamp}])
    refused = one_error_line(engine("import", "--quiet", "--backend", backend, "--store",
                                    str(tmp_path / "store"), str(source)), 2)
    assert refused == (f'{source / "transcripts" / "s1.jsonl"}:1: "timestamp" an integer of '
                       "400 digits is not a date: epoch milliseconds must be finite and within "
                       "±8.64e+15")
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_unusable_event_timestamp_is_shown_as_its_whole_millisecond_stamp(
        tmp_path: Path, backend: str) -> None:
    """Issue 17 item 6: `"yesterday"` as an event's own timestamp, written to a store (as
    an OpenClaw state's transcript may hold it), is accepted by both backends alike
    (behaviour.md §2.3 rule 5: `Date.parse` gives NaN, so the row takes the event's
    stored `created_at`), and that stamp is whole milliseconds, as upstream's `Date.now()`
    is: a JSON integer, not the import time with a fraction. (The corpus form refuses
    such a line instead: `test_nonsense_is_refused_with_its_file_and_line`.)"""
    store = tmp_path / "store"
    before = time.time_ns() // 1_000_000
    with open_backend(store, backend=backend, create=True) as writer:
        with writer.transaction() as transaction:
            transaction.put_window(SessionWindow("s1", "agent:main:k"))
            transaction.append_event("s1", {**message(), "timestamp": "yesterday"})
        writer.reconcile()
    after = time.time_ns() // 1_000_000
    found = engine("search", "--store", str(store), "--json", "hello")
    (hit,) = json.loads(found.stdout)["hits"]
    assert type(hit["timestamp"]) is int and before <= hit["timestamp"] <= after


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_extra_nested_900_deep_is_refused(tmp_path: Path, backend: str) -> None:
    source = corpus(tmp_path / "corpus", {"sessionId": "s1", "sessionKey": "agent:main:k",
                                           "extra": nested(900)}, [message()])
    refused = one_error_line(engine("import", "--quiet", "--backend", backend, "--store",
                                    str(tmp_path / "store"), str(source)), 2)
    assert refused == f"{source / 'sessions.jsonl'}:1: extra is nested more than 512 levels deep"
    with open_backend(tmp_path / "api", backend=backend, create=True) as store:
        with pytest.raises(InputError, match="^extra is nested more than 512 levels deep$"), \
                store.transaction() as transaction:
            transaction.put_window(SessionWindow("s1", "agent:main:k", extra={"deep": nested(900)}))
        assert store.windows() == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_session_id_with_a_lone_surrogate_is_refused(tmp_path: Path, backend: str) -> None:
    expected = "session_id holds a lone surrogate (U+DC80), which cannot be stored as UTF-8 text"
    source = corpus(tmp_path / "corpus", {"sessionId": "s\udc80", "sessionKey": "agent:main:k"},
                    [])
    refused = one_error_line(engine("import", "--quiet", "--backend", backend, "--store",
                                    str(tmp_path / "store"), str(source)), 2)
    assert refused == f"{source / 'sessions.jsonl'}:1: {expected}"
    flat = tmp_path / "flat.jsonl"
    flat.write_text(json.dumps({"sessionKey": "agent:main:k", "sessionId": "s\udc80",
                                "messageId": "m1", "role": "user", "timestamp": 1,
                                "text": "hi"}) + "\n", encoding="utf-8")
    refused = one_error_line(engine("import", "--quiet", "--backend", backend, "--store",
                                    str(tmp_path / "store"), str(flat)), 2)
    assert refused == f"{flat}:1: {expected}"
    with open_backend(tmp_path / "api", backend=backend, create=True) as store:
        with pytest.raises(InputError, match=f"^{re.escape(expected)}$"), \
                store.transaction() as transaction:
            transaction.put_window(SessionWindow("s\udc80", "agent:main:k"))
        assert store.windows() == []


# ----- damaged files --------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo corpus imported once per backend (copied before each damage)."""
    folder = tmp_path_factory.mktemp("demo")
    stores = {}
    for backend in BACKENDS:
        if backend == "postgres" and not postgres_configured():
            continue  # its tests skip (or fail under CI) through the pg_dsn fixture
        store = folder / backend
        made = engine("import", "--quiet", "--backend", backend, "--store", str(store), str(DEMO))
        assert made.returncode == 0, made.stderr
        stores[backend] = store
    return stores


def damaged_copy(demo_stores: dict[str, Path], backend: str, target: Path) -> Path:
    import shutil

    shutil.copytree(demo_stores[backend], target)
    return target


def test_a_missing_index_segment_is_one_line_naming_it(
        demo_stores: dict[str, Path], tmp_path: Path) -> None:
    store = damaged_copy(demo_stores, "reference", tmp_path / "store")
    segment = store / "agents" / "main" / "index" / "segment-000001.postings"
    segment.unlink()
    for argv in (("search", "--store", str(store), "cafe"), ("stats", "--store", str(store))):
        refused = one_error_line(engine(*argv), 1)
        assert refused == f"{segment}: no such store file"


@pytest.mark.parametrize("damage", ["garbage", "empty", "flipped"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_damaged_root_meta_is_named(
        demo_stores: dict[str, Path], tmp_path: Path, backend: str, damage: str) -> None:
    store = damaged_copy(demo_stores, backend, tmp_path / "store")
    meta = store / "store.meta"
    damage_file(meta, damage)
    command = {"garbage": "search", "empty": "stats", "flipped": "import"}[damage]
    argv = {"search": ("search", "--store", str(store), "cafe"),
            "stats": ("stats", "--store", str(store)),
            "import": ("import", "--store", str(store), str(DEMO))}[command]
    refused = one_error_line(engine(*argv), 1)
    assert refused.startswith(f"{meta}: corrupt at byte offset "), refused


@pytest.mark.parametrize("damage", ["garbage", "empty", "flipped", "deleted"])
def test_a_damaged_partition_meta_is_named(
        demo_stores: dict[str, Path], tmp_path: Path, damage: str) -> None:
    store = damaged_copy(demo_stores, "reference", tmp_path / "store")
    meta = store / "agents" / "main" / "store.meta"
    damage_file(meta, damage)
    expected = (f"{meta}: no store here (missing metadata)" if damage == "deleted"
                else f"{meta}: corrupt at byte offset ")
    argv = (("import", "--store", str(store), str(DEMO)) if damage == "flipped"
            else ("stats", "--store", str(store)))
    refused = one_error_line(engine(*argv), 1)
    assert refused.startswith(expected), refused


@pytest.mark.parametrize("damage", ["garbage", "empty", "deleted"])
def test_a_damaged_or_missing_agent_database_is_named(
        demo_stores: dict[str, Path], tmp_path: Path, damage: str) -> None:
    store = damaged_copy(demo_stores, "sqlite", tmp_path / "store")
    database = store / "agents" / "main" / DATABASE
    damage_file(database, damage)
    refused = one_error_line(engine("search", "--store", str(store), "cafe"), 1)
    assert refused.startswith(str(database.parent if damage == "deleted" else database)), refused


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_store_that_lost_its_root_meta_is_named(
        demo_stores: dict[str, Path], tmp_path: Path, backend: str) -> None:
    store = damaged_copy(demo_stores, backend, tmp_path / "store")
    (store / "store.meta").unlink()
    refused = one_error_line(engine("stats", "--store", str(store)), 1)
    assert refused.startswith(f"{store / 'store.meta'}: missing: the folder holds the "
                              "partitions of a session-search store"), refused


def damage_file(path: Path, damage: str) -> None:
    """Replace `path` by garbage, empty it, flip one byte in its middle, or delete it."""
    if damage == "garbage":
        path.write_bytes(b"not a store file at all, just some words")
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "flipped":
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    else:
        path.unlink()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_store_whose_creation_was_killed_early_is_made_by_the_next_import(
        tmp_path: Path, backend: str) -> None:
    """A creation killed before `store.meta` was written leaves the `LOCK` (and perhaps
    the metadata's temporary file): the next import makes the store there."""
    store = tmp_path / "store"
    store.mkdir()
    (store / "LOCK").write_text("4242\n", encoding="utf-8")
    (store / ".tmp-store.meta-4242").write_bytes(b"half of it")
    refused = one_error_line(engine("stats", "--store", str(store)), 2)
    assert refused == f"{store}: folder is not empty and holds no store"
    made = engine("import", "--quiet", "--backend", backend, "--store", str(store), str(DEMO))
    assert made.returncode == 0, made.stderr
    assert stats(store)["events"] == DEMO_EVENTS


# ----- a session key no store can hold (issue 34, item 4) ----------------------------------

SURROGATE_KEY = "agent:main:\udc80x"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_key_with_a_lone_surrogate_is_an_unknown_key_on_both_backends(
        demo_stores: dict[str, Path], tmp_path: Path, backend: str) -> None:
    """A lone surrogate (JSON `\\udc80`, or undecodable bytes on the command line) in a
    session key: SQLite cannot bind it, and no stored key holds one, so every entry point
    answers as for any key the store lacks, on both backends alike (SQLite answered
    `-32603 internal error: UnicodeEncodeError` and the command line a traceback)."""
    import shutil

    store = tmp_path / backend
    shutil.copytree(demo_stores[backend], store)
    lines = "".join(json.dumps({"jsonrpc": "2.0", "id": number, "method": method,
                                "params": params}) + "\n"
                    for number, (method, params) in enumerate([
                        ("chat.history", {"sessionKey": SURROGATE_KEY}),
                        ("sessions_history", {"sessionKey": SURROGATE_KEY}),
                        ("sessions_history", {"sessionKey": SURROGATE_KEY,
                                              "requesterSessionKey": "agent:main:main"}),
                        ("sessions_history", {"sessionKey": "agent:main:main",
                                              "requesterSessionKey": SURROGATE_KEY})]))
    served = subprocess.run([sys.executable, "-m", "engine", "serve", "--store", str(store)],
                            cwd=ROOT, input=lines, text=True, capture_output=True, timeout=120,
                            check=False)
    assert served.returncode == 0 and "Traceback" not in served.stderr, served.stderr
    answers = [json.loads(line) for line in served.stdout.splitlines()]
    assert answers[0]["error"] == {"code": -32602,
                                   "message": "unknown session key 'agent:main:\\udc80x'"}
    assert answers[1]["result"] == answers[2]["result"] == {
        "status": "error", "error": f"No session found: {SURROGATE_KEY}"}
    assert answers[3]["result"]["sessionKey"] == "agent:main:main"
    raw = os.fsencode(str(store))
    for command, expected in [
            ("history", "unknown session key 'agent:main:\\udc80x'"),
            ("delete", (f"no session key 'agent:main:\\udc80x' in the store {store}; "
                        "nothing was deleted")),
            ("archive", ("no session 'agent:main:\\udc80x' in this store (no window has "
                         "this key)"))]:
        completed = subprocess.run(
            [sys.executable, "-m", "engine", command, "--store", raw, b"agent:main:\x80x"],
            cwd=ROOT, capture_output=True, timeout=120, check=False)
        refused = subprocess.CompletedProcess(
            completed.args, completed.returncode, completed.stdout.decode(),
            completed.stderr.decode("utf-8", "backslashreplace"))
        assert one_error_line(refused, 2) == expected, command
    assert stats(store)["events"] == DEMO_EVENTS


# ----- nonsense refused with its file and line (issue 34, item 5) ---------------------------

WINDOW_LINE = {"sessionId": "w1", "sessionKey": "agent:main:x", "createdAt": 5}
EVENT_LINE = {"type": "message", "id": "a", "parentId": None, "timestamp": 5,
              "message": {"role": "user", "content": "hi"}}
NONSENSE = {
    "event timestamp yesterday": ({}, {"timestamp": "yesterday"}, "transcripts/w1.jsonl",
                                  '"timestamp" "yesterday" is not an ISO-8601 date-time'),
    "event timestamp 1e300": ({}, {"timestamp": 1e300}, "transcripts/w1.jsonl",
                              '"timestamp" 1e+300 is not a date'),
    "blank agent id": ({"sessionKey": "agent: :x"}, {}, "sessions.jsonl",
                       "agent id ' ' is blank"),
    "300-character agent id": ({"sessionKey": f"agent:{'a' * 300}:x"}, {}, "sessions.jsonl",
                               "is 300 characters long; at most 64"),
    "50 MB session key": ({"sessionKey": "agent:main:" + "k" * (50 << 20)}, {},
                          "sessions.jsonl",
                          "session key of 52428811 characters is longer than 4096"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(NONSENSE))
def test_nonsense_is_refused_with_its_file_and_line(
        demo_stores: dict[str, Path], tmp_path: Path, backend: str, case: str) -> None:
    """Each value is refused by `import` with the source file, line 1 and the reason, the
    same on both backends, into a new store (nothing is left) and into an existing one
    (unchanged; no partition folder is made for the refused agent)."""
    import shutil

    window_change, event_change, relative, reason = NONSENSE[case]
    source = corpus(tmp_path / "corpus", {**WINDOW_LINE, **window_change},
                    [{**EVENT_LINE, **event_change}])
    fresh = tmp_path / "fresh"
    refused = one_error_line(engine("import", "--quiet", "--backend", backend, "--store",
                                    str(fresh), str(source)), 2)
    assert refused.startswith(f"{source / relative}:1: "), refused[:300]
    assert reason in refused, refused[:300]
    assert len(refused) < 1000
    assert not fresh.exists()
    existing = tmp_path / "existing"
    shutil.copytree(demo_stores[backend], existing)
    agents_before = sorted(path.name for path in (existing / "agents").iterdir())
    again = one_error_line(engine("import", "--quiet", "--store", str(existing), str(source)), 2)
    assert again == refused
    assert sorted(path.name for path in (existing / "agents").iterdir()) == agents_before
    assert stats(existing)["events"] == DEMO_EVENTS
