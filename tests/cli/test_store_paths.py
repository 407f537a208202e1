"""Every command refuses a store path it cannot use the same way: one line naming the path,
exit status 2, no traceback (`engine.store.registry.open_store`), run as users run it
(`python -m engine` in a fresh process; permission cases held to the permission bits)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.backends.sqlite.backend import DATABASE_NAME
from engine.model import SessionWindow
from engine.store.registry import check_store_folder, open_backend
from engine.transcript.store_handle import META_NAME

#: Each reading command with the arguments it needs after `--store DIR`.
READERS = {
    "search": ["saffron"],
    "explain": ["saffron"],
    "stats": [],
    "serve": [],
    "verify": [],
    "dump": [],
}
#: Each writing command with its arguments (`import` gets a source below).
WRITERS = {"reconcile": [], "compact": [], "import": None, "archive": ["agent:main:main"],
           "restore": ["agent:main:main"]}


def make_store(path: Path, backend: str = "reference") -> Path:
    """A store with one searchable message ("saffron rice")."""
    store = open_backend(path, backend=backend, create=True)
    with store.transaction() as transaction:
        transaction.put_window(SessionWindow("s1", "agent:main:main"))
        transaction.append_event("s1", {"type": "message", "id": "m1", "parentId": None,
                                        "timestamp": 1767225600000,
                                        "message": {"role": "user", "content": "saffron rice"}})
    store.close()
    return path


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A flat messages file to import."""
    path = tmp_path / "messages.jsonl"
    path.write_text(json.dumps({"sessionKey": "agent:main:main", "sessionId": "new",
                                "messageId": "q", "role": "user", "timestamp": 1,
                                "text": "imported"}) + "\n", encoding="utf-8")
    return path


def arguments(command: str, store: Path, source: Path) -> list[str]:
    extra = READERS.get(command, WRITERS.get(command))
    return [command, "--store", str(store), *(extra if extra is not None else [str(source)])]


def access_of(command: str) -> str:
    return "read" if command in READERS else "write"


@pytest.mark.parametrize("command", [*READERS, "reconcile", "compact"])
def test_a_missing_store_is_the_same_error_for_every_command(
        session_search, tmp_path: Path, source: Path, command: str) -> None:
    missing = tmp_path / "nothing"
    session_search(*arguments(command, missing, source)).refused(
        2, f"{missing}: no session-search store here")
    assert not missing.exists()


@pytest.mark.parametrize("command", [*READERS, *WRITERS])
def test_a_file_is_not_a_store(session_search, tmp_path: Path, source: Path,
                               command: str) -> None:
    file = tmp_path / "a-file"
    file.write_text("x", encoding="utf-8")
    session_search(*arguments(command, file, source)).refused(2, f"{file}: not a folder")


