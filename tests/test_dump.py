"""`session-search dump`: the store listing and one file's records, plain and --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import cli
from engine.codec.framing import HEADER_SIZE, Frame, iter_frames
from engine.config import EngineConfig
from engine.diagnostics.dump import read_file, summarize_store
from engine.directory import FileDirectory, MemoryDirectory
from engine.errors import CorruptFile, StoreError
from engine.model import SessionWindow
from engine.transcript.store import TranscriptStore

SEGMENT_1 = "transcripts/segment-000001.log"
SEGMENT_2 = "transcripts/segment-000002.log"
CHECKPOINT = "transcripts/catalog.ckpt"


@pytest.fixture(autouse=True)
def only_the_dump_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parse with the dump command alone, so other commands' state cannot interfere."""
    assert "engine.cli.dump_command" in cli.COMMAND_MODULES
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("engine.cli.dump_command",))


def make_store(path: Path) -> Path:
    config = EngineConfig(log_roll_bytes=200)
    with TranscriptStore.create(FileDirectory(path), config=config) as store:
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow("w1", "agent:main:main", title="Café"))
            transaction.append_event("w1", {"id": "a", "text": "héllo"}, 5.0)
        with store.transaction() as transaction:
            transaction.append_event("w1", {"id": "b"}, 6.0)
            transaction.delete_session("global")
    return path


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    status = cli.main(["dump", *arguments])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_listing_plain_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = make_store(tmp_path / "s")
    status, out, _ = run(capsys, "--store", str(store))
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == ["name", "kind", "size", "version", "records", "note"]
    assert [line.split()[:2] for line in lines[2:]] == [
        ["LOCK", "lock"], ["store.meta", "store"], [CHECKPOINT, "catalog"],
        [SEGMENT_1, "segment"], [SEGMENT_2, "segment"]]
    status, out, _ = run(capsys, "--store", str(store), "--json")
    files = json.loads(out)["files"]
    assert [(f["name"], f["kind"], f["version"], f["records"]) for f in files] == [
        ("LOCK", "lock", None, None), ("store.meta", "store", 1, 1),
        (CHECKPOINT, "catalog", 2, 6), (SEGMENT_1, "segment", 2, 3),
        (SEGMENT_2, "segment", 2, 2)]
    assert [f["size"] for f in files][1:] == [
        (store / name).stat().st_size
        for name in ("store.meta", CHECKPOINT, SEGMENT_1, SEGMENT_2)]
    checkpoint = json.loads(run(capsys, "--store", str(store), CHECKPOINT, "--json")[1])
    assert [r["kind"] for r in checkpoint["records"]] == [
        "head", "sealed", "windows", "keys", "transactions", "positions"]
    assert (checkpoint["version"], checkpoint["flags"]) == (2, 0)
    head, positions = checkpoint["records"][0], checkpoint["records"][-1]
    assert head["fields"]["index_length"] == positions["offset"] - head["offset"] - 8 - head[
        "length"]  # the index runs from the end of the head to the positions
    assert positions["fields"] == {"events": 2}
    assert checkpoint["records"][1]["fields"]["segments"] == [{
        "segment": 1, "size": (store / SEGMENT_1).stat().st_size, "record_count": 3,
        "records_crc": json.loads(run(capsys, "--store", str(store), SEGMENT_1, "--json")[1])[
            "footer"]["recordsCrc"]}]
    assert checkpoint["records"][2]["fields"] == {"windows": [{"session_id": "w1", "events": 2}]}


def test_one_file_plain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = make_store(tmp_path / "s")
    status, out, _ = run(capsys, "--store", str(store), SEGMENT_1)
    assert status == 0
    size = (store / SEGMENT_1).stat().st_size
    heading, *blocks, footer = out.split("\n\n")
    assert heading.splitlines() == [
        f"file     {SEGMENT_1}", "kind     segment", "version  2", "flags    0",
        f"size     {size} B ({size} bytes)", "records  3"]
    window, event, commit = (block.splitlines() for block in blocks)
    assert window[0].startswith(f"record 1 at byte offset {HEADER_SIZE}: window (")
    assert window[1:4] == ["  window:", '    session_id: "w1"',
                           '    session_key: "agent:main:main"']
    assert '    title: "Café"' in window and "    extra: {}" in window
    assert event[0].startswith("record 2 at byte offset ") and ": event (" in event[0]
    assert event[1:] == ['  session_id: "w1"', "  seq: 0",
                         "  created_at: 1970-01-01T00:00:00.005Z (5.0)", "  event:",
                         '    id: "a"', '    text: "héllo"']
    assert commit[0].startswith("record 3 at byte offset ") and ": commit (" in commit[0]
    assert commit[1] == "  transaction_id: 1"
    assert footer.startswith("footer at byte offset ") and footer.endswith("(verified)\n")


