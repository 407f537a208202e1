"""Hand-written exact cases for the `pg` profile (no server needed).

Every expectation below was also checked against PostgreSQL 15.20 (C.UTF-8) by
`tests/parity/test_pg_parity.py`, which runs the same inputs through the server.
Facts come from tokenizers.md §4.1 (unaccent), §4.3 (parser), §4.4 (lowercase), §4.5 (limits).
"""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis import pg_character_classes, pg_parser, pg_profile, pg_query, unaccent
from engine.analysis.pg_parser import parse
from engine.analysis.pg_parser_states import STATES
from engine.analysis.pg_profile import PgSimpleUnaccentAnalyzer, lowercase, tsvector_size
from engine.analysis.unaccent import unaccent_with_sources
from engine.errors import InputError

ANALYZER = PgSimpleUnaccentAnalyzer()

# §4.3: input -> ts_parse('default', x) without blanks, as (alias, text).
PARSER_TABLE: list[tuple[str, list[tuple[str, str]]]] = [
    ("don't", [("asciiword", "don"), ("asciiword", "t")]),
    ("O’Neil", [("asciiword", "O"), ("asciiword", "Neil")]),
    ("state-of-the-art", [
        ("asciihword", "state-of-the-art"), ("hword_asciipart", "state"),
        ("hword_asciipart", "of"), ("hword_asciipart", "the"), ("hword_asciipart", "art"),
    ]),
    ("can't-won't", [
        ("asciiword", "can"), ("asciihword", "t-won"), ("hword_asciipart", "t"),
        ("hword_asciipart", "won"), ("asciiword", "t"),
    ]),
    ("co-op2 x-1", [
        ("numhword", "co-op2"), ("hword_asciipart", "co"), ("hword_numpart", "op2"),
        ("asciiword", "x"), ("int", "-1"),
    ]),
    ("under_score", [("asciiword", "under"), ("asciiword", "score")]),
    ("john.doe+tag@sub.example.co.uk", [
        ("host", "john.doe"), ("email", "tag@sub.example.co.uk"),
    ]),
    ("http://www.example.com/p/page.html?q=1&r=2#frag", [
        ("protocol", "http://"), ("url", "www.example.com/p/page.html?q=1&r=2#frag"),
        ("host", "www.example.com"), ("url_path", "/p/page.html?q=1&r=2#frag"),
    ]),
    ("www.example.com:8080", [("host", "www.example.com:8080")]),
    ("file.tar.gz", [("host", "file.tar.gz")]),
    ("node.js", [("host", "node.js")]),
    ("/usr/local/bin/python3", [("file", "/usr/local/bin/python3")]),
    ("./rel/path.txt", [("file", "./rel/path.txt")]),
    ("~/x", [("file", "~/x")]),
    ("a ./rel/path.txt ~/x", [("asciiword", "a"), ("file", "/rel/path.txt"), ("file", "/x")]),
    ("v1.2.3", [("file", "v1.2.3")]),
    ("1.2.3.4", [("version", "1.2.3.4")]),
    ("3.14159", [("float", "3.14159")]),
    ("-3.5e10", [("sfloat", "-3.5e10")]),
    ("1,000,000", [("uint", "1"), ("uint", "000"), ("uint", "000")]),
    ("1.000.000,50", [("version", "1.000.000"), ("uint", "50")]),
    ("2023-01-15", [("uint", "2023"), ("int", "-01"), ("int", "-15")]),
    ("AT&T &amp; &#169;", [
        ("asciiword", "AT"), ("asciiword", "T"), ("entity", "&amp;"), ("entity", "&#169;"),
    ]),
    ("<b>bold</b>", [("tag", "<b>"), ("asciiword", "bold"), ("tag", "</b>")]),
    ("<script>var x=1</script>after", [
        ("tag", "<script>"), ("tag", "</script>"), ("asciiword", "after"),
    ]),
    ("abc123 123abc", [("numword", "abc123"), ("numword", "123abc")]),
    ("中文English", [("word", "中文English")]),
    ("Straße ΣΟΦΟΣ", [("word", "Straße"), ("word", "ΣΟΦΟΣ")]),
    ("½ ² Ⅻ ①", [("word", "Ⅻ")]),
    ("😀 emoji", [("asciiword", "emoji")]),
    ("हिन्दी", [("word", "हिन्दी")]),
    ("a١b", [("word", "a١b")]),
]


