"""PostgreSQL's `ts_rank(vector, query, normalization)`, bit for bit: the postgres backend's
ranking, which the reference engine predicts with it.

Owns: the formula of `tsrank.c` (PostgreSQL 15) for vectors made by `to_tsvector` (every
position has weight D = 0.1) and its float4 arithmetic, the operand order it reads
(`unique_operands`, through PostgreSQL's own quicksort, `postgres_sort`), and the
normalization bits. Must not touch: tokens, queries' construction
(`engine.query.pg_tsquery` hands the operands in, in stored order), SQL.

The formula, for a vector `v` (lexeme → positions, as `engine.analysis.pg_profile` makes it)
and a query whose distinct operands are `o_1 … o_n` (sorted by bytes, duplicates dropped,
the prefix flag not compared: of two equal operands the first after the sort stays):

* when the query's top operator is `&` or `<->` and n ≥ 2 (`rank_and`): for each operand
  i, for each lexeme it matches, for each earlier operand k that matched (its LAST matched
  lexeme's positions), for each pair of positions at distance d ≠ 0:
  `w = sqrt(0.1 · 0.1 · word_distance(d))`, `res = w` first, then
  `res = 1 − (1 − res)(1 − w)`; `word_distance(d) = 1 / (1.005 + 0.05 · e^(d/1.5 − 2))`,
  `1e-30` for d > 100. A result below 0 (no pair) is `1e-20`;
* otherwise (`rank_or`): for each operand, for each lexeme it matches with positions p_1…
  p_m: `resj = Σ 0.1 / j²`, `res += (0.1 + resj − 0.1) / 1.64493406685`; then
  `res /= n`;
* normalization 1 divides by `log2(1 + length)`, length = the vector's positions counted
  (1 for a lexeme without any); 2 by the length; 8 by the lexemes; 16 by
  `log2(1 + lexemes)`; 32 maps r to r / (r + 1).

float4 is kept where C keeps it: every `float` variable is rounded to single precision
after each assignment and every float-by-float operation (`_f32`; a double result of
+, −, ×, ÷ or √ of floats, rounded to single, is the correctly rounded single result, so
doing them in doubles is exact), and the double-precision parts (`exp`, the divisions by
1.64493406685 and by a logarithm) stay double until they are stored.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Mapping, Sequence

#: The weight of every position `to_tsvector` makes (D), as the C float 0.1f.
WEIGHT_D = struct.unpack("f", struct.pack("f", 0.1))[0]
#: Normalization bits `ts_rank` honours.
NORMALIZATION_BITS = (1, 2, 8, 16, 32)
#: The postgres backend's normalization: divide by log2(1 + length) (see
#: `engine.backends.postgres`: a long message matching once ranks below a short one).
BACKEND_NORMALIZATION = 1


def _f32(value: float) -> float:
    """`value` rounded to single precision (a C `float` assignment).

    >>> _f32(0.1)
    0.10000000149011612
    """
    return struct.unpack("f", struct.pack("f", value))[0]


def word_distance(distance: int) -> float:
    """`word_distance` of tsrank.c (float4).

    >>> word_distance(1), word_distance(101)
    (0.9821447730064392, 1.0000000031710769e-30)
    """
    if distance > 100:
        return _f32(1e-30)
    return _f32(1.0 / (1.005 + 0.05 * math.exp(_f32(float(distance)) / 1.5 - 2)))


def compare_operands(first: tuple[str, bool], second: tuple[str, bool]) -> int:
    """tsCompareString of two operands' lexemes (bytes, shorter first; prefix ignored)."""
    left, right = first[0].encode("utf-8"), second[0].encode("utf-8")
    return (left > right) - (left < right)


def _med3(items: list, a: int, b: int, c: int, compare: Callable) -> int:
    if compare(items[a], items[b]) < 0:
        if compare(items[b], items[c]) < 0:
            return b
        return c if compare(items[a], items[c]) < 0 else a
    if compare(items[b], items[c]) > 0:
        return b
    return a if compare(items[a], items[c]) < 0 else c


def _swap_run(items: list, first: int, second: int, count: int) -> None:
    for offset in range(count):
        items[first + offset], items[second + offset] = items[second + offset], items[first + offset]


