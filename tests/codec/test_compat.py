"""Committed files of every kind, in the format version each kind has today.

`tests/codec/compat/` holds one file of each kind (`engine.codec.FILE_KINDS`), written
once by the two recipes below and committed:

* `store.meta`, `transcripts/segment-000001.log` (sealed), `transcripts/segment-
  000002.log` (open) and `transcripts/catalog.ckpt`: `write_transcripts` (two
  transactions through a `TranscriptStore`, the second with a `replace` record, the
  clock fixed);
* `index/manifest`, `index/segment-000001.terms` and `index/segment-000001.postings`:
  `write_index` (three rows, a tombstone for doc 0, window states with `w2` dirty, at
  store generation 2);
* `partitioned/store.meta`, the root metadata of a partitioned store (the files above
  are what one agent's reference partition holds): `write_partitioned_root` (a store
  created through the registry, the clock fixed);
* `commit.journal`, a store root's journal of a transaction across agents, and
  `generations`, its witness of each partition's commits: `write_journal` (`JOURNAL`,
  `GENERATIONS`);
* `transcripts/compaction.state`: `write_compaction` (the state after one finished
  compaction that reclaimed 640 bytes; the store beside it was never compacted, which
  the state does not contradict: it only counts).

The tests prove that this build reads these files (what they hold comes back) and that
it writes the same bytes from the same input. If a change to the codec makes one fail,
the format of a kind changed: give that kind its next version in `engine.codec`
(`FILE_KINDS`, `DECODERS`), and write the fixtures again (`python
tests/codec/test_compat.py`); a released version's fixture is kept beside the new one,
so that its decoder stays tested. A file of an earlier version is refused, naming the
file and saying to re-import (the last tests).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest

from engine.analysis.profiles import SEARCH_PROFILE
from engine.cli import main
from engine.codec import FILE_KINDS, kind_of_magic
from engine.codec.compaction_file import CompactionState
from engine.codec.framing import HEADER_SIZE, decode_header, encode_header
from engine.codec.generations_file import decode_generations_file, encode_generations_file
from engine.codec.journal_file import (
    CommitJournal,
    JournalOperation,
    decode_journal_file,
    encode_journal_file,
)
from engine.codec.manifest_file import decode_manifest
from engine.codec.postings_file import check_postings_ends
from engine.codec.terms_file import open_terms_file
from engine.config import EngineConfig
from engine.directory import FileDirectory
from engine.errors import UnsupportedVersion
from engine.index.check import check_index
from engine.index.inverted_index import InvertedIndex
from engine.index.lifecycle import WindowIndexState
from engine.index.loading import load_index
from engine.index.matching import phrase_occurrences
from engine.index.postings import Posting
from engine.index.writer import flush_index
from engine.model import IndexEntry, SessionWindow
from engine.store.registry import open_backend
from engine.transcript.compaction import read_compaction_state, write_compaction_state
from engine.transcript.store import TranscriptStore

FIXTURE = Path(__file__).parent / "compat"
ROWS = [
    ("w1", "m1", "user", 10.0, "Café crème, s'il vous plaît", 0),
    ("w1", "m2", "assistant", 11.0, "The deployment failed on friday.", 1),
    ("w2", "m1", "user", 12.0, "明天下午三点开项目评审会议讨论排期 deployment", 0),
]
#: The fixed clock of `write_transcripts` (epoch seconds).
CLOCK = 1_767_225_600.0
#: Small enough that the first transaction fills segment 1 and seals it.
TRANSCRIPT_CONFIG = EngineConfig(log_roll_bytes=300)
INDEX_FILES = ("index/manifest", "index/segment-000001.terms", "index/segment-000001.postings")
TRANSCRIPT_FILES = ("store.meta", "transcripts/segment-000001.log",
                    "transcripts/segment-000002.log", "transcripts/catalog.ckpt")
ROOT_FILES = ("partitioned/store.meta",)
COMPACTION_FILES = ("transcripts/compaction.state",)
JOURNAL_FILES = ("commit.journal", "generations")
#: What the committed witness holds: two agents' commit counts.
GENERATIONS = {"main": 2, "ops": 1}
#: What the committed compaction state says.
COMPACTION = CompactionState(compactions=1, in_progress=False, reclaimed_bytes=640)


def message(row: tuple) -> dict:
    _session_id, message_id, role, timestamp, text, _seq = row
    return {"type": "message", "id": message_id, "timestamp": timestamp,
            "message": {"role": role, "content": text}}


#: What the committed journal holds: a transaction of three agents cut after `main`
#: (the decider) committed, with `ops`'s and `work`'s writes to finish.
JOURNAL = CommitJournal("main", {"main": 4, "ops": 0, "work": 2}, ("ops",), (
    JournalOperation("ops", "put_window", (SessionWindow("o1", "agent:ops:main"),)),
    JournalOperation("ops", "append_event", ("o1", message(ROWS[2]), 12.0)),
    JournalOperation("work", "replace_transcript", ("w9", [message(ROWS[0])], None)),
    JournalOperation("work", "delete_session", ("agent:work:old",)),
))


def write_transcripts(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The recipe of the committed transcript files (the store's clock fixed)."""
    monkeypatch.setattr(time, "time", lambda: CLOCK)
    with TranscriptStore.create(FileDirectory(folder), config=TRANSCRIPT_CONFIG) as store:
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow("w1", "agent:main:main", title="Café"))
            for row in ROWS[:2]:
                transaction.append_event("w1", message(row), row[3])
        with store.transaction() as transaction:
            transaction.put_window(SessionWindow("w2", "agent:work:main"))
            transaction.append_event("w2", message(ROWS[2]), ROWS[2][3])
            # A `replace` record (log version 2): w1's transcript written again, the
            # same events stamped 13.0.
            transaction.replace_transcript("w1", [message(row) for row in ROWS[:2]], 13.0,
                                           rebuild_deferred=True)