@pytest.mark.parametrize(("text", "expected"), PARSER_TABLE, ids=[row[0] for row in PARSER_TABLE])
def test_parser_table_of_section_4_3(text: str, expected: list[tuple[str, str]]) -> None:
    assert [pair for pair in parse(text) if pair[0] != "blank"] == expected


def test_blanks_cover_the_text_exactly() -> None:
    text = "x--y <a href='q\\'r'>t</a> -1.2.3 +5 <!-- c --> &#x1F; ..  ~/a"
    assert "".join(token for _, token in parse(text)) == text
    assert ("blank", "-") in parse("-1.2.3")
    assert parse("-1.2.3") == [("blank", "-"), ("version", "1.2.3")]


def test_script_and_style_content_is_one_blank() -> None:
    assert parse("<style>p { x }</style>y") == [
        ("tag", "<style>"), ("blank", "p { x }"), ("tag", "</style>"), ("asciiword", "y"),
    ]


def test_only_ascii_characters_are_tested_literally() -> None:
    # The sweep in tests/parity relies on this: a non-ASCII character only matters through
    # its class, never through a literal-character rule.
    literal_tests = {
        rule.test for rules in STATES.values() for rule in rules if len(rule.test) == 1
    }
    assert literal_tests and all(ord(test) < 0x80 for test in literal_tests)


# §4.1 unaccent


@pytest.mark.parametrize(("source", "target"), [
    ("ß", "ss"), ("Æ", "AE"), ("Œ", "OE"), ("ﬁ", "fi"), ("½", "1/2"), ("©", "(C)"),
    ("…", "..."), ("«", "<<"), ("‐", "-"), ("“", '"'), ("Ё", "Е"), ("ø", "o"), ("ł", "l"),
    ("ð", "d"), ("þ", "th"), ("Ǆ", "DZ"), ("ά", "α"), ("\u0301", ""), ("x", "x"),
])
def test_unaccent_rules(source: str, target: str) -> None:
    assert unaccent.unaccent(source) == target


def test_unaccent_has_1650_single_code_point_rules_and_106_deletions() -> None:
    from engine.analysis.tables.pg_unaccent_map import UNACCENT_MAP

    assert len(UNACCENT_MAP) == 1650
    assert sum(1 for target in UNACCENT_MAP.values() if target == "") == 106


def test_whole_text_unaccent_changes_boundaries() -> None:
    assert ANALYZER.terms("½ ‐ x‐ray co‐op …end «quote»") == [
        "1/2", "x-ray", "x", "ray", "co-op", "co", "op", "end",
    ]
    assert ANALYZER.terms("Æsir ﬁle ŒUVRE") == ["aesir", "file", "oeuvre"]


def test_offsets_point_into_the_original_text() -> None:
    text = "Straße café\u0301 ½x"
    tokens = ANALYZER.tokens(text)
    assert [(t.text, text[t.start:t.end], t.kind, t.position) for t in tokens] == [
        ("strasse", "Straße", "pg:asciiword", 1),
        ("cafe", "café", "pg:asciiword", 2),
        ("1/2x", "½x", "pg:file", 3),
    ]
    encoded = text.encode("utf-8")
    assert [encoded[t.byte_start:t.byte_end].decode() for t in tokens] == ["Straße", "café", "½x"]
    mapped = unaccent_with_sources("aß")
    assert mapped.text == "ass" and mapped.sources == (0, 1, 1)


# §4.4 lowercase


def test_lowercase_is_per_code_point() -> None:
    assert lowercase("ΣΟΦΟΣ") == "σοφοσ"
    assert lowercase("σοφός") == "σοφός"
    assert lowercase("İ") == "i"
    assert lowercase("ẞ") == "ß"
    assert ANALYZER.terms("İstanbul ΣΟΦΟΣ Straße") == ["istanbul", "σοφοσ", "strasse"]
    assert ANALYZER.terms("ς σ") == ["ς", "σ"]


# §4.5 positions and limits


def test_positions_count_mapped_tokens_only() -> None:
    assert ANALYZER.tsvector("<b>a</b> &amp; http://x.io/p b") == {
        "/p": [4], "a": [1], "b": [5], "x.io": [3], "x.io/p": [2],
    }


