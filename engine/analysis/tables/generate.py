"""Generator of `unicode61_data.py`: the SQLite FTS5 `unicode61` tables, from ICU, checked
against the real SQLite 3.40.1.

Run it as `python -m engine.analysis.tables.generate` (add `--output PATH` to write elsewhere,
`--check` to regenerate in memory and compare with the committed module).

Owns: deriving the four `unicode61` tables and writing them as a Python data module.
Must not touch: tokenization at run time (the runtime imports only the data module, never
ICU). This is the only module of the `unicode61` profile that imports ICU or `sqlite3`.

How each table is derived (tokenizers.md §1, §5):

1. Categories. SQLite's `fts5_unicode2.c` holds Unicode 6.1 general categories; a code point
   missing from it (unassigned in 6.1) has category slot 0, which every `categories` option
   enables. The ICU rule: category = ICU's general category when `charAge(c) <= 6.1` and c is
   assigned, else `Cn`. Then every scalar value is probed in real FTS5 tables configured with
   `categories 'X'` (one table per category) to read the category SQLite actually uses; the
   code points where SQLite disagrees with the ICU rule are listed in the data module as
   `CATEGORY_CHANGES_FROM_ICU` (categories that changed after Unicode 6.1, and code points
   that SQLite does not classify at all).
2. Case folding (`remove_diacritics 0`). The ICU rule: `Char.foldCase(c, 0)` for BMP code points
   assigned by Unicode 6.1, Deseret U+10400..U+10427 → +40, everything else unchanged. Checked
   against FTS5 with every category enabled (so every code point is a token character):
   `"q" + c + "q"` shows the folded c.
3. Diacritic stripping (`remove_diacritics 1` and `2`), applied by SQLite to the *folded* BMP
   code point. The rule: the 25 continuation marks strip to nothing; a code point whose NFD
   (ICU `Normalizer2` NFD) is an ASCII letter plus marks that are all among the 25 strips to
   the lowercase letter (rd=1: exactly one mark; rd=2: one or more). Checked the same way as
   the folding, at rd=1 and rd=2; disagreements (the U+01E1 quirk) become exceptions listed in
   `STRIP_CHANGES_FROM_RULE`.
4. The 25 continuation marks (`sqlite3Fts5UnicodeIsdiacritic`) are a fixed list.

The generator refuses to run against any SQLite other than 3.40.1, because the tables
describe that version.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import icu

from engine.analysis.tables import unicode61_checksum

PINNED_SQLITE_VERSION = "3.40.1"
MAX_CODE_POINT = 0x10FFFF
SURROGATES = range(0xD800, 0xE000)
DESERET_UPPER = range(0x10400, 0x10428)
AGE_LIMIT = (6, 1)

#: The 25 combining marks of `sqlite3Fts5UnicodeIsdiacritic` (tokenizers.md §1.3).
CONTINUATION_MARKS = (
    0x0300, 0x0301, 0x0302, 0x0303, 0x0304, 0x0306, 0x0307, 0x0308, 0x0309, 0x030A,
    0x030B, 0x030C, 0x030F, 0x0311, 0x031B, 0x0323, 0x0324, 0x0325, 0x0326, 0x0327,
    0x0328, 0x032D, 0x032E, 0x0330, 0x0331,
)  # fmt: skip

#: ICU `UCharCategory` numbers → the two-letter names SQLite's `categories` option uses.
ICU_CATEGORY_NAMES = {
    0: "Cn", 1: "Lu", 2: "Ll", 3: "Lt", 4: "Lm", 5: "Lo", 6: "Mn", 7: "Me", 8: "Mc",
    9: "Nd", 10: "Nl", 11: "No", 12: "Zs", 13: "Zl", 14: "Zp", 15: "Cc", 16: "Cf",
    17: "Co", 18: "Cs", 19: "Pd", 20: "Ps", 21: "Pe", 22: "Pc", 23: "Po", 24: "Sm",
    25: "Sc", 26: "Sk", 27: "So", 28: "Pi", 29: "Pf",
}  # fmt: skip
ALL_CATEGORY_NAMES = tuple(sorted(ICU_CATEGORY_NAMES.values()))

#: A code point unassigned in Unicode 6.1 and still unassigned: always a token character
#: (slot 0), so it ends every category probe.
PROBE_TAIL = "\u0378"

NFD = icu.Normalizer2.getNFDInstance()


# --------------------------------------------------------------------------------------
# The ICU rules


def icu_age(code_point: int) -> tuple[int, ...]:
    """The Unicode version that assigned `code_point` ((0, 0) when unassigned)."""
    return tuple(int(part) for part in icu.Char.charAge(code_point).split("."))


def icu_category_rule(code_point: int) -> str:
    """The category the ICU rule predicts for SQLite's Unicode 6.1 table."""
    category = ICU_CATEGORY_NAMES[icu.Char.charType(code_point)]
    if category == "Cn" or icu_age(code_point) > AGE_LIMIT:
        return "Cn"
    return category


