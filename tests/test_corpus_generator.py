"""The corpus generator: determinism, sizes, event shapes, and expected answers that agree
with the engine's projection and with a real SQLite FTS5 table.

The probe counts in a manifest are the benchmark's expected answers, so they are checked
here against two independent oracles: `engine.transcript.projection.index_entries` (what
is searchable) and SQLite FTS5 with `unicode61 remove_diacritics 2` (how it matches).
The same holds for the real-text corpus builder (`engine.bench.real_text`), tested at the
end on small hand-written dialog files.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from engine.bench import corpus_generator
from engine.bench.corpus_generator import (
    CORPUS_SIZES,
    corpus_directory,
    corpus_size,
    ensure_corpus,
    generate_corpus,
    import_source,
    plan_corpus,
    read_manifest,
)
from engine.bench.probes import PROBES
from engine.bench.real_text import agent_for, write_dialog_corpus
from engine.bench.text_synthesis import COMPOUND_WORD
from engine.bench.vocabulary import (
    CODE_IDENTIFIERS,
    LOG_COMPONENTS,
    LOG_EVENTS,
    PLANTED_WORDS,
    WORDS_BY_LANGUAGE,
    fold_word,
)
from engine.ingest import import_sources
from engine.model import StoredEvent
from engine.transcript.events import validation_problem
from engine.transcript.projection import index_entries
from engine.transcript.store import TranscriptStore

TINY = corpus_size("tiny")
SEED = 11


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("corpus") / "tiny"
    generate_corpus(TINY, SEED, directory)
    return directory


def _file_digests(directory: Path) -> dict[str, str]:
    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*")) if path.is_file()
    }


def _windows(directory: Path) -> list[dict[str, Any]]:
    lines = (directory / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _events(directory: Path, session_id: str) -> list[dict[str, Any]]:
    path = directory / "transcripts" / f"{session_id}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _all_events(directory: Path) -> list[dict[str, Any]]:
    return [event for window in _windows(directory)
            for event in _events(directory, window["sessionId"])]


def _searchable_texts(directory: Path) -> list[tuple[str, str]]:
    """(session key, text) of every index entry, through the engine's projection."""
    texts = []
    for window in _windows(directory):
        stored = [
            StoredEvent(window["sessionId"], seq, event, 0.0)
            for seq, event in enumerate(_events(directory, window["sessionId"]))
        ]
        texts.extend((window["sessionKey"], entry.text) for entry in index_entries(stored))
    return texts


# ---- determinism ---------------------------------------------------------------------