def test_lexemes_are_sorted_by_utf8_bytes() -> None:
    assert list(ANALYZER.tsvector("é z a Z 1 -1")) == ["-1", "1", "a", "e", "z"]
    assert list(ANALYZER.tsvector("中 ÿ ā")) == ["a", "y", "中"]


def test_at_most_255_positions_per_lexeme() -> None:
    vector = ANALYZER.tsvector("a " * 300)
    assert vector["a"] == list(range(1, 256))
    assert len(ANALYZER.tokens("a " * 300)) == 300


def test_positions_are_capped_at_16383() -> None:
    words = " ".join(f"w{index}" for index in range(16390))
    vector = ANALYZER.tsvector(words + " last last")
    assert vector["w16381"] == [16382]
    assert vector["w16382"] == [16383]
    assert vector["w16389"] == [16383]
    assert vector["last"] == [16383]


def test_tokens_longer_than_2047_bytes_are_dropped_without_a_position() -> None:
    assert ANALYZER.tsvector("x" * 2047 + " y") == {"x" * 2047: [1], "y": [2]}
    assert ANALYZER.tsvector("x" * 2048 + " y") == {"y": [1]}
    # Measured after unaccent: 1024 × ß is 2048 bytes but becomes 2048 × s.
    assert ANALYZER.tsvector("ß" * 1024 + " y") == {"y": [1]}
    assert ANALYZER.tsvector("é" * 1023 + "a y") == {"y": [2], "e" * 1023 + "a": [1]}


def test_no_letter_left_by_unaccent_grows_when_lowercased() -> None:
    # PostgreSQL corrupts a tsvector when lowercasing pushes a lexeme past 2047 bytes
    # (1023 x U+023A). unaccent maps every such letter first, so the pipeline cannot hit it;
    # the analyzer still guards against it with an InputError.
    from engine.analysis.pg_character_classes import LETTER, c_utf8_classes
    from engine.analysis.tables.pg_unaccent_map import UNACCENT_MAP

    classes = c_utf8_classes()
    growing = [
        code_point for code_point in range(0x80, 0x10000)
        if code_point not in UNACCENT_MAP and classes.class_of(code_point) == LETTER
        and len(lowercase(chr(code_point)).encode()) > len(chr(code_point).encode())
    ]
    assert growing == []
    assert unaccent.unaccent("\u023a") == "A"
    assert ANALYZER.tsvector("\u023a" * 1023) == {"a" * 1023: [1]}


def test_the_one_mebibyte_limit_uses_postgresql_wording() -> None:
    text = " ".join(f"lexeme{index:07d}" for index in range(60000))
    with pytest.raises(InputError) as raised:
        ANALYZER.tsvector(text)
    assert str(raised.value) == (
        "string is too long for tsvector (1080000 bytes, max 1048575 bytes)"
    )
    assert tsvector_size({"abc": [1, 2], "d": []}) == 3 + 1 + 2 + 4 + 1


def test_terms_equal_token_texts() -> None:
    text = "Mixed: http://a.b/c?d=1, x-y-z 3.5e2 <i>ok</i> Łódź"
    assert ANALYZER.terms(text) == [token.text for token in ANALYZER.tokens(text)]


def test_describe_names_every_stage() -> None:
    lines = ANALYZER.describe()
    assert [line.split(":")[0] for line in lines] == [
        "unaccent", "parser", "map", "length", "lowercase", "positions", "tsvector",
    ]


# queries (§4.6)


def test_query_text_forms() -> None:
    assert pg_query.tsquery_text(pg_query.phraseto_tsquery("a-b c")) == (
        "'a-b' <-> 'a' <-> 'b' <-> 'c'"
    )
    assert pg_query.tsquery_text(pg_query.plainto_tsquery("quick | brown")) == (
        "'quick' & 'brown'"
    )
    assert pg_query.tsquery_text(pg_query.prefix_tsquery("a b")) == "'a':* <-> 'b':*"
    assert pg_query.phraseto_tsquery("- <b>") is None
    assert pg_query.tsquery_text(None) == ""