def postgres_sort(items: list, compare: Callable, start: int = 0, count: int | None = None) -> None:
    """Sort `items[start:start+count]` in place as PostgreSQL's `qsort_arg` does (its
    sort template: insertion sort under 7, a presorted check, then Bentley-McIlroy
    three-way quicksort with median-of-three pivots), so that equal elements end in the
    same order as on the server.

    >>> values = [5, 3, 9, 1, 7, 3, 8, 2]
    >>> postgres_sort(values, lambda a, b: (a > b) - (a < b)); values
    [1, 2, 3, 3, 5, 7, 8, 9]
    """
    a = start
    n = len(items) - start if count is None else count
    while True:
        if n < 7:
            for m in range(a + 1, a + n):
                position = m
                while position > a and compare(items[position - 1], items[position]) > 0:
                    items[position], items[position - 1] = items[position - 1], items[position]
                    position -= 1
            return
        if all(compare(items[m - 1], items[m]) <= 0 for m in range(a + 1, a + n)):
            return
        m = a + n // 2
        if n > 7:
            low, high = a, a + n - 1
            if n > 40:
                d = n // 8
                low = _med3(items, low, low + d, low + 2 * d, compare)
                m = _med3(items, m - d, m, m + d, compare)
                high = _med3(items, high - 2 * d, high - d, high, compare)
            m = _med3(items, low, m, high, compare)
        items[a], items[m] = items[m], items[a]
        pa = pb = a + 1
        pc = pd = a + n - 1
        while True:
            while pb <= pc:
                result = compare(items[pb], items[a])
                if result > 0:
                    break
                if result == 0:
                    items[pa], items[pb] = items[pb], items[pa]
                    pa += 1
                pb += 1
            while pb <= pc:
                result = compare(items[pc], items[a])
                if result < 0:
                    break
                if result == 0:
                    items[pc], items[pd] = items[pd], items[pc]
                    pd -= 1
                pc -= 1
            if pb > pc:
                break
            items[pb], items[pc] = items[pc], items[pb]
            pb += 1
            pc -= 1
        end = a + n
        d1 = min(pa - a, pb - pa)
        _swap_run(items, a, pb - d1, d1)
        d1 = min(pd - pc, end - pd - 1)
        _swap_run(items, pb, end - d1, d1)
        d1, d2 = pb - pa, pd - pc
        if d1 <= d2:
            if d1 > 1:
                postgres_sort(items, compare, a, d1)
            if d2 <= 1:
                return
            a, n = end - d2, d2
        else:
            if d2 > 1:
                postgres_sort(items, compare, end - d2, d2)
            if d1 <= 1:
                return
            n = d1


def unique_operands(stored: Sequence[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """`SortAndUniqItems`: the operands (lexeme, prefix) in stored order, sorted as the
    server sorts them, equal lexemes dropped after the first.

    >>> unique_operands([("a", True), ("a", False)]), unique_operands([("a", False), ("a", True)])
    ([('a', True)], [('a', False)])
    """
    items = list(stored)
    if len(items) < 2:
        return items
    postgres_sort(items, compare_operands)
    kept = [items[0]]
    for item in items[1:]:
        if compare_operands(item, kept[-1]) != 0:
            kept.append(item)
    return kept


def matched_lexemes(vector: Mapping[str, Sequence[int]], operand: tuple[str, bool]
                    ) -> list[str]:
    """The vector's lexemes an operand matches, in the vector's (byte) order."""
    lexeme, prefix = operand
    if not prefix:
        return [lexeme] if lexeme in vector else []
    encoded = lexeme.encode("utf-8")
    return sorted((word for word in vector if word.encode("utf-8").startswith(encoded)),
                  key=lambda word: word.encode("utf-8"))


def rank_or(vector: Mapping[str, Sequence[int]], operands: Sequence[tuple[str, bool]]) -> float:
    """`calc_rank_or` over the unique operands."""
    result = 0.0
    for operand in operands:
        for lexeme in matched_lexemes(vector, operand):
            partial = 0.0
            for index in range(len(vector[lexeme]) or 1):
                partial = _f32(partial + _f32(WEIGHT_D / float((index + 1) * (index + 1))))
            inner = _f32(_f32(WEIGHT_D + partial) - WEIGHT_D)
            result = _f32(result + inner / 1.64493406685)
    if operands:
        result = _f32(result / float(len(operands)))
    return result


def rank_and(vector: Mapping[str, Sequence[int]], operands: Sequence[tuple[str, bool]]) -> float:
    """`calc_rank_and` over the unique operands (at least two)."""
    result = -1.0
    last_positions: list[Sequence[int] | None] = [None] * len(operands)
    for index, operand in enumerate(operands):
        for lexeme in matched_lexemes(vector, operand):
            positions = vector[lexeme]
            last_positions[index] = positions
            for earlier in last_positions[:index]:
                if earlier is None:
                    continue
                for position in positions:
                    for other in earlier:
                        distance = abs(position - other)
                        if not distance:
                            continue
                        weight = _f32(math.sqrt(_f32(_f32(WEIGHT_D * WEIGHT_D)
                                                     * word_distance(distance))))
                        result = weight if result < 0 else _f32(
                            1.0 - (1.0 - result) * (1.0 - weight))
    return result


def ts_rank(vector: Mapping[str, Sequence[int]], stored: Sequence[tuple[str, bool]],
            top_is_and: bool, normalization: int = 0) -> float:
    """`ts_rank(vector, query, normalization)`: `stored` is the query's operands in the
    server's stored order (`engine.query.pg_tsquery.stored_operands`), `top_is_and`
    whether its top operator is `&` or `<->`.

    >>> ts_rank({"a": [1, 4], "b": [2], "c": [3]}, [("a", False)], False)
    0.07599088549613953
    >>> ts_rank({"a": [1, 4], "b": [2], "c": [3]}, [("a", False)], False, 1)
    0.03272749483585358
    """
    if not vector or not stored:
        return 0.0
    operands = unique_operands(stored)
    if top_is_and and len(operands) >= 2:
        result = rank_and(vector, operands)
    else:
        result = rank_or(vector, operands)
    if result < 0:
        result = _f32(1e-20)
    length = sum(len(positions) or 1 for positions in vector.values())
    if normalization & 1:
        result = _f32(result / (math.log(float(length + 1)) / math.log(2.0)))
    if normalization & 2 and length > 0:
        result = _f32(result / _f32(float(length)))
    if normalization & 8:
        result = _f32(result / _f32(float(len(vector))))
    if normalization & 16:
        result = _f32(result / (math.log(float(len(vector) + 1)) / math.log(2.0)))
    if normalization & 32:
        result = _f32(result / _f32(result + 1.0))
    return result
