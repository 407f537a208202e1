"""A character n-gram index over CJK runs: the fast path of the CJK substring retry.

Owns: which rows could contain a CJK needle, from the CJK characters and adjacent CJK
pairs of each row's stored text. Must not touch: the decision to retry or the LIKE rules
(`engine.query.cjk` owns both; the kernel still checks every candidate with
`substring_matches`, so this index only narrows the rows to scan and can never change an
answer).

Why it is exact: a row matches a needle only if the row's text contains the needle's
characters in order, so it contains every CJK character of the needle and every pair of
adjacent CJK characters of it. LIKE folds only ASCII letters, so CJK characters compare
as they are. The grams of a row come from its whole text, including any part after a NUL
that LIKE cannot see: a superset, which the final check removes. A needle without a CJK
character gives no grams and cannot be narrowed (`candidates` returns None).

Costs (measured by `session-search`'s authors on 20,000 rows of 40 random CJK characters
from a 500-character set plus ASCII words, Python 3.11, one core; see the report of
issue 4):
* plain literal scan (the oracle, `engine.index.kernel` with `cjk_grams=False`):
  O(total characters of the rows in scope) per retry, about 5 ms per 20,000 short rows;
* this index: O(CJK characters) extra work per added row and about two set entries per
  CJK character of memory; a retry costs O(size of the smallest gram's row set) for the
  intersection, then the same `in` check on the candidates only.
"""

from __future__ import annotations

from collections.abc import Iterator

from engine.query.cjk import is_cjk_character


def cjk_grams(text: str) -> Iterator[str]:
    """Every CJK character of `text` and every pair of adjacent CJK characters.

    >>> sorted(set(cjk_grams("ab会议x评审会")))
    ['会', '会议', '审', '审会', '议', '评', '评审']
    """
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
    """`gram -> doc ids` for the CJK grams of every live row.

    >>> grams = CjkGramIndex()
    >>> grams.add(1, "明天下午三点开项目评审会议讨论排期"); grams.add(2, "会 议")
    >>> sorted(grams.candidates("会议")), sorted(grams.candidates("会"))
    ([1], [1, 2])
    >>> grams.candidates("cat") is None
    True
    """

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: dict[str, set[int]] = {}

    def add(self, doc_id: int, text: str) -> None:
        """Record the grams of one new row."""
        for gram in set(cjk_grams(text)):
            self._rows.setdefault(gram, set()).add(doc_id)

    def remove(self, doc_id: int, text: str) -> None:
        """Forget one deleted row (its text gives the grams to visit)."""
        for gram in set(cjk_grams(text)):
            rows = self._rows.get(gram)
            if rows is not None:
                rows.discard(doc_id)
                if not rows:
                    del self._rows[gram]

    def candidates(self, needle: str) -> set[int] | None:
        """Rows that may contain `needle`, or None when the needle has no CJK grams."""
        grams = set(cjk_grams(needle))
        if not grams:
            return None
        sets = sorted((self._rows.get(gram, set()) for gram in grams), key=len)
        found = set(sets[0])
        for rows in sets[1:]:
            found.intersection_update(rows)
            if not found:
                break
        return found

    def __len__(self) -> int:
        return len(self._rows)
