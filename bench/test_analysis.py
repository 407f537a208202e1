"""Analysis speed: tokens per second of each profile, beside SQLite FTS5's own tokenizer.

Owns: the analysis benchmarks. Must not touch: engine code or other benchmark files.

Workload: `MESSAGES`, a fixed multilingual set of chat-sized messages (English, French,
German, Spanish, Vietnamese, Chinese, Japanese, Korean, Thai, Russian, Greek, Arabic,
Hebrew, Hindi, emoji, code, URLs and numbers), repeated `REPEAT` times: each message is
analyzed on its own, as indexing does. Each benchmark makes one benchmarked call, returns
the token count and asserts it; the count and the tokens per second (count / median)
land in pytest-benchmark's `extra_info`.

SQLite's speed is measured through what Python can reach: inserting the same messages
into a fresh in-memory FTS5 table (`unicode61 remove_diacritics 2`, as session search
uses). That time includes FTS5's index building, so it is an upper bound on the
tokenizer's own time. Its answer is the number of token instances in `fts5vocab`, which
must equal the `unicode61` profile's count: the benchmark doubles as a parity check.

Caches: the `icu` profile caches folded words; after the first round they are warm, as
they are when a real corpus (Zipf-distributed words) is indexed.

Run: `pytest bench/test_analysis.py --benchmark-only` (plain `pytest` runs `tests/` only).
"""

from __future__ import annotations

import importlib.util
import sqlite3
from collections.abc import Callable

import pytest

from engine.analysis.profiles import PROFILE_NAMES, SEARCH_PROFILE, get_analyzer

pytest.importorskip("pytest_benchmark", reason="pytest-benchmark is not installed")

REPEAT = 40

BASE_MESSAGES: tuple[str, ...] = (
    "Can you check why the deploy failed last night? The logs say 'connection reset'.",
    "Sure: the migration step timed out after 30s; I'll retry with --timeout=120.",
    "Le café crème de l'hôtel était délicieux, mais la réunion a duré trop longtemps.",
    "Die Straße vor dem Büro ist gesperrt; wir treffen uns um 14:30 Uhr im Café Müller.",
    "¿Dónde está la configuración? Necesito cambiar el año y la contraseña mañana.",
    "Tiếng Việt có dấu: người dùng được thông báo về những thay đổi quan trọng.",
    "明天下午三点开项目评审会议，讨论排期和上线计划。",
    "日本語のテキストを検索できるようにしたいです。東京都のデータも含めて。",
    "한국어 텍스트도 검색이 잘 되어야 합니다. 회의는 내일 오전입니다.",
    "ภาษาไทยง่ายนิดเดียว ถ้าตัดคำได้ถูกต้อง",
    "Привет! Сервер перезапущен, ёлка на главной странице снова работает.",
    "Η σύνοψη της συνάντησης στάλθηκε σε όλους τους συμμετέχοντες.",
    "مرحبا بالعالم، السَّلَامُ عَلَيْكُمْ — تم تحديث الخادم بنجاح",
    "שָׁלוֹם עוֹלָם, הגרסה החדשה זמינה להורדה",
    "हिन्दी भाषा में खोज ठीक से काम करनी चाहिए",
    "Shipped 🚀 v1.2.3 to prod 🎉 — thanks @alice! 👍🏽 See https://example.com/release/notes.html",
    "def tokenize(text: str) -> list[str]:\n    return [word.lower() for word in text.split()]",
    "Totals: 1,000,000 rows; 3.14159 avg; error rate 0.5% (was 2.5%) on 2024-05-01.",
)
MESSAGES: tuple[str, ...] = BASE_MESSAGES * REPEAT


def profile_available(name: str) -> bool:
    """False while the module of profile `name` has not been written yet."""
    module_name = {"unicode61": "unicode61", "icu": "icu_words", "pg": "pg_profile"}[name]
    return importlib.util.find_spec(f"engine.analysis.{module_name}") is not None


def analyzer_for(name: str):
    if not profile_available(name):
        pytest.skip(f"the {name} profile module does not exist yet")
    if name == SEARCH_PROFILE.name:
        return SEARCH_PROFILE.analyzer()
    return get_analyzer(name)


def counter(analyzer, method: str) -> Callable[[], int]:
    """A call that analyzes every message with `analyzer.<method>` and counts the tokens."""
    analyze = getattr(analyzer, method)
    return lambda: sum(len(analyze(message)) for message in MESSAGES)


def expected_count(name: str) -> int:
    """The answer, counted once outside the timing with the clear `tokens` path."""
    return counter(analyzer_for(name), "tokens")()


def record_speed(benchmark, tokens: int) -> None:
    benchmark.extra_info["tokens"] = tokens
    stats = getattr(benchmark, "stats", None)
    if stats is not None and stats.stats.median > 0:
        benchmark.extra_info["tokens_per_second"] = round(tokens / stats.stats.median)


@pytest.mark.parametrize("method", ["tokens", "terms"])
@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_profile_speed(benchmark, name: str, method: str) -> None:
    analyzer = analyzer_for(name)
    expected = expected_count(name)
    tokens = benchmark(counter(analyzer, method))
    assert tokens == expected > len(MESSAGES)
    record_speed(benchmark, tokens)


def fresh_fts5_table() -> tuple[tuple[sqlite3.Connection], dict]:
    connection = sqlite3.connect(":memory:")
    connection.execute(
        "CREATE VIRTUAL TABLE messages USING fts5(text, tokenize='unicode61 remove_diacritics 2')"
    )
    return (connection,), {}


def insert_messages(connection: sqlite3.Connection) -> sqlite3.Connection:
    with connection:
        connection.executemany("INSERT INTO messages(text) VALUES (?)", [(m,) for m in MESSAGES])
    return connection


def test_sqlite_fts5_insert(benchmark) -> None:
    if sqlite3.sqlite_version != "3.40.1":
        pytest.skip(f"SQLite {sqlite3.sqlite_version}; the parity figures are for 3.40.1")
    connection = benchmark.pedantic(insert_messages, setup=fresh_fts5_table, rounds=20)
    connection.execute("CREATE VIRTUAL TABLE vocabulary USING fts5vocab(messages, 'instance')")
    tokens = connection.execute("SELECT count(*) FROM vocabulary").fetchone()[0]
    assert tokens > len(MESSAGES)
    if profile_available("unicode61"):
        assert tokens == expected_count("unicode61")
    record_speed(benchmark, tokens)
