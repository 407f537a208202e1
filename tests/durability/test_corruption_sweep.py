"""Every kind of file of a store of each backend damaged in every way the sweep knows:
each outcome is the intact answer or one clear error naming the file, never a store
that silently holds less.

The store: the demo corpus, then 60 more messages for agent `main` (two committed
transactions in its partition, two index segments, a checkpoint). The files swept: the
root `store.meta` and `LOCK`, and every file of agent `main`'s partition (reference:
`store.meta`, `LOCK`, the transcript log, the catalog checkpoint, the index manifest and
each segment's terms and postings; SQLite: its database). The damage, on a fresh copy
each time: one byte flipped at the start, at byte 8, at a quarter, half and three
quarters of the file and at its last byte; the file cut to nothing, to half, and by one
byte; the file deleted; and, once per store, agent `main`'s whole partition folder
deleted (`agents/main`, which the root's `store.meta` lists). SQLite's database also gets one flipped byte near the end of
pages spread over the whole file (`every_page=True`, the slow run: every page), where
b-tree cells and index keys live.

The answer compared: the windows (ids, keys, titles, times), every event of every window,
the counts (not byte sizes or how the index is cut into segments), and ten searches
across every partition with their hits, excerpts and `indexing` flags. Two phases per
damage, as users meet them: a reader opens the store (`search`); then a writer opens
it, reconciles and closes (`reconcile`), and a reader answers again. Each phase must be:

* **intact**: the same answer; or
* **refused**: an `EngineError` of one line naming the damaged file (its path, or for a
  deleted database its name and folder); or
* **pending reconcile** (the reader phase only): the index was rebuilt from the
  transcripts (its manifest was lost), so windows that need reconcile are left out of
  searches that say `indexing: true`, exactly as after an import with
  `--no-reconcile`; the writer phase's reconcile must then give the intact answer.

One outcome is allowed besides, on SQLite only, and counted: SQLite keeps no checksums,
so a damaged key in an index b-tree can hide a row from the reads that use that index
(a window, some events) while the table still holds it. Such an outcome must be one
that SQLite's own `PRAGMA integrity_check` reports and that `session-search verify`
reports as a problem naming the database (it runs that check: `hidden_rows`), so it is
found by the store's own check, never invisible; the reference store has no such
outcome.
"""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engine.diagnostics.verify import verify_store
from engine.errors import EngineError
from engine.ingest.into_store import import_into_store
from engine.model import SearchRequest
from engine.store.registry import open_store

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "engine" / "demo_corpus"
QUERIES = ("cafe", "namespace", "rewrite", "alpha", "digest", "additional", "number7", "the",
           "hiring", "roadmap", "latecomer")
#: The killed writer's words: no hit in a store closed cleanly.
LATE_QUERIES = ("latecomer",)

#: The writer killed after two commits (agent `main`, two new windows of five messages),
#: before it closes: no index flush, no sealed log, no checkpoint of the last commits; a
#: SQLite partition's newest commits only in its write-ahead log.
KILLED_WRITER = r"""
import os, signal, sys
from engine.model import SessionWindow
from engine.store.registry import open_backend

store = open_backend(sys.argv[1], writer=True)
for number in range(2):
    with store.transaction() as transaction:
        session_id = f"late{number}"
        transaction.put_window(SessionWindow(session_id, f"agent:main:late{number}"))
        for index in range(5):
            transaction.append_event(session_id, {
                "type": "message", "id": f"l{number}-{index}",
                "parentId": f"l{number}-{index - 1}" if index else None,
                "timestamp": 1767225700000 + index,
                "message": {"role": "user", "content": f"latecomer words {number} {index}"}})
os.kill(os.getpid(), signal.SIGKILL)
"""
PAGE_SIZE = 4096
#: The counts that depend on how the index is cut into files, not on what it holds.
SHAPE_COUNTS = ("index_segments",)


@dataclass(frozen=True)
class Damage:
    """One way of damaging one file: `flip` the byte at `offset`, `truncate` to `offset`
    bytes, `delete` it (a folder with everything in it), or put back the `older` copy of
    it from `older_store` (the store before its writer's last transactions)."""

    relative: Path
    kind: str
    offset: int = 0
    older_store: Path | None = None

    def apply(self, store: Path) -> None:
        path = store / self.relative
        if self.kind == "older":
            assert self.older_store is not None
            shutil.copyfile(self.older_store / self.relative, path)
        elif self.kind == "flip":
            data = bytearray(path.read_bytes())
            data[self.offset] ^= 0xFF
            path.write_bytes(bytes(data))
        elif self.kind == "truncate":
            with open(path, "r+b") as file:
                file.truncate(self.offset)
        elif path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()

    def __str__(self) -> str:
        return f"{self.relative} {self.kind} {self.offset if self.kind in ('flip', 'truncate') else ''}"


