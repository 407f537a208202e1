"""Generator of the `pg` profile's data tables, by probing a real PostgreSQL server.

Owns: deriving, for every Unicode scalar value, what PostgreSQL 15's `default` text-search
parser thinks of it (letter, digit, space, hex digit, zero-width "special"), what
`lower()` makes of it and what `unaccent()` makes of it; and writing those facts as two
Python modules next to this file (`pg_char_classes.py`, `pg_unaccent_map.py`).
Must not touch: anything at run time. The engine imports only the generated modules; this
file is run by hand (it needs psycopg and a server):

    python -m engine.analysis.tables.generate_pg postgresql://postgres@127.0.0.1:5432/test

The server must be a UTF8 database whose `LC_CTYPE` is C.UTF-8 (glibc 2.36, Unicode 14),
with the `unaccent` extension available (it is created if missing).

How each fact is probed (one SQL statement per block of code points, all probes at once;
`ts_parse('default', x)` gives the parser's token types, see tokenizers.md §9):

* `c` alone: a `word`/`asciiword` token means c is a letter (`iswalpha`), a `uint` token
  means c is a digit (`iswdigit`), anything else (a `blank`) means neither;
* `"a" + c + "b"`: one token means c continues a word; for a character that is neither a
  letter nor a digit that makes it "special" (zero display width, or one of the spacing
  marks PostgreSQL lists by hand);
* `"&a" + c + ";"`: an `entity` token means c is alphanumeric (`iswalnum`);
* `".." + c`: a `file` token `..` means c is a space (`iswspace`);
* `"&#x" + c + ";"`: an `entity` token means c is a hex digit (`iswxdigit`);
* `lower(c)` and `unaccent(c)` directly.

ASCII is not probed for "special" or "space" (the probes are ambiguous there: `a.b` is one
`file` token, `../` is a path): no ASCII character is special, and the ASCII spaces are
C `isspace`'s six. Letters and digits are probed everywhere, ASCII included.

Lone surrogates and U+0000 cannot be PostgreSQL text and are not probed.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLASSES_MODULE = HERE / "pg_char_classes.py"
UNACCENT_MODULE = HERE / "pg_unaccent_map.py"

MAX_CODE_POINT = 0x10FFFF
SURROGATES = range(0xD800, 0xE000)
BLOCK = 0x10000
ASCII_SPACES = "\t\n\v\f\r "

# ts_token_type('default') ids used by the probes.
ASCIIWORD, WORD, UINT, BLANK, ENTITY, FILE = 1, 2, 22, 12, 23, 19

PROBE_SQL = """
SELECT c,
  (SELECT string_agg(tokid::text, ' ') FROM ts_parse('default', chr(c))),
  (SELECT count(*) FROM ts_parse('default', 'a' || chr(c) || 'b')),
  (SELECT string_agg(tokid::text, ' ') FROM ts_parse('default', '&a' || chr(c) || ';')),
  (SELECT string_agg(tokid::text || '=' || token, ' ') FROM ts_parse('default', '..' || chr(c))),
  (SELECT string_agg(tokid::text, ' ') FROM ts_parse('default', '&#x' || chr(c) || ';')),
  lower(chr(c)),
  unaccent(chr(c))
FROM generate_series(%s::int, %s::int) AS c
WHERE c NOT BETWEEN 55296 AND 57343
ORDER BY c
"""


def probe_rows(connection: object, first: int, last: int) -> Iterator[tuple]:
    """Yield the probe row of every probed code point in [first, last]."""
    start = max(first, 1)
    while start <= last:
        stop = min(start + BLOCK - 1, last)
        yield from connection.execute(PROBE_SQL, (start, stop)).fetchall()
        start = stop + 1


def to_ranges(code_points: Iterable[int]) -> list[tuple[int, int]]:
    """Collapse sorted code points into inclusive ranges.

    >>> to_ranges([1, 2, 3, 7, 9, 10])
    [(1, 3), (7, 7), (9, 10)]
    """
    ranges: list[tuple[int, int]] = []
    for code_point in code_points:
        if ranges and ranges[-1][1] == code_point - 1:
            ranges[-1] = (ranges[-1][0], code_point)
        else:
            ranges.append((code_point, code_point))
    return ranges


def python_per_character_lower(character: str) -> str:
    """The lowercase the engine computes before consulting the exception table."""
    return character.lower()


def classify(rows: Iterable[tuple]) -> dict[str, object]:
    """Turn probe rows into the sets and maps the parser needs."""
    alpha: list[int] = []
    digit: list[int] = []
    special: list[int] = []
    space: list[int] = []
    xdigit: list[int] = []
    alnum_mismatch: list[int] = []
    lower_exceptions: dict[int, str] = {}
    unaccent: dict[int, str] = {}
    for code_point, alone, joined_count, entity_alnum, dots, entity_hex, lowered, plain in rows:
        character = chr(code_point)
        is_alpha = alone in (str(ASCIIWORD), str(WORD))
        is_digit = alone == str(UINT)
        if is_alpha:
            alpha.append(code_point)
        if is_digit:
            digit.append(code_point)
        is_ascii = code_point <= 0x7F
        if not is_ascii and not is_alpha and not is_digit and joined_count == 1:
            special.append(code_point)
        is_alnum = entity_alnum == str(ENTITY)
        if code_point > 0x7F and is_alnum != (is_alpha or is_digit):
            alnum_mismatch.append(code_point)
        if is_ascii:
            if chr(code_point) in ASCII_SPACES:
                space.append(code_point)
        elif dots is not None and dots.split(" ")[0] == f"{FILE}=..":
            space.append(code_point)
        if entity_hex == str(ENTITY):
            xdigit.append(code_point)
        if lowered != python_per_character_lower(character):
            lower_exceptions[code_point] = lowered
        if plain != character:
            unaccent[code_point] = plain
    return {
        "alpha": alpha,
        "digit": digit,
        "special": special,
        "space": space,
        "xdigit": xdigit,
        "alnum_mismatch": alnum_mismatch,
        "lower_exceptions": lower_exceptions,
        "unaccent": unaccent,
    }


def server_facts(connection: object) -> dict[str, str]:
    """Version, locale and the checksum of the server's `unaccent.rules`."""
    version = connection.execute("SHOW server_version").fetchone()[0]
    ctype, encoding = connection.execute(
        "SELECT datctype, pg_encoding_to_char(encoding) FROM pg_database "
        "WHERE datname = current_database()"
    ).fetchone()
    rules_path = Path(
        connection.execute("SELECT setting FROM pg_config WHERE name = 'SHAREDIR'").fetchone()[0]
    ) / "tsearch_data" / "unaccent.rules"
    rules_checksum = "unavailable (rules file not readable from this machine)"
    if rules_path.exists():
        rules_checksum = "sha256:" + hashlib.sha256(rules_path.read_bytes()).hexdigest()
    return {
        "version": version,
        "ctype": ctype,
        "encoding": encoding,
        "rules_path": str(rules_path),
        "rules_checksum": rules_checksum,
    }