def test_matches_phrase_prefix_and_empty() -> None:
    vector = ANALYZER.tsvector("The quick brown fox, superman")
    assert pg_query.matches(vector, pg_query.phraseto_tsquery("quick brown"))
    assert not pg_query.matches(vector, pg_query.phraseto_tsquery("brown quick"))
    assert pg_query.matches(vector, pg_query.prefix_tsquery("super"))
    assert not pg_query.matches(vector, pg_query.prefix_tsquery("supermen"))
    assert pg_query.matches(vector, pg_query.plainto_tsquery("fox the"))
    assert not pg_query.matches(vector, None)


@pytest.mark.parametrize(
    "module", [pg_character_classes, pg_parser, pg_profile, pg_query, unaccent]
)
def test_doctests(module: object) -> None:
    failures, tried = doctest.testmod(module)
    assert tried > 0
    assert failures == 0


def test_memoized_rule_selection_agrees_with_the_clear_scan() -> None:
    import random

    from engine.analysis.pg_parser import DefaultParser

    pieces = list("aZ09-_.@:/~&#;<>!?'\"\\= e%,\t") + [
        "http://", "www.", ".com", "<script>", "</script>", "&amp;", "..", "é", "中",
        "\u0301", "\u00a0", "😀", "-1", "1.", "e5", "<!--", "-->", "x@y.z",
    ]
    generator = random.Random(4)
    for _ in range(2000):
        text = "".join(generator.choice(pieces) for _ in range(generator.randint(1, 12)))
        fast = DefaultParser(text).tokens()
        clear = DefaultParser(text, use_memo=False).tokens()
        assert fast == clear, text


SOME_TEXT = st.text(
    st.one_of(
        st.sampled_from(list("aZ09-_.@:/~&#;<> 'ß½…«ÆİΣ\u0301\u00a0中😀")),
        st.characters(min_codepoint=0, max_codepoint=0x10FFFF),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(text=SOME_TEXT)
def test_token_spans_and_positions_are_consistent(text: str) -> None:
    tokens = ANALYZER.tokens(text)
    assert ANALYZER.terms(text) == [token.text for token in tokens]
    encoded_prefix = [
        len(text[:index].encode("utf-8", "surrogatepass")) for index in range(len(text) + 1)
    ]
    previous_start, previous_position = 0, 0
    for token in tokens:
        assert 0 <= token.start < token.end <= len(text)
        assert token.byte_start == encoded_prefix[token.start]
        assert token.byte_end == encoded_prefix[token.end]
        assert token.text in lowercase(unaccent.unaccent(text[token.start:token.end]))
        assert token.start >= previous_start
        assert token.position == previous_position + 1
        previous_start, previous_position = token.start, token.position
    vector = ANALYZER.tsvector(text)
    assert sorted(vector) == sorted({token.text for token in tokens})


# §4.2 character classes (C.UTF-8, glibc 2.36, Unicode 14)


def test_character_class_facts_of_section_4_2() -> None:
    import unicodedata

    from engine.analysis.pg_character_classes import (
        DIGIT,
        LETTER,
        OTHER,
        SPACE,
        SPECIAL,
        c_utf8_classes,
    )
    from engine.analysis.tables.pg_char_classes import SPACE_RANGES, SPECIAL_RANGES

    classes = c_utf8_classes()
    assert SPACE_RANGES == (
        (0x09, 0x0D), (0x20, 0x20), (0x1680, 0x1680), (0x2000, 0x2006), (0x2008, 0x200A),
        (0x2028, 0x2029), (0x205F, 0x205F), (0x3000, 0x3000),
    )
    for letter in "\u093f\u0e31Ⅻªé中١":
        assert classes.class_of(ord(letter)) == LETTER, letter
    for other in "½²①😀_\ue000\u00a0\u2007\u202f\u200b\u200d\u00ad":
        assert classes.class_of(ord(other)) == OTHER, other
    assert classes.class_of(ord("7")) == DIGIT
    assert classes.class_of(ord("٣")) == LETTER
    assert classes.class_of(0x3000) == SPACE
    assert classes.class_of(0x094D) == SPECIAL
    specials = [c for first, last in SPECIAL_RANGES for c in range(first, last + 1)]
    categories = [unicodedata.category(chr(c)) for c in specials]
    assert categories.count("Cn") == 111
    assert set(categories) == {"Mn", "Me", "Mc", "Cn"}
