"""Differential tests: `Unicode61Tokenizer` against the real SQLite 3.40.1 FTS5 `unicode61`.

Owns: comparing token lists (through `fts5vocab` 'instance'), positions and byte offsets
(through `highlight()`) of the reference tokenizer with the real FTS5 on the same inputs.
Must not touch: the engine's own index or query code.

SQLite other than 3.40.1 → the tests skip with a message (fail under `CI=true`).
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.analysis.unicode61 import Unicode61Tokenizer
from tests.ci_policy import skip_or_fail

PINNED_SQLITE_VERSION = "3.40.1"
SCALAR_VALUES = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
PROBES_PER_DOCUMENT = 2048
DOCUMENTS_PER_TABLE = 64


@dataclass(frozen=True, slots=True)
class Configuration:
    """A tokenizer configuration under test (the same options on both sides)."""

    remove_diacritics: int = 1
    tokenchars: str = ""
    separators: str = ""
    categories: str | None = None

    def tokenize_option(self) -> str:
        """The FTS5 `tokenize` argument, written here rather than by the code under test."""
        parts = [f"unicode61 remove_diacritics {self.remove_diacritics}"]
        for name, value in (
            ("categories", self.categories),
            ("tokenchars", self.tokenchars or None),
            ("separators", self.separators or None),
        ):
            if value is not None:
                parts.append(f"{name} '" + value.replace("'", "''") + "'")
        return " ".join(parts)

    def tokenizer(self) -> Unicode61Tokenizer:
        return Unicode61Tokenizer(
            self.remove_diacritics, self.tokenchars, self.separators, self.categories
        )


CONFIGURATIONS = [
    Configuration(0),
    Configuration(1),
    Configuration(2),
    Configuration(2, tokenchars="-_'\u00bf\U0001f600\u200d", separators="xé\u00df"),
    Configuration(0, tokenchars="\u0301.", separators="_\u0301q\u4e2d"),
    Configuration(1, categories="L* N* Co Mn"),
    Configuration(2, categories="Lu Nd So P*", tokenchars="z"),
    Configuration(0, categories="C* Z*", separators=" "),
]


def configuration_id(configuration: Configuration) -> str:
    return configuration.tokenize_option().encode("unicode_escape").decode()


# --------------------------------------------------------------------------------------
# The real FTS5


class Fts5:
    """Runs text through real FTS5 tables and reads tokens back."""

    def __init__(self) -> None:
        self.connection = sqlite3.connect(":memory:")
        self.connection.text_factory = lambda raw: raw.decode("utf-8", "surrogateescape")

    def close(self) -> None:
        self.connection.close()

    def create(self, configuration: Configuration) -> None:
        tokenize = configuration.tokenize_option().replace('"', '""')
        self.connection.execute(f'CREATE VIRTUAL TABLE t USING fts5(x, tokenize="{tokenize}")')
        self.connection.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")

    def drop(self) -> None:
        self.connection.execute("DROP TABLE v")
        self.connection.execute("DROP TABLE t")

    def insert(self, documents: Sequence[str]) -> None:
        """Insert in one transaction; text with lone surrogates goes in as a UTF-8 blob."""
        rows = [
            (rowid, document if document.isascii() or is_encodable(document) else as_blob(document))
            for rowid, document in enumerate(documents)
        ]
        with self.connection:
            self.connection.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", rows)

    def tokens(self, configuration: Configuration, documents: Sequence[str]) -> list[list]:
        """[(position, term)] per document; a NULL term (an empty token) reads as ""."""
        self.create(configuration)
        try:
            self.insert(documents)
            per_document: list[list[tuple[int, str]]] = [[] for _ in documents]
            for term, document, offset in self.connection.execute(
                "SELECT term, doc, offset FROM v"
            ):
                per_document[document].append((offset, "" if term is None else term))
            return [sorted(tokens) for tokens in per_document]
        finally:
            self.drop()

    def highlights(self, configuration: Configuration, document: str, phrase: str) -> str:
        """`highlight(t, 0, '[', ']')` for a one-phrase query on a one-row table."""
        self.create(configuration)
        try:
            self.insert([document])
            query = '"' + phrase.replace('"', '""') + '"'
            row = self.connection.execute(
                "SELECT highlight(t, 0, '[', ']') FROM t WHERE t MATCH ?", (query,)
            ).fetchone()
            if row is None:
                return document
            value = row[0]
            if isinstance(value, str):
                return value.encode("utf-8", "surrogateescape").decode("utf-8", "surrogatepass")
            return value
        finally:
            self.drop()


def is_encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def as_blob(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def running_in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


@pytest.fixture(scope="module")
def fts5() -> Iterator[Fts5]:
    if sqlite3.sqlite_version != PINNED_SQLITE_VERSION:
        reason = (
            f"FTS5 parity is pinned to SQLite {PINNED_SQLITE_VERSION}; "
            f"this Python links SQLite {sqlite3.sqlite_version}"
        )
        skip_or_fail(reason, "the FTS5 parity tests cannot run")
    instance = Fts5()
    yield instance
    instance.close()


def expected_tokens(configuration: Configuration, text: str) -> list[tuple[int, str]]:
    return [(token.position, token.text) for token in configuration.tokenizer().tokens(text)]


def assert_same_tokens(fts5: Fts5, configuration: Configuration, texts: Sequence[str]) -> None:
    """Clear version, fast versions and FTS5 agree on every text."""
    tokenizer = configuration.tokenizer()
    real = fts5.tokens(configuration, texts)
    mismatches = []
    for text, real_tokens in zip(texts, real, strict=True):
        clear = [(token.position, token.text) for token in tokenizer.tokens(text)]
        fast = list(enumerate(tokenizer.terms(text)))
        spans = [(term, start, end) for term, start, end in tokenizer.token_spans(text)]
        clear_spans = [(t.text, t.start, t.end) for t in tokenizer.tokens(text)]
        if not (clear == real_tokens == fast and spans == clear_spans):
            mismatches.append((text, real_tokens, clear, fast))
    assert mismatches == []


# --------------------------------------------------------------------------------------
# Hand-picked inputs (every example of tokenizers.md §1 and behaviour.md §4.1)

HAND_PICKED = [
    "snake_case_name it's a-b a.b user@example.com work_team",
    "a\x00b",
    "a\ud800b \udfff x\ufffey \uffff z\ud83d\ude00w",
    "🤯 🥰 🤯🥰 👍🏽 😀 ❤ 👍 \U0001f3fb\U0001f3ff",
    "\u2066x\u2069 \u061c \u20ba \ufdd0 \U0001fffe \U0010fffe",
    "½ ² ① ³ ①②③ \ue000 \U000f0000 \U00100000",
    "a\u200db a\u200cb a\u2060b \ufeffb a\u00adb a\ufe0fb",
    "\u19b0x \u19c8 \u1cf2 \u1885\u1886 a\u19b0b",
    "हिन्दी السَّلَامُ שָׁלוֹם ภาษาไทยง่ายมาก a\u0332b  \u0301x",
    "Σ ς ΣΟΦΟΣ σοφός ẞ ß ﬁ İ ı ǅ Ǆ \u212a \u2126 Ⅻ Ａ Ꭰ ꭰ \u1c90",
    "\U00010400\U00010427 \U0001e900 \u1fd3 \u1fe3 \ufb05",
    "cafe\u0301 café ǖ ấ ệ ự ḗ Ǡ ǡ ø ł đ ð þ æ œ ß ı ŉ ά ё",
    "Café naïve coöperate façade ΟΣ ος 明天下午三点开项目评审会议讨论排期",
    "abc中文def 中文English混合 東京都 ひらがな 한국어",
    "x" * 40000 + " " + "é" * 20000 + " " + "中" * 10923 + " " + "É" * 16390,
    "e\u0301\u0301\u0301 \u0301\u0301 q\u0301",
    "ﾃｽﾄ ＡＢＣ １２３ ٣٤٥ ۱۲ ๑๒",
    "",
    "   ",
]


@pytest.mark.parametrize("configuration", CONFIGURATIONS, ids=configuration_id)
def test_hand_picked_inputs_match_fts5(fts5: Fts5, configuration: Configuration) -> None:
    assert_same_tokens(fts5, configuration, HAND_PICKED)


SEEDED_ALPHABET = (
    "aAzZ09 _-'.@\t\n\x00éÉßẞİıǅΣςσΟΣ"
    "\u0300\u0301\u0308\u0331\u0332\u0345\u05b8\u064e\u093f\u0e48"
    "中文한국ひらカナ🤯🥰😀👍🏽\u200d\u200c\ufe0f\u00ad"
    "①½²\ue000\U000f0000\U00100000\u0378\ufdd0\ufffd"
    "\u19b0\u1885\u1cf2\u2066\u061c\u20ba\u212aⅫＡ\U00010400\U0001e900"
    "\u05d0\u0627\u0928ก\u0d9a\u13a0\uab70\u1c90\u01e0\u01e1\u01d6"
)


def seeded_strings(count: int, seed: int) -> list[str]:
    generator = random.Random(seed)
    strings = []
    for _ in range(count):
        length = generator.randint(0, 24)
        characters = []
        for _ in range(length):
            if generator.random() < 0.15:
                characters.append(chr(generator.choice(SCALAR_VALUES)))
            elif generator.random() < 0.03:
                characters.append(chr(generator.randint(0xD800, 0xDFFF)))
            else:
                characters.append(generator.choice(SEEDED_ALPHABET))
        strings.append("".join(characters))
    return strings


@pytest.mark.parametrize("configuration", CONFIGURATIONS, ids=configuration_id)
def test_seeded_random_strings_match_fts5(fts5: Fts5, configuration: Configuration) -> None:
    assert_same_tokens(fts5, configuration, seeded_strings(2000, seed=61))


# --------------------------------------------------------------------------------------
# Hypothesis: mixed-script text, lone surrogates inserted as blobs

MIXED_PIECE_TEXTS = [
    "deploy", "Café", "NAÏVE", "e\u0301", "ΟΣ", "ς", "东京", "日本語", "한국어", "ﾃｽﾄ", "Ｆｕｌｌ", "١٢٣",
    "שָׁלוֹם", "مرحبا", "हिन्दी", "ภาษา", "🤯", "👍🏽", "👨\u200d👩\u200d👧", "🏳️\u200d🌈", "\ue000",
    "\U000f0001", "\u200f", "\u202e", "snake_case", "a-b", "x.y", "1,000", "½", "①", "\u0301",
    "\u0332", " ", "\t", "\n", "\x00", "\ud800", "\udfff", "\ufffe", "İ", "ẞ", "ǅ", "Ǡ",
    "\u19b0", "\u1885", "\u2066",
]  # fmt: skip
MIXED_PIECES = st.sampled_from(MIXED_PIECE_TEXTS)
MIXED_TEXT = st.lists(
    st.one_of(MIXED_PIECES, st.characters(min_codepoint=0, max_codepoint=0x10FFFF)),
    max_size=30,
).map("".join)


@pytest.mark.parametrize("configuration", CONFIGURATIONS, ids=configuration_id)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=MIXED_TEXT)
def test_generated_mixed_script_text_matches_fts5(
    fts5: Fts5, configuration: Configuration, text: str
) -> None:
    assert_same_tokens(fts5, configuration, [text])


# --------------------------------------------------------------------------------------
# Offsets: highlight() shows the byte spans FTS5's tokenizer reported


def expected_highlight(configuration: Configuration, text: str, term: str) -> str:
    """What highlight() prints. It copies each stretch of text between highlighted tokens as
    a C string, so in SQLite 3.40.1 a stretch stops at its first NUL."""
    pieces = []
    cursor = 0
    for token in configuration.tokenizer().tokens(text):
        if token.text == term:
            pieces.append(text[cursor : token.start].split("\x00")[0])
            pieces.append("[" + text[token.start : token.end] + "]")
            cursor = token.end
    return "".join(pieces) + text[cursor:].split("\x00")[0]


OFFSET_TEXTS = [
    "Café crème brûlée",
    "e\u0301t\u0301e\u0301 \u0301x naïve",
    "東京 🤯🥰 x👍🏽y",
    "a\ud800b\udfffc",
    "ΟΣ ος\x00ΣΟΦΟΣ",
    "हिन्दी السَّلَامُ",
]


@pytest.mark.parametrize("configuration", CONFIGURATIONS[:4], ids=configuration_id)
@pytest.mark.parametrize("text", OFFSET_TEXTS)
def test_token_offsets_match_highlight(fts5: Fts5, configuration: Configuration, text: str) -> None:
    tokenizer = configuration.tokenizer()
    for token in tokenizer.tokens(text):
        if not token.text:
            continue
        phrase = text[token.start : token.end]
        expected = expected_highlight(configuration, text, token.text)
        assert fts5.highlights(configuration, text, phrase) == expected
        assert token.byte_end - token.byte_start == len(phrase.encode("utf-8", "surrogatepass"))


def test_byte_offsets_count_lone_surrogates_as_three_bytes() -> None:
    tokens = Unicode61Tokenizer().tokens("a\ud800bé\udfffc")
    assert [(t.text, t.byte_start, t.byte_end) for t in tokens] == [
        ("a", 0, 1),
        ("be", 4, 7),
        ("c", 10, 11),
    ]


# --------------------------------------------------------------------------------------
# Constructor options: what SQLite accepts and rejects


@pytest.mark.parametrize(
    "categories",
    ["Luxyz", "L", "Lu,Ll", "Lu\tNd", "", "  ", "lu", "X*", "Xq", "Cs", "LC", "Lx", "Q", "M?"],
)
def test_categories_option_is_accepted_or_rejected_like_fts5(fts5: Fts5, categories: str) -> None:
    configuration = Configuration(categories=categories)
    try:
        fts5.create(configuration)
    except sqlite3.OperationalError as error:
        assert "error in tokenizer constructor" in str(error)
        with pytest.raises(Exception, match="invalid categories entry"):
            configuration.tokenizer()
        return
    fts5.drop()
    assert_same_tokens(fts5, configuration, HAND_PICKED)


# --------------------------------------------------------------------------------------
# The sweep over every Unicode scalar value


def sweep_documents(probe: str) -> list[tuple[list[int], str]]:
    """Documents of `PROBES_PER_DOCUMENT` probes each, joined by spaces."""
    documents = []
    for index in range(0, len(SCALAR_VALUES), PROBES_PER_DOCUMENT):
        code_points = SCALAR_VALUES[index : index + PROBES_PER_DOCUMENT]
        if probe == "start":
            text = " ".join("s " + chr(cp) + "q" for cp in code_points)
        else:
            text = " ".join("q" + chr(cp) + "q" for cp in code_points)
        documents.append((code_points, text))
    return documents


def first_mismatch(tokenizer: Unicode61Tokenizer, text: str, real: list) -> str:
    tokens = tokenizer.tokens(text)
    for token, real_token in zip(tokens, real, strict=False):
        if (token.position, token.text) != real_token:
            return f"near {text[max(0, token.start - 3) : token.end + 3]!r}: {real_token}"
    return f"token counts {len(tokens)} vs {len(real)}"


@pytest.mark.slow
@pytest.mark.parametrize("remove_diacritics", [0, 1, 2])
@pytest.mark.parametrize("probe", ["start", "continuation"])
def test_every_scalar_value_matches_fts5(fts5: Fts5, remove_diacritics: int, probe: str) -> None:
    """`"s "+c+"q"` (can c start a token) and `"q"+c+"q"` (does c continue one, and what does
    it fold to) for all 1,112,064 scalar values: terms and positions agree, through both the
    clear `tokens` and the fast `terms`."""
    sweep(fts5, Configuration(remove_diacritics), probe)


@pytest.mark.slow
@pytest.mark.parametrize("remove_diacritics", [0, 1, 2])
def test_every_scalar_value_folds_like_fts5_when_every_category_is_a_token(
    fts5: Fts5, remove_diacritics: int
) -> None:
    """With every category enabled each code point is a token character, so `"q"+c+"q"` shows
    the fold of every code point, including those only `tokenchars` can expose."""
    configuration = Configuration(
        remove_diacritics, separators=" ", categories="L* M* N* P* S* Z* C*"
    )
    sweep(fts5, configuration, "continuation")


@pytest.mark.slow
def test_every_scalar_value_starts_tokens_like_fts5_under_a_categories_option(
    fts5: Fts5,
) -> None:
    """A non-default `categories` option reads SQLite's per-code-point category table for
    classes the default never looks at."""
    configuration = Configuration(
        1, separators=" ", tokenchars="sq", categories="Lu Mn So Zs Nl Pd Cf Sk"
    )
    sweep(fts5, configuration, "start")


def sweep(fts5: Fts5, configuration: Configuration, probe: str) -> None:
    began = time.perf_counter()
    tokenizer = configuration.tokenizer()
    documents = sweep_documents(probe)
    mismatches: list[str] = []
    probes_checked = 0
    for index in range(0, len(documents), DOCUMENTS_PER_TABLE):
        batch = documents[index : index + DOCUMENTS_PER_TABLE]
        real = fts5.tokens(configuration, [text for _, text in batch])
        for (code_points, text), real_tokens in zip(batch, real, strict=True):
            probes_checked += len(code_points)
            clear = [(token.position, token.text) for token in tokenizer.tokens(text)]
            fast = list(enumerate(tokenizer.terms(text)))
            if not clear == fast == real_tokens:
                mismatches.append(first_mismatch(tokenizer, text, real_tokens))
    assert probes_checked == 1_112_064
    assert mismatches == []
    print(
        f"\n{configuration.tokenize_option()!r} {probe}: {probes_checked} scalar values, "
        f"0 mismatches, {time.perf_counter() - began:.1f} s"
    )