def test_one_file_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = make_store(tmp_path / "s")
    status, out, _ = run(capsys, "--store", str(store), SEGMENT_1, "--json")
    assert status == 0
    view = json.loads(out)
    data = (store / SEGMENT_1).read_bytes()
    frames = [item for item in iter_frames(data) if isinstance(item, Frame)]
    assert [(r["offset"], r["length"], r["crc"], r["crcOk"]) for r in view["records"]] == [
        (f.offset, f.length, f"{f.crc:08x}", True) for f in frames]
    assert [r["kind"] for r in view["records"]] == ["window", "event", "commit"]
    assert view["records"][0]["fields"]["window"]["title"] == "Café"
    assert view["records"][0]["fields"]["window"]["kind"] == "chat"
    assert view["footer"]["recordCount"] == 3
    assert view["tornTail"] is None
    meta = json.loads(run(capsys, "--store", str(store), "store.meta", "--json")[1])
    assert meta["records"][0]["fields"]["backend"] == "reference"


def test_corrupt_and_missing_files_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    store = make_store(tmp_path / "s")
    data = bytearray((store / SEGMENT_1).read_bytes())
    data[HEADER_SIZE + 20] ^= 0xFF
    (store / SEGMENT_1).write_bytes(bytes(data))
    status, out, err = run(capsys, "--store", str(store), SEGMENT_1)
    assert (status, out) == (1, "")
    assert err == (f"session-search: error: {store / SEGMENT_1}: corrupt at byte offset "
                   f"{HEADER_SIZE}: record CRC mismatch\n")
    status, out, _ = run(capsys, "--store", str(store), "--json")  # the listing still works
    row = next(f for f in json.loads(out)["files"] if f["name"] == SEGMENT_1)
    assert row["note"].endswith("record CRC mismatch")
    missing_error = run(capsys, "--store", str(store), "nope.log")[2]
    assert missing_error.endswith("nope.log: no such store file\n")
    assert run(capsys, "--store", str(store), "../x")[2] == (
        "session-search: error: invalid store file name '../x'\n")
    assert run(capsys, "--store", str(tmp_path / "none")) == (  # as every command says it
        2, "", f"session-search: error: {tmp_path / 'none'}: no session-search store here\n")


def test_torn_tail_is_a_note(tmp_path: Path) -> None:
    directory = MemoryDirectory()
    with TranscriptStore.create(directory) as store, store.transaction() as transaction:
        transaction.put_window(SessionWindow("w1", "global"))
    data = directory.read_bytes(SEGMENT_1)
    directory.write_atomic(SEGMENT_1, data[:-3])
    view = read_file(directory, SEGMENT_1)
    assert [record.kind for record in view.records] == ["window"]
    assert view.torn_tail is not None and view.torn_tail.at_tail
    summary = {s.name: s for s in summarize_store(directory)}[SEGMENT_1]
    assert summary.records == 1 and summary.note.startswith("torn tail at byte offset")
    with pytest.raises(StoreError, match="no records to show"):
        read_file(FileDirectory(make_store(tmp_path / "s")), "LOCK")
    directory.write_atomic("stray.bin", b"not a framed file at all")
    with pytest.raises(CorruptFile, match="header CRC mismatch"):
        read_file(directory, "stray.bin")


def test_dump_through_the_full_command_registry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.undo()  # every registered command module, as `session-search` builds it
    store = make_store(tmp_path / "s")
    status, out, _ = run(capsys, "--store", str(store), SEGMENT_2, "--json")
    assert status == 0
    assert [r["kind"] for r in json.loads(out)["records"]] == ["event", "commit"]
