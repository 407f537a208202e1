"""Committed data lost from a store's log is reported where users look: `stats`, `verify`
and any command that opens the store, run as a user runs them (`python -m engine` in a
subprocess from the checkout's root).

The store is the issue's example: the demo corpus imported, then 400 more messages from
a flat messages file, each import its own committed transaction. Each damage below
(newest log cut by 400 bytes or to half, deleted, `transcripts/` deleted, a checkpoint
that disagrees with the log) gives no traceback, one clear line naming the file, exit
status 1, and `verify` exits non-zero; an interrupted write after the last commit (what
a crash leaves) is still cut silently, and shown only as a note.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.codec.catalog_file import decode_catalog_file, encode_catalog_file

ROOT = Path(__file__).resolve().parent.parent.parent
DEMO = ROOT / "engine" / "demo_corpus"
#: The 400 more messages go to agent main, so main's partition holds two transactions.
PARTITION = Path("agents") / "main"
LOG = PARTITION / "transcripts" / "segment-000001.log"
CHECKPOINT = PARTITION / "transcripts" / "catalog.ckpt"
DEMO_EVENTS, MORE = 73, 400


def main_events(store: Path) -> int:
    """The events of agent main's partition (the demo's part of it, before more)."""
    stats = engine("stats", "--store", str(store), "--json")
    return json.loads(stats.stdout)["partitions"]["main"]["events"]


def engine(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *argv], check=False, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo corpus, then 400 more messages: two committed transactions."""
    folder = tmp_path_factory.mktemp("imported")
    messages = folder / "more.jsonl"
    messages.write_text("".join(json.dumps({
        "sessionKey": "agent:main:bulk", "sessionId": "bulk-1", "messageId": f"b{number}",
        "role": "user" if number % 2 == 0 else "assistant",
        "timestamp": f"2026-09-05T10:{number // 60:02d}:{number % 60:02d}Z",
        "text": f"bulk message number {number} about durability",
    }) + "\n" for number in range(MORE)), encoding="utf-8")
    store = folder / "store"
    for source in (DEMO, messages):
        completed = engine("import", "--store", str(store), str(source))
        assert completed.returncode == 0, completed.stderr
    return store


@pytest.fixture
def store(imported: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "store"
    shutil.copytree(imported, copy)
    return copy


def cut(store: Path, size: int) -> int:
    """Cut the log to `size` bytes; return its size before."""
    log = store / LOG
    before = log.stat().st_size
    with log.open("r+b") as file:
        file.truncate(size)
    return before


def assert_one_clear_line(completed: subprocess.CompletedProcess[str], prefix: str,
                          names: str) -> str:
    """Exit status 1, no traceback, exactly one line on standard error: `prefix` and
    then the damaged file's path first."""
    assert completed.returncode == 1, completed
    assert "Traceback" not in completed.stderr
    lines = completed.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"session-search: {prefix}: {names}"), lines[0]
    return lines[0]


def assert_reported_everywhere(store: Path, names: Path, what: str) -> None:
    """`stats` warns (and lists it in JSON), `verify` and `search` fail, each naming the
    file and saying `what`."""
    stats = engine("stats", "--store", str(store))
    line = assert_one_clear_line(stats, "warning", str(store / names))
    assert what in line
    assert stats.stdout.startswith(f"store {store} (backend reference)")
    as_json = engine("stats", "--store", str(store), "--json")
    assert as_json.returncode == 1
    problems = json.loads(as_json.stdout)["problems"]
    assert len(problems) == 1 and problems[0].startswith(str(store / names))
    verify = engine("verify", "--store", str(store))
    assert verify.returncode == 1 and "Traceback" not in verify.stderr
    assert verify.stdout.splitlines()[0].startswith("MISMATCH: ")
    assert f"  {store / names}: " in verify.stdout and what in verify.stdout
    assert "OK: the index matches its transcripts" not in verify.stdout
    search = engine("search", "--store", str(store), "durability")
    refusal = assert_one_clear_line(search, "error", str(store / names))
    assert what in refusal
    # the advice names the folder `verify` takes (the store's, not the partition's)
    assert f"run `session-search verify --store {store}` to see what is lost" in refusal


def test_the_newest_log_cut_by_400_bytes(store: Path) -> None:
    size = (store / LOG).stat().st_size
    cut(store, size - 400)
    assert_reported_everywhere(
        store, LOG, f"400 bytes of committed transactions are missing (bytes {size - 400}.."
                    f"{size} were committed, the file ends at {size - 400})")
    verify = engine("verify", "--store", str(store), "--json")
    report = json.loads(verify.stdout)
    assert (verify.returncode, report["ok"]) == (1, False)
    assert report["problems"][0].startswith(f"agent main: {store / LOG}: 400 bytes of committed")
    assert report["partitions"]["main"]["problems"][0].startswith(
        f"{store / LOG}: 400 bytes of committed")
    assert any("`verify --repair` can drop transactions 2..2" in note
               for note in report["notes"])
    assert (store / LOG).stat().st_size == size - 400  # nothing opened it as a writer