def icu_fold_rule(code_point: int) -> int:
    """The `remove_diacritics 0` fold the ICU rule predicts."""
    if code_point < 0x80:
        return code_point + 32 if 0x41 <= code_point <= 0x5A else code_point
    if code_point < 0x10000:
        if icu.Char.charType(code_point) == 0 or icu_age(code_point) > AGE_LIMIT:
            return code_point
        return icu.Char.foldCase(code_point, 0)
    if code_point in DESERET_UPPER:
        return code_point + 40
    return code_point


def nfd_strip_rule(code_point: int, complex_mode: bool) -> str | None:
    """What diacritic stripping maps a (folded) BMP code point to; None means unchanged."""
    if code_point in CONTINUATION_MARKS:
        return ""
    if code_point < 0x80 or code_point >= 0x10000 or code_point in SURROGATES:
        return None
    if icu.Char.charType(code_point) == 0 or icu_age(code_point) > AGE_LIMIT:
        return None
    decomposed = NFD.normalize(chr(code_point))
    base, marks = decomposed[0], decomposed[1:]
    if not (base.isascii() and base.isalpha()) or not marks:
        return None
    if any(ord(mark) not in CONTINUATION_MARKS for mark in marks):
        return None
    if not complex_mode and len(marks) != 1:
        return None
    return base.lower()


# --------------------------------------------------------------------------------------
# Probing the real SQLite


class SqliteProbe:
    """Token lists from a real FTS5 table, read through `fts5vocab` 'instance'."""

    def __init__(self) -> None:
        if sqlite3.sqlite_version != PINNED_SQLITE_VERSION:
            raise SystemExit(
                f"generate: SQLite {sqlite3.sqlite_version} found; the unicode61 tables "
                f"describe SQLite {PINNED_SQLITE_VERSION}, run with that version"
            )
        self.connection = sqlite3.connect(":memory:")
        self.connection.text_factory = lambda raw: raw.decode("utf-8", "surrogateescape")

    def terms_per_document(self, tokenize: str, documents: Sequence[str]) -> list[list[str]]:
        """The terms of each document in position order."""
        escaped = tokenize.replace('"', '""')
        self.connection.execute(f'CREATE VIRTUAL TABLE probe USING fts5(x, tokenize="{escaped}")')
        self.connection.execute(
            "CREATE VIRTUAL TABLE probe_vocab USING fts5vocab(probe, 'instance')"
        )
        try:
            with self.connection:
                self.connection.executemany(
                    "INSERT INTO probe(rowid, x) VALUES (?, ?)", enumerate(documents)
                )
            slots: list[dict[int, str]] = [{} for _ in documents]
            for term, document, offset in self.connection.execute(
                "SELECT term, doc, offset FROM probe_vocab"
            ):
                slots[document][offset] = term
            return [[terms[offset] for offset in sorted(terms)] for terms in slots]
        finally:
            self.connection.execute("DROP TABLE probe_vocab")
            self.connection.execute("DROP TABLE probe")

    def one_term_per_probe(
        self, tokenize: str, probes: Sequence[str], chunk_size: int = 2048
    ) -> list[str]:
        """Join probes with spaces (the tokenizer config must make space a separator) and
        return the single term each probe produces."""
        documents = [
            " ".join(probes[index : index + chunk_size])
            for index in range(0, len(probes), chunk_size)
        ]
        terms = [
            term
            for per_document in self.terms_per_document(tokenize, documents)
            for term in per_document
        ]
        if len(terms) != len(probes):
            raise SystemExit(
                f"generate: probe under {tokenize!r} gave {len(terms)} terms "
                f"for {len(probes)} probes"
            )
        return terms

    def starts_token(self, categories: str, code_points: Sequence[int]) -> list[bool]:
        """Whether each code point starts a token under `categories '<categories>'`."""
        tokenize = f"unicode61 remove_diacritics 0 categories '{categories}' separators ' '"
        probes = [chr(code_point) + PROBE_TAIL for code_point in code_points]
        return [term != PROBE_TAIL for term in self.one_term_per_probe(tokenize, probes)]

    def folds(self, remove_diacritics: int, code_points: Sequence[int]) -> list[str]:
        """What each code point becomes inside a token when every category is enabled."""
        tokenize = (
            f"unicode61 remove_diacritics {remove_diacritics} "
            "categories 'L* M* N* P* S* Z* C*' separators ' '"
        )
        probes = ["q" + chr(code_point) + "q" for code_point in code_points]
        return [term[1:-1] for term in self.one_term_per_probe(tokenize, probes)]