def test_same_seed_gives_byte_identical_files(tiny_corpus: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    generate_corpus(TINY, SEED, again)
    assert _file_digests(again) == _file_digests(tiny_corpus)


def test_same_seed_is_byte_identical_across_processes(tiny_corpus: Path,
                                                      tmp_path: Path) -> None:
    """String hashing is randomised per process; no output may depend on it."""
    import subprocess
    import sys

    program = (
        "import sys; from pathlib import Path; "
        "from engine.bench.corpus_generator import corpus_size, generate_corpus; "
        f"generate_corpus(corpus_size('tiny'), {SEED}, Path(sys.argv[1]))"
    )
    for hash_seed in ("1", "2"):
        target = tmp_path / f"hash-{hash_seed}"
        subprocess.run([sys.executable, "-c", program, str(target)], check=True,
                       env={**os.environ, "PYTHONHASHSEED": hash_seed})
        assert _file_digests(target) == _file_digests(tiny_corpus)


def test_another_seed_gives_other_text(tiny_corpus: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    generate_corpus(TINY, SEED + 1, other)
    assert (other / "sessions.jsonl").read_bytes() != (tiny_corpus / "sessions.jsonl").read_bytes()


# ---- sizes and counts ----------------------------------------------------------------


def test_manifest_counts_match_the_files(tiny_corpus: Path) -> None:
    manifest = read_manifest(tiny_corpus)
    events = _all_events(tiny_corpus)
    windows = _windows(tiny_corpus)
    assert manifest["counts"]["messages"] == TINY.messages
    assert sum(event["type"] == "message" for event in events) == TINY.messages
    assert manifest["counts"]["events"] == len(events)
    assert manifest["counts"]["windows"] == len(windows)
    keys = {window["sessionKey"] for window in windows}
    assert manifest["counts"]["sessionKeys"] == len(keys) == TINY.session_keys


@pytest.mark.parametrize("name", list(CORPUS_SIZES))
def test_plans_fill_every_size_exactly(name: str) -> None:
    size = corpus_size(name)
    plan = plan_corpus(size, corpus_generator.random.Random(SEED))
    assert sum(window.messages for window in plan.windows) == size.messages
    assert min(window.messages for window in plan.windows) >= 2
    keys = {window.metadata["sessionKey"] for window in plan.windows}
    assert len(keys) == size.session_keys
    long_windows = [w for w in plan.windows if w.metadata["sessionId"] == plan.long_session_id]
    assert [w.messages for w in long_windows] == [size.long_session_messages]


def test_the_large_sizes_have_200_plus_sessions_and_a_100k_session() -> None:
    assert corpus_size("10k").session_keys >= 200
    assert corpus_size("1m").long_session_messages == 100_000
    assert corpus_size("1M") == corpus_size("1m")
    with pytest.raises(ValueError, match="unknown corpus size '2m'"):
        corpus_size("2m")


# ---- shapes --------------------------------------------------------------------------


def test_every_event_is_valid_for_the_importer(tiny_corpus: Path) -> None:
    problems = [(event, validation_problem(event)) for event in _all_events(tiny_corpus)]
    assert [item for item in problems if item[1] is not None] == []


def test_event_kinds_blocks_and_roles_are_realistic(tiny_corpus: Path) -> None:
    events = _all_events(tiny_corpus)
    kinds = Counter(event["type"] for event in events)
    assert {"message", "leaf", "model_change"} <= set(kinds)
    roles = Counter(event["message"]["role"] for event in events if event["type"] == "message")
    assert set(roles) == {"user", "assistant", "toolResult"}
    blocks = Counter(
        block["type"] for event in events if event["type"] == "message"
        for block in (event["message"]["content"] if isinstance(event["message"]["content"], list)
                      else [])
    )
    assert {"text", "thinking", "toolCall"} <= set(blocks)
    leaf_targets = [event["targetId"] for event in events if event["type"] == "leaf"]
    ids = {event["id"] for event in events}
    assert leaf_targets and all(target in ids for target in leaf_targets)


def test_a_larger_corpus_has_logical_resets_and_compactions(tmp_path: Path) -> None:
    size = corpus_generator.CorpusSize("small", 3000, 30, 600)
    generate_corpus(size, SEED, tmp_path / "small")
    events = _all_events(tmp_path / "small")
    resets = [event for event in events if event["type"] == "reset"]
    assert resets and all(isinstance(event["firstKeptEntryId"], str) for event in resets)
    assert any(event["type"] == "compaction" for event in events)


def test_windows_chain_under_their_keys(tiny_corpus: Path) -> None:
    windows = _windows(tiny_corpus)
    by_key: dict[str, list[dict[str, Any]]] = {}
    for window in windows:
        by_key.setdefault(window["sessionKey"], []).append(window)
    for chain in by_key.values():
        assert [window["current"] for window in chain] == [False] * (len(chain) - 1) + [True]
        assert chain[0]["reason"] == "initial" and chain[0]["previousSessionId"] is None
        for previous, window in itertools.pairwise(chain):
            assert window["previousSessionId"] == previous["sessionId"]
            assert window["reason"] in ("reset", "rollover")
    assert any(len(chain) > 1 for chain in by_key.values())
    agents = {key.split(":")[1] for key in by_key if key.startswith("agent:")}
    assert {"main", "work_team", "workxteam"} <= agents
    assert "global" in by_key


def test_text_is_multilingual_with_long_messages(tmp_path: Path) -> None:
    generate_corpus(corpus_size("tiny"), SEED + 5, tmp_path / "t")
    texts = [text for _, text in _searchable_texts(tmp_path / "t")]
    joined = "\n".join(texts)
    for sample in ("é", "ü", "ñ", "ệ"):
        assert sample in joined or sample.upper() in joined, sample
    assert any("\u4e00" <= ch <= "\u9fff" for ch in joined)
    assert any("\uac00" <= ch <= "\ud7af" for ch in joined)
    assert max(len(text.encode()) for text in texts) > 2000
    assert min(len(text.split()) for text in texts) < 6


# ---- expected answers against independent oracles ------------------------------------


def test_searchable_count_matches_the_engine_projection(tiny_corpus: Path) -> None:
    manifest = read_manifest(tiny_corpus)
    assert len(_searchable_texts(tiny_corpus)) == manifest["counts"]["searchableMessages"]


def _fts5_phrase(query: str) -> str:
    return '"' + query.replace('"', '""') + '"'


def test_probe_counts_match_sqlite_fts5(tiny_corpus: Path) -> None:
    """Every probe's count equals what SQLite FTS5 (unicode61 remove_diacritics 2) finds."""
    manifest = read_manifest(tiny_corpus)
    connection = sqlite3.connect(":memory:")
    connection.execute(
        "CREATE VIRTUAL TABLE t USING fts5(text, key UNINDEXED, "
        "tokenize = 'unicode61 remove_diacritics 2')"
    )
    connection.executemany("INSERT INTO t VALUES (?, ?)",
                           [(text, key) for key, text in _searchable_texts(tiny_corpus)])
    seen = {}
    for name, probe in manifest["probes"].items():
        terms = probe["query"].split()
        expression = " AND ".join(_fts5_phrase(term) for term in terms)
        if probe["match"] == "prefix":
            expression += "*"
        (word_hits,) = connection.execute(
            "SELECT count(*) FROM t WHERE t MATCH ?", (expression,)
        ).fetchone()
        if name == "cjk_retry":
            # The word path finds nothing, so the retry's substring scan decides.
            assert word_hits == 0
            (word_hits,) = connection.execute(
                "SELECT count(*) FROM t WHERE instr(text, ?) > 0", (probe["query"],)
            ).fetchone()
        seen[name] = word_hits
    assert seen == {name: probe["matchingMessages"] for name, probe in manifest["probes"].items()}
    assert seen["never_indexed"] == 0 and seen["no_hit"] == 0 and seen["common_word"] > 25


def test_per_agent_counts_add_up(tiny_corpus: Path) -> None:
    for probe in read_manifest(tiny_corpus)["probes"].values():
        assert sum(probe["matchingMessagesByAgent"].values()) == probe["matchingMessages"]


def test_never_indexed_word_is_planted_where_nothing_is_indexed(tiny_corpus: Path) -> None:
    raw = "".join(
        path.read_text(encoding="utf-8") for path in (tiny_corpus / "transcripts").iterdir()
    )
    assert raw.count("Xylophonic") > 0


def test_long_session_anchor_is_in_the_long_window(tiny_corpus: Path) -> None:
    long_session = read_manifest(tiny_corpus)["longSession"]
    ids = [event["id"] for event in _events(tiny_corpus, long_session["sessionId"])]
    assert long_session["anchorMessageId"] in ids and long_session["lastMessageId"] in ids
    assert long_session["messages"] == TINY.long_session_messages


# ---- vocabulary invariants the probe model relies on ---------------------------------


def test_natural_words_are_single_tokens_and_lists_have_no_duplicates() -> None:
    for language, words in WORDS_BY_LANGUAGE.items():
        assert len(set(words)) == len(words), language
        assert all(word.isalpha() for word in words), language


def test_probe_words_stay_out_of_lists_code_and_logs() -> None:
    natural = {fold_word(word) for words in WORDS_BY_LANGUAGE.values() for word in words}
    assert natural.isdisjoint(PLANTED_WORDS)
    code_tokens = {
        piece.lower()
        for item in CODE_IDENTIFIERS + LOG_COMPONENTS + LOG_EVENTS
        for piece in item.replace(".", "_").split("_")
    }
    probe_tokens = {token for probe in PROBES for token in probe.required}
    probe_tokens |= set(COMPOUND_WORD.split("-"))
    assert code_tokens.isdisjoint(probe_tokens)
    assert not any(token.startswith("deploym") for token in code_tokens)
    folded_probe = [fold_word(word) for words in WORDS_BY_LANGUAGE.values() for word in words
                    if fold_word(word) == "deja"]
    assert folded_probe == ["deja"]


# ---- the cache ---------------------------------------------------------------------------


def test_ensure_corpus_generates_once_into_the_cache(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SESSION_SEARCH_CACHE", str(tmp_path / "cache"))
    first = ensure_corpus(TINY, SEED)
    assert first == corpus_directory(TINY, SEED) == tmp_path / "cache" / f"tiny-{SEED}"
    stamp = (first / "manifest.json").stat().st_mtime_ns
    assert ensure_corpus(TINY, SEED) == first
    assert (first / "manifest.json").stat().st_mtime_ns == stamp
    assert [path.name for path in (tmp_path / "cache").iterdir()] == [f"tiny-{SEED}"]


def test_generating_into_an_existing_directory_is_refused(tiny_corpus: Path) -> None:
    with pytest.raises(FileExistsError):
        generate_corpus(TINY, SEED, tiny_corpus)


# ---- importable --------------------------------------------------------------------------


def test_the_corpus_imports_into_a_store(tiny_corpus: Path, tmp_path: Path) -> None:
    manifest = read_manifest(tiny_corpus)
    store = TranscriptStore.open_path(tmp_path / "store", writer=True, create=True)
    try:
        report = import_sources(store, [tiny_corpus])
        stats = store.stats()
    finally:
        store.close()
    assert (report.windows, report.events) == (manifest["counts"]["windows"],
                                               manifest["counts"]["events"])
    assert stats["windows"] == manifest["counts"]["windows"]
    assert stats["sessions"] == manifest["counts"]["sessionKeys"]


# ---- the real-text corpus (engine.bench.real_text), on hand-written dialog files -----------
# The chatterbot-corpus layout (`<language>/<topic>.yml`); PyYAML is optional, so these
# tests skip with that reason without it.

ENGLISH = """\
categories:
- tech
conversations:
- - How do I reset my connection?
  - Unplug the router, it's the quickest connection reset.
- - What is a connector?
  - It's a plug that connects two cables.
- - Is my connection secure?
  - |
    It depends on the protocol:
    connections over TLS are encrypted.
- - Ability test one
  - ability test two
- - Ability test three
  - Thanks!
"""

FRENCH = """\
categories:
- salutations
conversations:
- - Le café est prêt?
  - Oui, le café est très chaud.
- - Où est la réunion?
  - La réunion est à côté du café.
"""

CHINESE = """\
categories:
- 问候
conversations:
- - 你好吗今天
  - 我很好谢谢你
- - 你是谁呢
  - 我是机器人你好
"""


@pytest.fixture(scope="module")
def dialog_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    pytest.importorskip("yaml", reason="PyYAML is not installed (pip install pyyaml)")
    data = tmp_path_factory.mktemp("data")
    for language, text in (("english", ENGLISH), ("french", FRENCH), ("chinese", CHINESE)):
        (data / language).mkdir()
        (data / language / "dialogs.yml").write_text(text, encoding="utf-8")
    directory = tmp_path_factory.mktemp("corpus") / "dialogs"
    manifest = write_dialog_corpus(directory, data, "hand-written test dialogs")
    return directory, manifest


def _flat_records(directory: Path) -> list[dict]:
    lines = (directory / "messages.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_real_text_flat_file_alternates_roles_per_dialog(dialog_corpus: tuple[Path, dict]) -> None:
    directory, manifest = dialog_corpus
    records = _flat_records(directory)
    assert len(records) == manifest["counts"]["messages"] == 18
    english = [r for r in records if r["sessionId"] == "chatterbot-english-dialogs"]
    assert [r["role"] for r in english[:4]] == ["user", "assistant", "user", "assistant"]
    assert english[0]["sessionKey"] == "agent:main:chatterbot:english-dialogs"
    assert {r["sessionKey"].split(":")[1] for r in records} == {"main", "research", "work_team"}
    assert agent_for("korean") == "work_team" and agent_for("french") == "research"
    assert "connections over TLS are encrypted." in english[5]["text"]


def test_real_text_probe_answers_match_sqlite_fts5(dialog_corpus: tuple[Path, dict]) -> None:
    directory, manifest = dialog_corpus
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE VIRTUAL TABLE t USING fts5(text, "
                       "tokenize = 'unicode61 remove_diacritics 2')")
    connection.executemany("INSERT INTO t VALUES (?)",
                           [(r["text"].strip(),) for r in _flat_records(directory)])
    probes = manifest["probes"]
    required_probes = {"common_word", "rare_word", "diacritic_word", "two_words",
                       "inner_punctuation", "prefix", "no_hit", "cjk_retry", "recent_common"}
    assert required_probes <= set(probes)
    for name, probe in probes.items():
        expression = " AND ".join('"' + term.replace('"', '""') + '"'
                                  for term in probe["query"].split())
        if probe["match"] == "prefix":
            expression += "*"
        (count,) = connection.execute("SELECT count(*) FROM t WHERE t MATCH ?",
                                      (expression,)).fetchone()
        if name == "cjk_retry":
            assert count == 0
            (count,) = connection.execute("SELECT count(*) FROM t WHERE instr(text, ?) > 0",
                                          (probe["query"],)).fetchone()
        assert count == probe["matchingMessages"], name
    assert probes["rare_word"]["query"] == "ability"
    assert probes["diacritic_word"]["query"] == "café"
    assert probes["prefix"]["query"] == "conne"
    assert probes["inner_punctuation"]["query"] == "it's"


def test_real_text_flat_file_imports(dialog_corpus: tuple[Path, dict], tmp_path: Path) -> None:
    directory, manifest = dialog_corpus
    store = TranscriptStore.open_path(tmp_path / "store", writer=True, create=True)
    try:
        report = import_sources(store, [import_source(directory, manifest)])
    finally:
        store.close()
    assert (report.windows, report.events) == (manifest["counts"]["windows"],
                                               manifest["counts"]["events"])


# ---- corpora/generate.py -------------------------------------------------------------------


def test_generate_script_writes_a_corpus_and_refuses_to_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import runpy

    script = Path(__file__).resolve().parent.parent / "corpora" / "generate.py"
    main = runpy.run_path(str(script))["main"]
    target = tmp_path / "generated"
    assert main(["--size", "tiny", "--seed", str(SEED), "--out", str(target)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == str(target)
    assert json.loads(printed[1]) == read_manifest(target)["counts"]
    assert main(["--size", "tiny", "--out", str(target)]) == 2
    assert "already exists" in capsys.readouterr().err