def answer(store: Path) -> dict[str, Any]:
    """What a reader of the store answers (see the module docstring)."""
    opened = open_store(store, "search")
    try:
        counts = {name: value for name, value in opened.stats().items()
                  if "bytes" not in name and name not in SHAPE_COUNTS
                  and not isinstance(value, dict)}
        windows = [(window.session_id, window.session_key, window.title, window.created_at)
                   for window in opened.windows()]
        events = {session_id: [stored.event for stored in opened.events(session_id)]
                  for session_id, *_ in windows}
        searches = {}
        for query in QUERIES:
            result = opened.search(SearchRequest(query, session_keys=()))
            searches[query] = ([(hit.session_id, hit.message_id, hit.snippet)
                                for hit in result.hits], result.indexing)
        return {"counts": counts, "windows": windows, "events": events, "searches": searches}
    finally:
        opened.close()


def reconcile_as_writer(store: Path) -> None:
    """What `session-search reconcile` does: open as the writer, reconcile, close."""
    opened = open_store(store, "reconcile", writer=True)
    try:
        opened.reconcile()
    finally:
        opened.close()


def pending_reconcile(found: dict[str, Any], intact: dict[str, Any]) -> bool:
    """Whether `found` is the intact answer but for searches that say `indexing: true`
    and miss hits (and the index's row counts)."""
    if (found["windows"], found["events"]) != (intact["windows"], intact["events"]):
        return False
    stable = [name for name in intact["counts"] if not name.startswith(("messages", "index"))]
    if any(found["counts"][name] != intact["counts"][name] for name in stable):
        return False
    differing = [query for query in QUERIES if found["searches"][query] != intact["searches"][query]]
    return bool(differing) and all(found["searches"][query][1] for query in differing)


def names_the_file(error: EngineError, damage: Damage, store: Path) -> bool:
    message = str(error)
    path = store / damage.relative
    if "\n" in message:
        return False
    return str(path) in message or (damage.kind == "delete" and path.name in message
                                    and str(path.parent) in message)


def hidden_rows(store: Path, damage: Damage) -> bool:
    """Whether SQLite's integrity check reports the damaged database (see the module),
    and `verify` reports it too, as a problem naming the file (or refuses the store with
    an error naming it)."""
    if damage.relative.suffix != ".sqlite" or not (store / damage.relative).exists():
        return False
    connection = sqlite3.connect(f"file:{store / damage.relative}?mode=ro", uri=True)
    try:
        rows = connection.execute("PRAGMA integrity_check").fetchall()
    except sqlite3.DatabaseError:
        rows = []
    finally:
        connection.close()
    if rows == [("ok",)]:
        return False
    try:
        opened = open_store(store, "verify", accept_lost_commits=True)
        try:
            problems = verify_store(opened).problems
        finally:
            opened.close()
    except EngineError as error:
        return names_the_file(error, damage, store)
    return any(str(store / damage.relative) in problem for problem in problems)


def outcome(store: Path, damage: Damage, intact: dict[str, Any], *, reader: bool) -> str:
    """The outcome of one phase, or a description of what went wrong ("BAD: ...")."""
    try:
        if not reader:
            reconcile_as_writer(store)
        found = answer(store)
    except EngineError as error:
        if names_the_file(error, damage, store):
            return "refused"
        return f"BAD: an error that does not name the file: {error!r}"
    if found == intact:
        return "intact"
    if reader and pending_reconcile(found, intact):
        return "pending reconcile"
    if hidden_rows(store, damage):
        return "hidden rows (integrity_check and verify report them)"
    different = [part for part in found if found[part] != intact[part]]
    return f"BAD: a different answer, silently ({', '.join(different)})"


