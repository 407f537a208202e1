"""`postings_file._packed` of an unsigned array (a write buffer's column: its typecode
found by `max` for a short one, from its bytes for a long one) is `_packed` of the same
values as a list (the clear path: an array of `smallest_typecode` of the largest), for
every length on both sides of `_SHORT_COLUMN` and values around each typecode's limit."""

from __future__ import annotations

import random
from array import array

import pytest

from engine.codec.postings_file import _SHORT_COLUMN, _column_bytes, _packed

#: Values around each typecode's limits.
EDGES = (0, 1, 255, 256, 65_535, 65_536, 2**32 - 1, 2**32, 2**64 - 1)


@pytest.mark.parametrize("typecode", ["I", "Q"])
def test_an_array_packs_as_its_list(typecode: str) -> None:
    generator = random.Random(33)
    limit = 2**32 if typecode == "I" else 2**64
    edges = [edge for edge in EDGES if edge < limit]
    for length in [*range(_SHORT_COLUMN + 3), 2 * _SHORT_COLUMN, 200]:
        for top in edges:
            values = [generator.randint(0, top) for _ in range(length)]
            if values:
                values[generator.randrange(length)] = top
            column = array(typecode, values)
            assert _packed(column) == _packed(values)
            assert _column_bytes(column) == _column_bytes(values)