# --------------------------------------------------------------------------------------
# Deriving the tables


@dataclass(frozen=True, slots=True)
class Unicode61Tables:
    """The derived tables plus the record of where SQLite overrode a rule."""

    categories: list[str]  # one name per code point 0..0x10FFFF
    case_fold: dict[int, int]  # non-identity folds
    strip_simple: dict[int, str]
    strip_complex: dict[int, str]
    category_changes: list[tuple[int, str, str]]  # (code point, rule, SQLite)
    fold_changes: list[tuple[int, int, int]]  # (code point, rule, SQLite)
    strip_changes: list[tuple[int, int, str | None, str | None]]  # (rd, cp, rule, SQLite)
    explicit_cn_count: int  # code points SQLite tags Cn (slot 3) rather than slot 0


def scalar_values() -> list[int]:
    return [cp for cp in range(MAX_CODE_POINT + 1) if cp not in SURROGATES]


def derive_categories(probe: SqliteProbe) -> tuple[list[str], list[tuple[int, str, str]], int]:
    predicted = [icu_category_rule(cp) for cp in range(MAX_CODE_POINT + 1)]
    measurable = [
        cp for cp in scalar_values() if cp not in (0x00, 0x20, 0xFFFE, 0xFFFF)
    ]  # NUL is never a token character, space is the probe separator, U+FFFE/F read as U+FFFD
    # Slot 0 (not in SQLite's table): token characters even when only 'Cs' is enabled.
    in_slot_zero = dict(zip(measurable, probe.starts_token("Cs", measurable), strict=True))
    with_cn = dict(zip(measurable, probe.starts_token("Cn", measurable), strict=True))
    explicit_cn = [cp for cp in measurable if with_cn[cp] and not in_slot_zero[cp]]
    actual = list(predicted)
    unresolved: list[int] = []
    for cp in measurable:
        if in_slot_zero[cp]:
            actual[cp] = "Cn"
        elif predicted[cp] == "Cn":
            unresolved.append(cp)
    by_category: dict[str, list[int]] = {}
    for cp in measurable:
        if not in_slot_zero[cp] and predicted[cp] != "Cn":
            by_category.setdefault(predicted[cp], []).append(cp)
    for category, members in sorted(by_category.items()):
        for cp, starts in zip(members, probe.starts_token(category, members), strict=True):
            if not starts:
                unresolved.append(cp)
    for category in ALL_CATEGORY_NAMES:
        if not unresolved:
            break
        flags = probe.starts_token(category, unresolved)
        for cp, starts in zip(unresolved, flags, strict=True):
            if starts:
                actual[cp] = category
        unresolved = [cp for cp, starts in zip(unresolved, flags, strict=True) if not starts]
    if unresolved:
        raise SystemExit(f"generate: no category found for {len(unresolved)} code points")
    changes = [(cp, predicted[cp], actual[cp]) for cp in measurable if predicted[cp] != actual[cp]]
    return actual, changes, len(explicit_cn)


def derive_folds(
    probe: SqliteProbe,
) -> tuple[dict[int, int], dict[int, str], dict[int, str], list, list]:
    code_points = [cp for cp in scalar_values() if cp >= 0x80 and cp not in (0xFFFE, 0xFFFF)]
    rule_fold = {cp: icu_fold_rule(cp) for cp in range(0x80)}
    rule_fold.update({cp: icu_fold_rule(cp) for cp in code_points})
    measured_fold = dict(zip(code_points, probe.folds(0, code_points), strict=True))
    fold_changes = []
    case_fold = {cp: target for cp, target in rule_fold.items() if target != cp}
    for cp in code_points:
        measured = measured_fold[cp]
        if len(measured) != 1:
            raise SystemExit(f"generate: U+{cp:04X} folds to {measured!r} at rd=0")
        if ord(measured) != rule_fold[cp]:
            fold_changes.append((cp, rule_fold[cp], ord(measured)))
            case_fold[cp] = ord(measured)
            if ord(measured) == cp:
                del case_fold[cp]
    strip_tables: dict[int, dict[int, str]] = {}
    strip_changes = []
    bmp = [cp for cp in code_points if cp < 0x10000]
    for remove_diacritics in (1, 2):
        complex_mode = remove_diacritics == 2
        strip = {}
        for cp in range(0x10000):
            outcome = nfd_strip_rule(cp, complex_mode)
            if outcome is not None:
                strip[cp] = outcome
        rule_strip = dict(strip)
        overridden: dict[int, str] = {}
        measured = dict(zip(bmp, probe.folds(remove_diacritics, bmp), strict=True))
        for cp in bmp:
            folded = case_fold.get(cp, cp)
            if folded in overridden:
                if measured[cp] != overridden[folded]:
                    raise SystemExit(f"generate: inconsistent stripping of U+{folded:04X}")
                continue
            if measured[cp] == rule_strip.get(folded, chr(folded)):
                continue
            overridden[folded] = measured[cp]
            strip_changes.append((remove_diacritics, folded, rule_strip.get(folded), measured[cp]))
            if measured[cp] == chr(folded):
                strip.pop(folded, None)
            else:
                strip[folded] = measured[cp]
        strip_tables[remove_diacritics] = strip
    return case_fold, strip_tables[1], strip_tables[2], fold_changes, strip_changes