def write_partitioned_root(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The recipe of the committed root metadata (a new, empty store; the clock fixed)."""
    monkeypatch.setattr(time, "time", lambda: CLOCK)
    open_backend(folder / "partitioned", backend="reference", create=True).close()


def write_compaction(folder: Path) -> None:
    """The recipe of the committed compaction state."""
    write_compaction_state(FileDirectory(folder), COMPACTION)


def write_journal(folder: Path) -> None:
    """The recipe of the committed commit journal and generations witness."""
    FileDirectory(folder).write_atomic("commit.journal", encode_journal_file(JOURNAL))
    FileDirectory(folder).write_atomic("generations", encode_generations_file(GENERATIONS))


def test_the_committed_journal_reads_back():
    data = (FIXTURE / "commit.journal").read_bytes()
    assert decode_journal_file(data, "commit.journal") == JOURNAL
    witness = (FIXTURE / "generations").read_bytes()
    assert decode_generations_file(witness, "generations") == GENERATIONS


#: A journal of version 1 (events as JSON text), as the build before version 2 wrote it:
#: a commit such a build left unfinished is finished by this one.
JOURNAL_V1 = Path(__file__).parent / "compat_journal_v1" / "commit.journal"


def test_a_journal_of_version_1_still_reads_back():
    data = JOURNAL_V1.read_bytes()
    assert decode_header(data, "commit.journal").version == 1
    assert decode_journal_file(data, "commit.journal") == JOURNAL


def write_index(folder: Path) -> None:
    """The recipe of the committed index files."""
    analyzer = SEARCH_PROFILE.analyzer()
    index = InvertedIndex()
    for row in ROWS:
        index.add_entry(IndexEntry(*row), analyzer.terms(row[4]))
    index.window_states.update({"w1": WindowIndexState(1, "m2"), "w2": WindowIndexState(0, "m1", True)})
    index.generation = 2
    directory = FileDirectory(folder)
    flush_index(directory, index, SEARCH_PROFILE.label(), EngineConfig())
    index.delete_document(0)
    flush_index(directory, index, SEARCH_PROFILE.label(), EngineConfig())


def test_the_committed_index_files_open_with_their_rows_texts_postings_and_states():
    index = load_index(FileDirectory(FIXTURE), SEARCH_PROFILE.label())
    assert check_index(index) == []
    assert (index.generation, index.next_doc_id, index.deleted) == (2, 3, {0})
    assert [(record.doc_id, record.message_id, record.length) for record in index.documents()] == [
        (1, "m2", 5), (2, "m1", 2),
    ]
    assert [record.text for record in index.documents()] == [ROWS[1][4], ROWS[2][4]]
    assert [record.text_is_ascii for record in index.documents()] == [True, False]
    assert index.postings("deployment") == [Posting(1, (1,)), Posting(2, (1,))]
    assert index.postings("cafe") == []  # doc 0 is deleted
    assert phrase_occurrences(index, ["明天下午三点开项目评审会议讨论排期", "deploy"], prefix=True) == {2: [0]}
    assert index.window_states == {"w1": WindowIndexState(1, "m2"), "w2": WindowIndexState(0, "m1", True)}


def test_the_committed_transcript_files_open_from_their_checkpoint(tmp_path: Path):
    copy = tmp_path / "store"
    shutil.copytree(FIXTURE, copy)
    with TranscriptStore.open(FileDirectory(copy), config=TRANSCRIPT_CONFIG) as store:
        assert (store.checkpoint_generation, store.checkpoint_ignored) == (2, None)
        assert store.backend == "reference" and store.generation == 2
        assert [(w.session_id, w.session_key, w.title) for w in store.windows()] == [
            ("w1", "agent:main:main", "Café"), ("w2", "agent:work:main", None)]
        events = {w.session_id: [(e.seq, e.event, e.created_at) for e in store.events(w.session_id)]
                  for w in store.windows()}
        assert events == {"w1": [(0, message(ROWS[0]), 13.0), (1, message(ROWS[1]), 13.0)],
                          "w2": [(0, message(ROWS[2]), 12.0)]}
        assert store.verify_log() is None
        assert [change[0] for change in store.changes_since(0)] == [1, 1, 1, 2, 2, 2]
        replaced = list(store.changes_since(0))[-1][1]
        assert (replaced.session_id, len(replaced.events), replaced.rebuild_deferred) == (
            "w1", 2, True)


def test_the_committed_compaction_state_reads_back():
    assert read_compaction_state(FileDirectory(FIXTURE)) == COMPACTION


def test_the_recipes_still_write_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    write_transcripts(tmp_path, monkeypatch)
    write_index(tmp_path)
    write_partitioned_root(tmp_path, monkeypatch)
    write_compaction(tmp_path)
    write_journal(tmp_path)
    for name in (*TRANSCRIPT_FILES, *INDEX_FILES, *ROOT_FILES, *COMPACTION_FILES,
                 *JOURNAL_FILES):
        assert (tmp_path / name).read_bytes() == (FIXTURE / name).read_bytes(), name


def test_the_fixtures_hold_every_kind_once_in_its_current_version():
    kinds = {}
    for name in (*TRANSCRIPT_FILES, *INDEX_FILES, *ROOT_FILES, *COMPACTION_FILES,
                 *JOURNAL_FILES):
        header = decode_header((FIXTURE / name).read_bytes(), name)
        kind = kind_of_magic(header.magic)
        assert (header.version, header.flags) == (kind.version, 0), name
        kinds.setdefault(kind.name, name)
    assert sorted(kinds) == sorted(FILE_KINDS)
    committed = sorted(str(path.relative_to(FIXTURE)) for path in FIXTURE.rglob("*") if path.is_file())
    assert committed == sorted((*TRANSCRIPT_FILES, *INDEX_FILES, *ROOT_FILES, *COMPACTION_FILES,
                 *JOURNAL_FILES))


def test_the_committed_root_metadata_opens_as_an_empty_partitioned_store(tmp_path: Path):
    copy = tmp_path / "store"
    shutil.copytree(FIXTURE / "partitioned", copy)
    with open_backend(copy) as store:
        assert (store.name, store.partitions(), store.stats()["windows"]) == ("reference", {}, 0)


def with_version(data: bytes, version: int) -> bytes:
    """`data` with its header rewritten to say `version` (its CRC made right)."""
    return encode_header(data[:8], version=version) + data[HEADER_SIZE:]


@pytest.mark.parametrize("name", INDEX_FILES)
def test_an_index_file_of_an_earlier_version_is_refused_naming_it(name: str):
    data = with_version((FIXTURE / name).read_bytes(), 1)
    location = f"store/{name}"
    opening = {
        "index/manifest": lambda: decode_manifest(data, location),
        "index/segment-000001.terms": lambda: open_terms_file(
            lambda offset, length: data[offset: offset + length], len(data), location),
        "index/segment-000001.postings": lambda: check_postings_ends(
            lambda offset, length: data[offset: offset + length], len(data), location),
    }[name]
    kind = kind_of_magic(data[:8]).name
    with pytest.raises(UnsupportedVersion) as refused:
        opening()
    assert str(refused.value) == (
        f"{location}: unsupported version 1 of a {kind} file (this build reads version 2); "
        "it was written by an earlier build of session-search: re-import the store")


def test_a_store_of_an_earlier_build_is_refused_saying_to_reimport(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
):
    """Every file of a kind whose version changed carries version 1, as an earlier build
    wrote them: the root's metadata is refused first (before any partition is read); with
    only the partition's files of version 1, the catalog checkpoint is ignored (derived
    data) and the transcript log (version 2 since its `replace` record) refused before
    the index is read."""
    messages = tmp_path / "messages.jsonl"
    messages.write_text(json.dumps({"sessionKey": "agent:main:main", "sessionId": "s1",
                                    "messageId": "q1", "role": "user", "timestamp": 1,
                                    "text": "where is the deployment"}) + "\n",
                        encoding="utf-8")
    store = tmp_path / "store"
    assert main(["import", "--store", str(store), str(messages)]) == 0
    assert main(["search", "--store", str(store), "deployment"]) == 0
    capsys.readouterr()
    written = sorted(path for path in store.rglob("*") if path.is_file() and path.name != "LOCK")
    for path in written:
        data = path.read_bytes()
        if kind_of_magic(data[:8]).version != 1:
            path.write_bytes(with_version(data, 1))
    assert main(["search", "--store", str(store), "deployment"]) == 1
    root = store / "store.meta"
    assert capsys.readouterr().err == (
        f"session-search: error: {root}: unsupported version 1 of a partitioned file "
        "(this build reads version 2); it was written by an earlier build of session-search: "
        "re-import the store\n")
    root.write_bytes(with_version(root.read_bytes(), 2))
    assert main(["search", "--store", str(store), "deployment"]) == 1
    log = store / "agents" / "main" / "transcripts" / "segment-000001.log"
    assert capsys.readouterr().err == (
        f"session-search: error: {log}: unsupported version 1 of a segment file "
        "(this build reads version 2); it was written by an earlier build of session-search: "
        "re-import the store\n")


if __name__ == "__main__":  # write the fixtures again: python tests/codec/test_compat.py
    shutil.rmtree(FIXTURE, ignore_errors=True)
    with pytest.MonkeyPatch.context() as patch:
        write_transcripts(FIXTURE, patch)
    write_index(FIXTURE)
    with pytest.MonkeyPatch.context() as patch:
        write_partitioned_root(FIXTURE, patch)
    write_compaction(FIXTURE)
    write_journal(FIXTURE)
    (FIXTURE / "LOCK").unlink()
    (FIXTURE / "partitioned" / "LOCK").unlink()
    print(f"wrote {FIXTURE}", file=sys.stderr)
