"""A character n-gram index over CJK runs: the fast path of the CJK substring retry.

Owns: which rows could contain a CJK needle, from the CJK characters and adjacent CJK
pairs of each row's stored text. Must not touch: the decision to retry or the LIKE rules
(`engine.query.cjk` owns both; the search stage still checks every candidate with
`substring_matches`, so this index only narrows the rows to scan and can never change an
answer), which characters are CJK (`engine.analysis.cjk_script`).

Why it is exact: a row matches a needle only if the row's text contains the needle's
characters in order, so it contains every CJK character of the needle and every pair of
adjacent CJK characters of it. LIKE folds only ASCII letters, so CJK characters compare
as they are. The grams of a row come from its whole text, including any part after a NUL
that LIKE cannot see: a superset, which the final check removes. A needle without a CJK
character gives no grams and cannot be narrowed (`candidates` returns None).

Costs:

* the scan (`cjk_grams=False`, the oracle) is O(total characters of the rows in scope)
  per retry and needs nothing else;
* this index costs O(CJK characters) of time and memory per added row once built, and
  is built lazily by the first retry after opening, which pays for it; a retry then
  costs O(r log n), r = rows holding the rarest gram, plus the same `in` check on the
  candidates only: far less than the scan, the more so the fewer rows hold that gram.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from functools import cache

from engine.analysis.cjk_script import CJK_CLASS, is_cjk_character


@cache
def cjk_run() -> re.Pattern[str]:
    """A run of characters in `analysis.cjk_script.CJK_RANGES` (the same set
    `is_cjk_character` tests), compiled on first use."""
    return re.compile(CJK_CLASS + "+")


def cjk_grams(text: str) -> Iterator[str]:
    """Every CJK character of `text` and every pair of adjacent CJK characters.

    >>> sorted(set(cjk_grams("ab会议x评审会")))
    ['会', '会议', '审', '审会', '议', '评', '评审']
    """
    for run in cjk_run().findall(text):
        yield from run
        for index in range(len(run) - 1):
            yield run[index: index + 2]


def cjk_grams_clear(text: str) -> Iterator[str]:
    """The same grams, one character at a time (the oracle of `cjk_grams`)."""
    previous = ""
    for character in text:
        if is_cjk_character(character):
            yield character
            if previous:
                yield previous + character
            previous = character
        else:
            previous = ""


class CjkGramIndex:
    """`gram -> sorted doc ids` for the CJK grams of every live row.

    Each gram keeps its rows in a compact sorted `array` (8 bytes a row) rather than a
    set (about 10 times that); rows arrive in increasing doc-id order, so adding is an
    append, and a delete is a binary search.

    >>> grams = CjkGramIndex()
    >>> grams.add(1, "明天下午三点开项目评审会议讨论排期"); grams.add(2, "会 议")
    >>> sorted(grams.candidates("会议")), sorted(grams.candidates("会"))
    ([1], [1, 2])
    >>> grams.candidates("cat") is None
    True
    """

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: dict[str, array] = {}

    def add(self, doc_id: int, text: str) -> None:
        """Record the grams of one new row (its doc id exceeds every earlier one's)."""
        for gram in set(cjk_grams(text)):
            rows = self._rows.get(gram)
            if rows is None:
                self._rows[gram] = array("q", (doc_id,))
            elif rows[-1] < doc_id:
                rows.append(doc_id)
            else:
                rows.insert(bisect_left(rows, doc_id), doc_id)

    def remove(self, doc_id: int, text: str) -> None:
        """Forget one deleted row (its text gives the grams to visit)."""
        for gram in set(cjk_grams(text)):
            rows = self._rows.get(gram)
            if rows is None:
                continue
            index = bisect_left(rows, doc_id)
            if index < len(rows) and rows[index] == doc_id:
                del rows[index]
            if not rows:
                del self._rows[gram]

    def candidates(self, needle: str) -> set[int] | None:
        """Rows that may contain `needle`, or None when the needle has no CJK grams.

        Only the part of the needle before a NUL counts, as in LIKE (C strings).
        Cost: O(r log n), r = rows of the needle's rarest gram.
        """
        grams = set(cjk_grams(needle.split("\x00", 1)[0]))
        if not grams:
            return None
        lists = sorted((self._rows.get(gram, array("q")) for gram in grams), key=len)
        found = set(lists[0])
        for rows in lists[1:]:
            found = {doc_id for doc_id in found if _contains(rows, doc_id)}
            if not found:
                break
        return found

    def __len__(self) -> int:
        return len(self._rows)


def _contains(rows: array, doc_id: int) -> bool:
    index = bisect_left(rows, doc_id)
    return index < len(rows) and rows[index] == doc_id