def damages(store: Path, relative_files: list[Path], *, every_page: bool,
            older_store: Path | None = None) -> list[Damage]:
    found = []
    for relative in relative_files:
        if older_store is not None and (older_store / relative).is_file() and (
                older_store / relative).read_bytes() != (store / relative).read_bytes():
            found.append(Damage(relative, "older", older_store=older_store))
        size = (store / relative).stat().st_size
        offsets = sorted({0, 8, size // 4, size // 2, 3 * size // 4, size - 1} & set(range(size)))
        if relative.suffix == ".sqlite":
            step = 1 if every_page else 4
            offsets = sorted({*offsets, *(page * PAGE_SIZE + PAGE_SIZE - 96
                                          for page in range(1, size // PAGE_SIZE, step))})
        found.extend(Damage(relative, "flip", offset) for offset in offsets)
        found.extend(Damage(relative, "truncate", length)
                     for length in sorted({0, size // 2, max(size - 1, 0)}))
        found.append(Damage(relative, "delete"))
    found.append(Damage(Path("agents") / "main", "delete"))
    return found


def more_messages(path: Path, count: int) -> Path:
    lines = [json.dumps({"sessionKey": "agent:main:more", "sessionId": "more",
                         "messageId": f"x{number}", "role": "user",
                         "timestamp": 1767225600000 + number,
                         "text": f"additional words number{number} appended later"})
             for number in range(count)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """A folder for the stores and their damaged copies (on a tmpfs when there is one:
    thousands of small copies)."""
    shared = Path("/dev/shm")
    folder = Path(tempfile.mkdtemp(prefix="sweep-", dir=shared if shared.is_dir() else None))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def kill_a_writer(store: Path) -> None:
    """Run `KILLED_WRITER` on `store` (see it)."""
    child = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(store)], cwd=ROOT,
                           capture_output=True, text=True, timeout=120, check=False)
    assert child.returncode == -signal.SIGKILL, child.stderr


def sweep(scratch: Path, backend: str, *, every_page: bool, killed: bool = False
          ) -> Counter[str]:
    scratch = Path(tempfile.mkdtemp(prefix=f"{backend}-", dir=scratch))  # one folder a sweep
    store = scratch / backend
    import_into_store(store, backend, [DEMO])
    import_into_store(store, None, [more_messages(scratch / f"more-{backend}.jsonl", 60)])
    older: Path | None = None
    if killed:
        older = scratch / f"older-{backend}"
        shutil.copytree(store, older)
        kill_a_writer(store)
        settled = scratch / f"settled-{backend}"
        shutil.copytree(store, settled)
        reconcile_as_writer(settled)
        intact = answer(settled)
        assert intact["counts"]["events"] == 143
    else:
        intact = answer(store)
        assert intact["counts"]["events"] == 133
    assert all(hits for query, (hits, _) in intact["searches"].items()
               if killed or query not in LATE_QUERIES), intact["searches"]
    files = sorted(relative for relative in (path.relative_to(store) for path in store.rglob("*")
                                             if path.is_file())
                   if len(relative.parts) == 1 or relative.parts[:2] == ("agents", "main"))
    kinds = {path.suffix or path.name for path in files}
    expected_kinds = ({".meta", "LOCK", ".sqlite", "generations"} if backend == "sqlite" else
                      {".meta", "LOCK", ".log", ".ckpt", "manifest", ".terms", ".postings",
                       "generations"})
    if killed and backend == "sqlite":
        expected_kinds |= {".sqlite-wal", ".sqlite-shm"}
    assert kinds == expected_kinds, kinds
    tally: Counter[str] = Counter()
    bad = []
    copy = scratch / f"copy-{backend}"
    for damage in damages(store, files, every_page=every_page, older_store=older):
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(store, copy)
        damage.apply(copy)
        for reader in (True, False):
            result = outcome(copy, damage, intact, reader=reader)
            tally[f"{'read' if reader else 'write'}: {result}"] += 1
            if result.startswith("BAD") or (backend == "reference" and "hidden" in result):
                bad.append(f"{damage} ({'reader' if reader else 'writer'}): {result}")
    assert bad == []
    return tally


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_every_damaged_file_gives_the_intact_answer_or_an_error_naming_it(
        scratch: Path, backend: str, report_figure) -> None:
    tally = sweep(scratch, backend, every_page=False)
    report_figure(describe(f"corruption sweep ({backend}, closed cleanly)", tally))
    assert sum(tally.values()) >= (2 * 90 if backend == "reference" else 2 * 40)
    assert tally["read: refused"] and tally["read: intact"]


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_every_damaged_file_of_a_killed_writer_gives_the_intact_answer_or_an_error(
        scratch: Path, backend: str, report_figure) -> None:
    tally = sweep(scratch, backend, every_page=False, killed=True)
    report_figure(describe(f"corruption sweep ({backend}, writer killed)", tally))
    assert sum(tally.values()) >= (2 * 90 if backend == "reference" else 2 * 40)
    assert tally["read: refused"] and tally["read: intact"]


@pytest.mark.slow
def test_every_page_of_a_sqlite_database_damaged_gives_no_silent_answer(
        scratch: Path, report_figure) -> None:
    tally = sweep(scratch, "sqlite", every_page=True)
    report_figure(describe("corruption sweep, every page (sqlite)", tally))
    assert sum(tally.values()) >= 2 * 90


def describe(run: str, tally: Counter[str]) -> str:
    """One summary line of a sweep: its outcomes counted, reader and writer phases."""
    counts = ", ".join(f"{outcome} {count}" for outcome, count in sorted(tally.items()))
    return f"{run}: {sum(tally.values()) // 2} damages; {counts}"