def header(facts: dict[str, str], what: str) -> str:
    return (
        f'"""GENERATED FILE, do not edit: {what}.\n\n'
        "Generator: engine/analysis/tables/generate_pg.py (probes every Unicode scalar value\n"
        "through ts_parse/lower/unaccent on a real server; see its docstring).\n"
        f"Source: PostgreSQL {facts['version']}, database encoding {facts['encoding']}, "
        f"LC_CTYPE {facts['ctype']}\n"
        "(glibc 2.36 locale data, Unicode 14.0).\n"
        f"unaccent.rules: {facts['rules_path']} {facts['rules_checksum']}\n"
        '"""\n\n'
    )


def format_ranges(name: str, ranges: list[tuple[int, int]], comment: str) -> str:
    lines = [f"#: {comment}", f"{name}: tuple[tuple[int, int], ...] = ("]
    row: list[str] = []
    for first, last in ranges:
        row.append(f"(0x{first:04X}, 0x{last:04X}),")
        if len(row) == 4:
            lines.append("    " + " ".join(row))
            row = []
    if row:
        lines.append("    " + " ".join(row))
    lines.append(")\n")
    return "\n".join(lines)


def format_map(name: str, mapping: dict[int, str], comment: str) -> str:
    lines = [f"#: {comment}", f"{name}: dict[int, str] = {{"]
    for code_point in sorted(mapping):
        lines.append(f"    0x{code_point:04X}: {mapping[code_point]!r},")
    lines.append("}\n")
    return "\n".join(lines)


def write_modules(classified: dict[str, object], facts: dict[str, str]) -> None:
    non_ascii_digits = [c for c in classified["digit"] if c > 0x7F]
    non_ascii_xdigits = [c for c in classified["xdigit"] if c > 0x7F]
    if non_ascii_digits or non_ascii_xdigits or classified["alnum_mismatch"]:
        raise SystemExit(
            "unexpected locale: digits/hex digits beyond ASCII or alnum != alpha|digit: "
            f"{non_ascii_digits[:5]} {non_ascii_xdigits[:5]} {classified['alnum_mismatch'][:5]}"
        )
    classes = header(facts, "character classes of the PostgreSQL `default` parser")
    classes += (
        "from __future__ import annotations\n\n"
        f"PROBED_SERVER_VERSION = {facts['version']!r}\n"
        f"PROBED_LC_CTYPE = {facts['ctype']!r}\n\n"
    )
    classes += format_ranges(
        "ALPHA_RANGES", to_ranges(classified["alpha"]),
        "Code points the parser treats as letters (glibc iswalpha).",
    )
    classes += "\n" + format_ranges(
        "SPECIAL_RANGES", to_ranges(classified["special"]),
        "Non-letter, non-digit code points that continue a word but cannot start one.",
    )
    classes += "\n" + format_ranges(
        "SPACE_RANGES", to_ranges(classified["space"]), "Code points glibc iswspace accepts.",
    )
    classes += "\n" + format_map(
        "LOWERCASE_EXCEPTIONS", classified["lower_exceptions"],
        "Where PostgreSQL's lower() differs from Python's per-character str.lower().",
    )
    CLASSES_MODULE.write_text(classes, encoding="utf-8")
    unaccent = header(facts, "the unaccent() function as a per-code-point map")
    unaccent += "from __future__ import annotations\n\n"
    unaccent += format_map(
        "UNACCENT_MAP", classified["unaccent"],
        "Code point -> replacement text (may be empty: the character is deleted). "
        "Code points not listed are copied unchanged.",
    )
    UNACCENT_MODULE.write_text(unaccent, encoding="utf-8")


def main(argv: list[str]) -> int:
    import psycopg

    if len(argv) != 2:
        print("usage: python -m engine.analysis.tables.generate_pg POSTGRES_DSN", file=sys.stderr)
        return 2
    with psycopg.connect(argv[1], autocommit=True) as connection:
        connection.execute("CREATE EXTENSION IF NOT EXISTS unaccent")
        facts = server_facts(connection)
        classified = classify(probe_rows(connection, 1, MAX_CODE_POINT))
    write_modules(classified, facts)
    print(
        f"alpha ranges {len(to_ranges(classified['alpha']))}, "
        f"special code points {len(classified['special'])}, "
        f"space {len(classified['space'])}, "
        f"lower exceptions {len(classified['lower_exceptions'])}, "
        f"unaccent rules {len(classified['unaccent'])}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
