"""Golden files of the `icu` profile: `tests/golden/icu/<group>.jsonl`.

Each file starts with a header object naming the profile, its options and the ICU and
Unicode versions it was made with; then one line per case: `{"name", "input", "tokens":
[{"text", "start", "end", "kind"}, ...]}`. The inputs live here, in `GOLDEN_CASES`; the
files hold what ICU made of them.

ICU's segmentation changes between releases (ICU 72 and 77 split `@` differently, and
the CJK and Thai dictionaries change), so when the running ICU or Unicode version differs
from a file's header, its cases are skipped with a message saying how to regenerate.
Regenerate only on purpose and review the result as a diff:

    pytest tests/analysis/test_icu_golden.py --update-goldens && git diff tests/golden/icu
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from engine.analysis.icu_words import ICU_VERSION, UNICODE_VERSION, IcuWordAnalyzer

GOLDEN_DIRECTORY = Path(__file__).resolve().parents[1] / "golden" / "icu"
REGENERATE = "pytest tests/analysis/test_icu_golden.py --update-goldens"

#: file stem → [(case name, input text)]
GOLDEN_CASES: dict[str, list[tuple[str, str]]] = {
    "latin": [
        ("french diacritics", "Café crème brûlée, déjà vu à l’hôtel Noël"),
        ("nfd input", "cafe\u0301 e\u0301cole"),
        ("german sharp s", "Straße STRASSE Maß ẞ"),
        ("vietnamese stacked marks", "Tiếng Việt có dấu: người, được, những"),
        ("ligatures", "ﬁle ﬂow ﬆop ŉ"),
        ("greek and cyrillic accents", "σοφός ΣΟΦΌΣ ёлка Αθήναι"),
        ("turkish dotted i", "İstanbul ıSPARTA Iğdır"),
        ("apostrophes", "don't rock'n'roll l'été o’neil’s it''s 'quoted'"),
        ("underscore and hyphen", "snake_case_name kebab-case __init__ état-major"),
        ("dots", "foo.bar node.js file.tar.gz a.b.c end. Next"),
        ("numbers", "3.14159 1,000,000 1.000.000,50 -42 +7 1e10 v1.2.3 2024-05-01 10:35"),
        ("emails", "john.doe@example.com, john.doe+tag@sub.example.co.uk"),
        ("urls", "https://www.example.com/path/page.html?q=1&lang=fr#top"),
        ("mention and hashtag", "@mention #hashtag $HOME ~user"),
        ("fullwidth latin", "ＡＢＣ ｆｕｌｌ ｗｉｄｔｈ １２３"),
        ("math letters", "𝐀𝐁𝐂 𝒳 𝔘𝔫𝔦"),
        ("joiners inside words", "a\u200db a\u200cb a\u2060b a\ufeffb soft\u00adhyphen"),
        ("code", "def tokenize(text: str) -> list[str]: return text.split()"),
    ],
    "cjk": [
        ("chinese simplified", "中文字符测试"),
        ("chinese sentence", "明天下午三点开项目评审会议讨论排期"),
        ("chinese traditional", "繁體中文的斷詞測試"),
        ("chinese with latin", "中文English混合abc中文def"),
        ("japanese place", "東京都"),
        ("japanese mixed", "日本語のテキストを分かち書きします"),
        ("hiragana", "ひらがな"),
        ("katakana", "カタカナ ラーメン コンピューター"),
        ("halfwidth katakana", "ｶﾀｶﾅ"),
        ("korean", "한국어 텍스트입니다. 검색이 잘 됩니다"),
        ("korean jamo nfd", "\u1112\u1161\u11ab\u1100\u1173\u11af"),
        ("cjk punctuation", "「引用」、句読点。全角！"),
        ("cjk numbers", "2024年5月1日 三十五 第1回"),
    ],
    "scripts": [
        ("thai", "ภาษาไทยง่ายนิดเดียว"),
        ("lao", "ພາສາລາວ"),
        ("khmer", "ភាសាខ្មែរ"),
        ("myanmar", "မြန်မာဘာသာ"),
        ("devanagari", "हिन्दी भाषा में खोज"),
        ("bengali", "বাংলা ভাষা"),
        ("tamil", "தமிழ் மொழி"),
        ("hebrew points", "שָׁלוֹם עוֹלָם"),
        ("arabic harakat", "السَّلَامُ عَلَيْكُمْ"),
        ("rtl with ltr", "مرحبا hello עולם 123"),
        ("arabic digits", "٣٤٥ ١٢٣ ۱۲۳"),
        ("rtl marks", "\u200fשלום\u200e abc \u202bمرحبا\u202c"),
        ("emoji", "😀 🤯🥰 👍🏽 👨\u200d👩\u200d👧 ❤\ufe0f 🇫🇷"),
        ("emoji between words", "ship😀it fast🚀now"),
        ("symbols and numbers", "½ ² ① ™ © € 100€ 50%"),
        ("private use", "\ue000\ue001 x\ue000y"),
        ("mixed scripts", "Привет мир, γειά σου κόσμε, 你好世界, こんにちは"),
        ("georgian and armenian", "ქართული Հայերեն"),
        ("ethiopic and cherokee", "ኢትዮጵያ ᏣᎳᎩ"),
    ],
}

_INVISIBLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


def _escape_invisible(json_text: str) -> str:
    """Write invisible characters as `\\uXXXX` so a reviewer can see them in a diff."""
    return _INVISIBLE.sub(lambda match: f"\\u{ord(match.group()):04x}", json_text)


def header() -> dict[str, Any]:
    return {
        "golden": "icu",
        "profile": "icu",
        "options": {"locale": "root"},
        "icu_version": ICU_VERSION,
        "unicode_version": UNICODE_VERSION,
        "regenerate": REGENERATE,
    }


def expected_record(name: str, text: str) -> dict[str, Any]:
    tokens = IcuWordAnalyzer().tokens(text)
    return {
        "name": name,
        "input": text,
        "tokens": [
            {"text": t.text, "start": t.start, "end": t.end, "kind": t.kind} for t in tokens
        ],
    }


def write_golden_file(stem: str) -> None:
    lines = [header()] + [expected_record(name, text) for name, text in GOLDEN_CASES[stem]]
    body = "".join(_escape_invisible(json.dumps(line, ensure_ascii=False)) + "\n" for line in lines)
    (GOLDEN_DIRECTORY / f"{stem}.jsonl").write_text(body, encoding="utf-8")


def read_golden_file(stem: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    path = GOLDEN_DIRECTORY / f"{stem}.jsonl"
    if not path.exists():
        pytest.fail(f"{path} is missing; create it with `{REGENERATE}`", pytrace=False)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return lines[0], {record["name"]: record for record in lines[1:]}


@pytest.fixture(scope="module")
def golden_files(update_goldens: bool) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    if update_goldens:
        for stem in GOLDEN_CASES:
            write_golden_file(stem)
    return {stem: read_golden_file(stem) for stem in GOLDEN_CASES}


def _skip_on_version_mismatch(file_header: dict[str, Any], stem: str) -> None:
    made_with = (file_header.get("icu_version"), file_header.get("unicode_version"))
    if made_with != (ICU_VERSION, UNICODE_VERSION):
        pytest.skip(
            f"golden file {stem}.jsonl was made with ICU {made_with[0]} / Unicode"
            f" {made_with[1]}, this run has ICU {ICU_VERSION} / Unicode {UNICODE_VERSION};"
            f" segmentation differs between ICU releases: regenerate with `{REGENERATE}`"
            " and review the diff"
        )


@pytest.mark.parametrize(
    ("stem", "name"), [(stem, name) for stem, cases in GOLDEN_CASES.items() for name, _ in cases]
)
def test_icu_tokens_match_golden(golden_files: dict[str, Any], stem: str, name: str) -> None:
    file_header, records = golden_files[stem]
    _skip_on_version_mismatch(file_header, stem)
    text = dict(GOLDEN_CASES[stem])[name]
    assert name in records, f"no golden line for {name!r} in {stem}.jsonl; run `{REGENERATE}`"
    assert records[name]["input"] == text, f"the input of {name!r} changed; run `{REGENERATE}`"
    assert expected_record(name, text)["tokens"] == records[name]["tokens"]


@pytest.mark.parametrize("stem", list(GOLDEN_CASES))
def test_golden_files_hold_exactly_the_listed_cases(
    golden_files: dict[str, Any], stem: str
) -> None:
    file_header, records = golden_files[stem]
    assert file_header["golden"] == "icu"
    assert file_header["profile"] == "icu"
    assert list(records) == [name for name, _ in GOLDEN_CASES[stem]]


@pytest.mark.parametrize("stem", list(GOLDEN_CASES))
def test_golden_offsets_point_into_the_input(golden_files: dict[str, Any], stem: str) -> None:
    _file_header, records = golden_files[stem]
    for record in records.values():
        previous_end = 0
        for token in record["tokens"]:
            assert previous_end <= token["start"] < token["end"] <= len(record["input"])
            previous_end = token["end"]


def test_a_version_mismatch_skips_with_a_regenerate_hint() -> None:
    old_header = {**header(), "icu_version": "72.1", "unicode_version": "15.0"}
    hint = r"made with ICU 72\.1 / Unicode 15\.0.*--update-goldens"
    with pytest.raises(pytest.skip.Exception, match=hint):
        _skip_on_version_mismatch(old_header, "latin")