def test_the_newest_log_cut_to_half(store: Path) -> None:
    size = (store / LOG).stat().st_size
    cut(store, size // 2)
    assert_reported_everywhere(store, LOG, f"bytes {size // 2}..{size} were committed")


def test_the_demo_log_cut_from_its_size_to_1000_bytes(tmp_path: Path) -> None:
    """Issue 16's example: one import, its log cut to 1,000 bytes."""
    store = tmp_path / "demo"
    assert engine("import", "--store", str(store), str(DEMO)).returncode == 0
    size = cut(store, 1000)
    assert_reported_everywhere(store, LOG, f"bytes 1000..{size} were committed")


def test_the_newest_log_deleted(store: Path) -> None:
    (store / LOG).unlink()
    assert_reported_everywhere(store, LOG, "missing, but it held committed transactions")


def test_the_transcripts_folder_deleted(store: Path) -> None:
    """No checkpoint is left either: the index manifest is the evidence."""
    shutil.rmtree(store / PARTITION / "transcripts")
    assert_reported_everywhere(store, LOG, "index/manifest records 2 committed transactions, "
                                           "the log holds 0")


def test_a_checkpoint_that_disagrees_with_the_log(store: Path) -> None:
    """Nothing is lost (the log is whole), so the store opens; stats and verify say so."""
    path = store / CHECKPOINT
    checkpoint = decode_catalog_file(path.read_bytes(), str(path))
    path.write_bytes(encode_catalog_file(dataclasses.replace(
        checkpoint, commit_offset=checkpoint.commit_offset + 1)))
    stats = engine("stats", "--store", str(store), "--json")
    line = assert_one_clear_line(stats, "warning", str(path))
    assert "the catalog checkpoint disagrees with the log" in line
    assert json.loads(stats.stdout)["events"] == DEMO_EVENTS + MORE
    verify = engine("verify", "--store", str(store))
    assert verify.returncode == 1
    assert f"  {path}: the catalog checkpoint disagrees with the log" in verify.stdout
    search = engine("search", "--store", str(store), "--json", "durability")
    assert search.returncode == 0 and json.loads(search.stdout)["hits"]
    repaired = engine("verify", "--store", str(store), "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert engine("stats", "--store", str(store)).returncode == 0


def test_repair_drops_what_is_lost_after_saying_so(store: Path) -> None:
    demo_main_events = main_events(store) - MORE
    size = (store / LOG).stat().st_size
    cut(store, size - 400)
    repaired = engine("verify", "--store", str(store), "--repair")
    assert repaired.returncode == 0, repaired
    lines = repaired.stdout.splitlines()
    assert lines[0] == (f"repaired: {store / LOG}: committed transactions 2..2 (1 of 2) are "
                        f"lost; what remains: 1 transaction, {demo_main_events} events (the claim "
                        f"counted {demo_main_events + MORE}); they were dropped")
    assert lines[1].startswith(f"repaired: {store / LOG}: cut ")
    assert "repaired: could not recover the missing committed bytes" in repaired.stdout
    assert "OK: the index matches its transcripts" in lines
    stats = engine("stats", "--store", str(store), "--json")
    assert (stats.returncode, stats.stderr) == (0, "")
    assert (json.loads(stats.stdout)["events"], json.loads(stats.stdout)["problems"]) == (
        DEMO_EVENTS, [])
    assert engine("verify", "--store", str(store)).returncode == 0


def test_a_crash_torn_tail_is_cut_silently_and_shown_as_a_note(store: Path) -> None:
    """Bytes after the last commit that no checkpoint or manifest covers are what an
    interrupted write leaves: readers leave them out, a writer cuts them, and stats and
    verify show a note and exit 0."""
    size = (store / LOG).stat().st_size
    with (store / LOG).open("ab") as file:
        file.write(b"\x00\x00\x01\x00" + b"torn" * 20)
    stats = engine("stats", "--store", str(store), "--json")
    assert stats.returncode == 0
    assert (json.loads(stats.stdout)["problems"], json.loads(stats.stdout)["events"]) == (
        [], DEMO_EVENTS + MORE)
    assert stats.stderr.startswith(f"session-search: note: {store / LOG}: 84 bytes after "
                                   "the last commit are an unfinished transaction")
    verify = engine("verify", "--store", str(store))
    assert verify.returncode == 0
    assert verify.stdout.splitlines()[0] == "OK: the index matches its transcripts"
    assert f"  note: {store / LOG}: 84 bytes after the last commit" in verify.stdout
    more = store.parent / "more.jsonl"
    more.write_text(json.dumps({"sessionKey": "agent:main:bulk", "sessionId": "bulk-2",
                                "messageId": "x1", "role": "user", "timestamp":
                                "2026-09-06T10:00:00Z", "text": "after the crash"}) + "\n",
                    encoding="utf-8")
    imported = engine("import", "--store", str(store), str(more))
    assert (imported.returncode, imported.stderr) == (0, "")
    assert (store / LOG).stat().st_size > size
    after = engine("stats", "--store", str(store), "--json")
    assert (after.returncode, after.stderr) == (0, "")
    assert json.loads(after.stdout)["events"] == DEMO_EVENTS + MORE + 1


def test_verify_of_a_sqlite_store_finds_no_lost_commits_and_checks_its_rows(
        tmp_path: Path) -> None:
    """SQLite's journal leaves no lost commits to report: verify (and `--repair`, which
    rebuilds the rows) checks its databases and rows instead
    (`tests/diagnostics/test_sqlite_verify.py` damages them)."""
    store = tmp_path / "lite"
    assert engine("import", "--store", str(store), "--backend", "sqlite",
                  str(DEMO)).returncode == 0
    for argv in (("verify", "--store", str(store)), ("verify", "--store", str(store),
                                                     "--repair")):
        completed = engine(*argv, "--json")
        assert (completed.returncode, completed.stderr) == (0, "")
        report = json.loads(completed.stdout)
        assert (report["ok"], report["problems"], report["notes"]) == (True, [], [])
    assert engine("stats", "--store", str(store)).returncode == 0