def derive_tables() -> Unicode61Tables:
    probe = SqliteProbe()
    categories, category_changes, explicit_cn_count = derive_categories(probe)
    case_fold, strip_simple, strip_complex, fold_changes, strip_changes = derive_folds(probe)
    return Unicode61Tables(
        categories=categories,
        case_fold=case_fold,
        strip_simple=strip_simple,
        strip_complex=strip_complex,
        category_changes=category_changes,
        fold_changes=fold_changes,
        strip_changes=strip_changes,
        explicit_cn_count=explicit_cn_count,
    )


# --------------------------------------------------------------------------------------
# Writing the module


def category_ranges(categories: Sequence[str]) -> tuple[list[int], list[str]]:
    """Run-length encode one name per code point into (starts, names).

    >>> category_ranges(["Cc", "Cc", "Lu", "Lu", "Cc"])
    ([0, 2, 4], ['Cc', 'Lu', 'Cc'])
    """
    starts: list[int] = []
    names: list[str] = []
    for code_point, name in enumerate(categories):
        if not names or names[-1] != name:
            starts.append(code_point)
            names.append(name)
    return starts, names


def change_ranges(changes: Sequence[tuple[int, str, str]]) -> list[tuple[int, int, str, str]]:
    """Merge consecutive code points with the same (rule, SQLite) pair into ranges.

    >>> change_ranges([(5, "Lu", "Lo"), (6, "Lu", "Lo"), (9, "Lu", "Lo")])
    [(5, 6, 'Lu', 'Lo'), (9, 9, 'Lu', 'Lo')]
    """
    ranges: list[tuple[int, int, str, str]] = []
    for code_point, rule, sqlite in changes:
        if ranges and ranges[-1][1] == code_point - 1 and ranges[-1][2:] == (rule, sqlite):
            ranges[-1] = (ranges[-1][0], code_point, rule, sqlite)
        else:
            ranges.append((code_point, code_point, rule, sqlite))
    return ranges


def wrapped(items: Iterable[str], indent: str = "    ", width: int = 96) -> str:
    """Lay comma-separated items out in lines of at most `width` characters."""
    lines: list[str] = []
    line = indent
    for item in items:
        piece = item + ","
        if len(line) + len(piece) + 1 > width and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += piece + " "
    if line.strip():
        lines.append(line.rstrip())
    return "\n".join(lines)


