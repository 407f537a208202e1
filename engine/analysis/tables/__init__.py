"""Generated character tables for the text-analysis profiles, and their checksum rule.

Owns: the canonical byte form of the `unicode61` tables and the checksum computed over it,
shared by the generator (which writes the checksum into the data module) and the tests
(which recompute it). Must not touch: ICU (only `generate.py` imports it) or any
tokenization rule (those live in `engine/analysis/unicode61.py` and its `unicode61_*.py`
siblings).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence


def unicode61_checksum(
    category_range_starts: Sequence[int],
    category_range_names: Sequence[str],
    case_fold: Mapping[int, int],
    strip_simple: Mapping[int, str],
    strip_complex: Mapping[int, str],
    continuation_marks: Sequence[int],
) -> str:
    """The SHA-256 of the tables in a canonical JSON form, as `sha256:<hex>`.

    Dictionaries are serialised as key-sorted `[key, value]` pairs, so the checksum does not
    depend on insertion order.

    >>> unicode61_checksum([0], ["Cn"], {}, {}, {}, [])[:7]
    'sha256:'
    >>> unicode61_checksum([0], ["Cn"], {65: 97}, {}, {}, []) == unicode61_checksum(
    ...     [0], ["Cn"], {65: 97}, {}, {}, [])
    True
    """
    payload = [
        list(category_range_starts),
        list(category_range_names),
        sorted(case_fold.items()),
        sorted(strip_simple.items()),
        sorted(strip_complex.items()),
        list(continuation_marks),
    ]
    import hashlib  # here: searching imports this package for its tables, not the checksum

    encoded = json.dumps(payload, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    return "sha256:" + hashlib.sha256(encoded).hexdigest()