@pytest.mark.parametrize("command", [*READERS, "reconcile", "compact"])
def test_an_empty_folder_holds_no_store(session_search, tmp_path: Path, source: Path,
                                        command: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    session_search(*arguments(command, empty, source)).refused(
        2, f"{empty}: no session-search store here (the folder is empty)")


@pytest.mark.parametrize("command", ["search", "stats", "reconcile", "compact", "import"])
def test_a_folder_of_other_files_holds_no_store(session_search, tmp_path: Path,
                                                source: Path, command: str) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("x", encoding="utf-8")
    session_search(*arguments(command, busy, source)).refused(
        2, f"{busy}: folder is not empty and holds no store")
    assert [path.name for path in busy.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize(("existing", "asked"), [("reference", "sqlite"), ("sqlite", "reference")])
def test_a_store_of_the_other_backend_is_named(session_search, tmp_path: Path, source: Path,
                                              existing: str, asked: str) -> None:
    store = make_store(tmp_path / "store", existing)
    session_search("import", "--store", str(store), "--backend", asked, str(source)).refused(
        2, f"{store}: store was created for backend {existing!r}, not {asked!r}")


def test_import_makes_the_store_folder_but_refuses_missing_parents_without_create(
        session_search, tmp_path: Path, source: Path) -> None:
    deep = tmp_path / "a" / "b" / "store"
    session_search("import", "--store", str(deep), str(source)).refused(
        2, f"{deep}: parent folder {deep.parent} does not exist; pass --create to make it, "
           "or check the path")
    assert not (tmp_path / "a").exists()
    created = session_search("import", "--store", str(deep), "--create", "--json", str(source))
    assert (created.status, created.err) == (0, "")
    assert json.loads(created.out)["created"] is True
    assert (deep / META_NAME).is_file()
    beside = tmp_path / "beside"  # the parent exists: no flag needed
    assert session_search("import", "--store", str(beside), str(source)).status == 0


def test_a_failed_import_with_create_removes_the_folders_it_made(
        session_search, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sessionKey": "global"}\n', encoding="utf-8")
    deep = tmp_path / "a" / "b" / "store"
    outcome = session_search("import", "--store", str(deep), "--create", str(bad))
    outcome.refused(2, f'{bad}:1: missing "sessionId"')
    assert not (tmp_path / "a").exists()


# ----- permission denied, as a user the permission bits apply to ------------------------


@pytest.mark.parametrize("command", [*READERS, *WRITERS])
def test_an_unreadable_store_is_refused_naming_the_access_needed(
        unprivileged, chmod, tmp_path: Path, source: Path, command: str) -> None:
    store = make_store(tmp_path / "store")
    chmod(store, 0)
    unprivileged(*arguments(command, store, source)).refused(
        2, f"{store}: permission denied ({command} needs {access_of(command)} access)")


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
@pytest.mark.parametrize("command", list(WRITERS))
def test_a_read_only_store_is_refused_to_writers_and_still_searched(
        unprivileged, chmod, tmp_path: Path, source: Path, command: str, backend: str) -> None:
    store = make_store(tmp_path / "store", backend)
    chmod(store, 0o555)
    unprivileged(*arguments(command, store, source)).refused(
        2, f"{store}: permission denied ({command} needs write access)")
    searched = unprivileged("search", "--store", str(store), "--json", "saffron")
    assert (searched.status, searched.err) == (0, "")
    assert [hit["messageId"] for hit in json.loads(searched.out)["hits"]] == ["m1"]


def test_a_read_only_file_in_the_store_is_named(unprivileged, chmod, tmp_path: Path) -> None:
    store = make_store(tmp_path / "store", "sqlite")
    database = store / "agents" / "main" / "agent" / DATABASE_NAME
    chmod(database, 0o444)
    unprivileged("reconcile", "--store", str(store)).refused(
        2, f"{database}: permission denied (reconcile needs write access)")


def test_an_unreadable_file_in_the_store_is_named(unprivileged, chmod, tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    chmod(store / META_NAME, 0)
    for command in ("search", "stats"):
        unprivileged(*arguments(command, store, Path())).refused(
            2, f"{store / META_NAME}: permission denied ({command} needs read access)")


def test_a_new_store_under_an_unwritable_parent_is_refused(
        unprivileged, chmod, tmp_path: Path, source: Path) -> None:
    parent = tmp_path / "locked"
    parent.mkdir()
    chmod(parent, 0o555)
    unprivileged("import", "--store", str(parent / "store"), str(source)).refused(
        2, f"{parent / 'store'}: permission denied (import needs write access to {parent} "
           "to create it)")
    assert list(parent.iterdir()) == []


def test_a_store_inside_an_unsearchable_folder_is_refused(
        unprivileged, chmod, tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    store = make_store(outer / "store")
    chmod(outer, 0)
    unprivileged("search", "--store", str(store), "saffron").refused(
        2, f"{store}: permission denied (search needs read access)")


# ----- a reader racing a writer (issue 34, item 2) -----------------------------------------


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_a_file_a_writer_removes_meanwhile_is_no_permission_problem(
        tmp_path: Path, backend: str) -> None:
    """A live writer removes and replaces files while a reader checks the folder (SQLite's
    `-shm`, a merged index's files): the reader's access check must not call a vanished
    file unreadable. Here a thread creates and removes a file and a folder in every
    folder of the store while readers open it, a bounded number of times."""
    import shutil
    import sys
    import threading

    store = make_store(tmp_path / "store", backend)
    folders = [store, *(path for path in store.rglob("*") if path.is_dir())]
    stop = threading.Event()
    churned = [0]

    def churn() -> None:
        while not stop.is_set():
            for folder in folders:
                for number in range(20):
                    (folder / f"racing-{number}.tmp").write_bytes(b"x")
                    (folder / f"racing-{number}.d").mkdir()
                    (folder / f"racing-{number}.d" / "inside").write_bytes(b"x")
            for folder in folders:
                for number in range(20):
                    (folder / f"racing-{number}.tmp").unlink()
                    shutil.rmtree(folder / f"racing-{number}.d")
            churned[0] += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # interleave the two threads finely
    writer = threading.Thread(target=churn, daemon=True)
    writer.start()
    try:
        for _ in range(300):
            check_store_folder(store, "search")
    finally:
        stop.set()
        writer.join(timeout=30)
        sys.setswitchinterval(interval)
    assert churned[0] > 0


def store_files(store: Path, backend: str) -> dict[str, Path]:
    """A store's files a writer writes: its lock, and a partition's log or database."""
    partition = store / "agents" / "main"
    if backend == "sqlite":
        return {"LOCK": store / "LOCK", "database": partition / "agent" / DATABASE_NAME}
    log = next(partition.glob("transcripts/*.log"))
    return {"LOCK": store / "LOCK", "log": log}


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_a_writer_refuses_a_store_holding_a_symbolic_link(
        session_search, tmp_path: Path, source: Path, backend: str) -> None:
    """A store file replaced by a link to a file elsewhere is never written through: every
    writing command refuses the store, naming the link, and the file elsewhere is unchanged;
    readers still read."""
    for name in store_files(make_store(tmp_path / f"probe-{backend}", backend), backend):
        store = make_store(tmp_path / f"{name}-{backend}", backend)
        linked = store_files(store, backend)[name]
        outside = tmp_path / f"outside-{name}-{backend}"
        outside.write_bytes(linked.read_bytes())
        before = outside.read_bytes()
        linked.unlink()
        linked.symlink_to(outside)
        for command in (*WRITERS, "delete", "verify --repair"):
            words = command.split()
            if words[0] == "delete":
                argv = ["delete", "--store", str(store), "agent:main:main"]
            elif words[0] == "verify":
                argv = ["verify", "--store", str(store), "--repair"]
            else:
                argv = arguments(command, store, source)
            outcome = session_search(*argv)
            assert outcome.status == 2 and str(linked) in outcome.err \
                and "symbolic link" in outcome.err, (command, outcome.err)
        assert outside.read_bytes() == before
        if name == "LOCK":  # a reader takes no lock: it still searches
            searched = session_search("search", "--store", str(store), "--json", "saffron")
            assert searched.status == 0, searched.err