def render_module(tables: Unicode61Tables) -> str:
    starts, names = category_ranges(tables.categories)
    if any(tables.strip_complex.get(cp) != out for cp, out in tables.strip_simple.items()):
        raise SystemExit("generate: the rd=2 map does not extend the rd=1 map")
    complex_extra = {
        cp: out for cp, out in tables.strip_complex.items() if cp not in tables.strip_simple
    }
    checksum = unicode61_checksum(
        starts, names, tables.case_fold, tables.strip_simple, tables.strip_complex,
        CONTINUATION_MARKS,
    )  # fmt: skip
    category_lines = "\n".join(
        f"    (0x{first:04X}, 0x{last:04X}, {rule!r}, {sqlite!r}),"
        for first, last, rule, sqlite in change_ranges(tables.category_changes)
    )
    fold_lines = "\n".join(
        f"    (0x{cp:04X}, 0x{rule:04X}, 0x{sqlite:04X}),"
        for cp, rule, sqlite in tables.fold_changes
    )
    strip_lines = "\n".join(
        f"    ({rd}, 0x{cp:04X}, {rule!r}, {sqlite!r}),"
        for rd, cp, rule, sqlite in tables.strip_changes
    )
    return f'''"""GENERATED by `python -m engine.analysis.tables.generate`; do not edit by hand.

The SQLite 3.40.1 FTS5 `unicode61` tables (tokenizers.md §1): Unicode 6.1 general categories
as SQLite's `fts5_unicode2.c` holds them, Unicode 6.1 simple case folding (BMP + Deseret), the
diacritic-stripping maps of `remove_diacritics` 1 and 2, and the 25 continuation marks.

Built from ICU {icu.ICU_VERSION} (Unicode {icu.UNICODE_VERSION}) with PyICU {icu.VERSION}, then
checked code point by code point against the real SQLite {sqlite3.sqlite_version} (Python
`sqlite3`, FTS5 tables read through `fts5vocab`); where SQLite disagreed with the ICU rule
the SQLite result was kept and is listed below:
* {len(tables.category_changes)} code points in {len(change_ranges(tables.category_changes))} ranges whose category differs (`CATEGORY_CHANGES_FROM_ICU`);
* {len(tables.fold_changes)} fold changes (`FOLD_CHANGES_FROM_ICU`);
* {len(tables.strip_changes)} diacritic-stripping changes (`STRIP_CHANGES_FROM_RULE`);
* {tables.explicit_cn_count} code points that SQLite tags `Cn` explicitly (all other `Cn` are slot 0).

Contents: {len(starts)} category ranges, {len(tables.case_fold)} fold pairs,
{len(tables.strip_simple)} rd=1 and {len(tables.strip_complex)} rd=2 stripping entries.
Checksum (`engine.analysis.tables.unicode61_checksum`): {checksum}
"""

# fmt: off
GENERATOR = "engine.analysis.tables.generate"
ICU_VERSION = {icu.ICU_VERSION!r}
UNICODE_VERSION = {icu.UNICODE_VERSION!r}
SQLITE_VERSION = {sqlite3.sqlite_version!r}
DATA_CHECKSUM = {checksum!r}

#: `sqlite3Fts5UnicodeIsdiacritic`: continue a token, never start one.
CONTINUATION_MARKS = (
{wrapped(f"0x{cp:04X}" for cp in CONTINUATION_MARKS)}
)

#: Category of every code point from `CATEGORY_RANGE_STARTS[i]` up to the next start.
#: "Cn" means "not in SQLite's table" (slot 0), which every `categories` option enables.
CATEGORY_RANGE_STARTS = (
{wrapped(f"0x{start:X}" for start in starts)}
)
CATEGORY_RANGE_NAMES = (
{wrapped(repr(name) for name in names)}
)

#: `remove_diacritics 0` folding: code point → code point (identity pairs omitted).
CASE_FOLD = {{
{wrapped(f"0x{cp:X}: 0x{target:X}" for cp, target in sorted(tables.case_fold.items()))}
}}

#: Applied to the folded BMP code point at rd=1 / rd=2: code point → replacement ("" = drop).
DIACRITIC_STRIP_SIMPLE = {{
{wrapped(f"0x{cp:X}: {out!r}" for cp, out in sorted(tables.strip_simple.items()))}
}}
#: rd=2 uses DIACRITIC_STRIP_SIMPLE plus these entries (letters with two or more marks).
DIACRITIC_STRIP_COMPLEX_EXTRA = {{
{wrapped(f"0x{cp:X}: {out!r}" for cp, out in sorted(complex_extra.items()))}
}}

#: (first, last, ICU rule category, SQLite category). Besides real 6.1-to-now changes, SQLite
#: classifies only the first and last code point of the ranges that UnicodeData.txt
#: abbreviates (CJK, Hangul, private use): the inner ones are slot 0 ("Cn").
CATEGORY_CHANGES_FROM_ICU = (
{category_lines}
)

#: (code point, ICU rule fold, SQLite fold)
FOLD_CHANGES_FROM_ICU = (
{fold_lines}
)

#: (remove_diacritics, folded code point, NFD rule outcome, SQLite outcome); None = unchanged
STRIP_CHANGES_FROM_RULE = (
{strip_lines}
)
'''


DEFAULT_OUTPUT = Path(__file__).with_name("unicode61_data.py")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.analysis.tables.generate")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument(
        "--check", action="store_true", help="compare with the existing module instead of writing"
    )
    arguments = parser.parse_args(argv)
    text = render_module(derive_tables())
    if arguments.check:
        current = arguments.output.read_text(encoding="utf-8")
        if current != text:
            print(f"generate: {arguments.output} is out of date", file=sys.stderr)
            return 1
        print(f"generate: {arguments.output} is up to date")
        return 0
    arguments.output.write_text(text, encoding="utf-8")
    print(f"generate: wrote {arguments.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
