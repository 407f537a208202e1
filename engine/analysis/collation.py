"""JavaScript's `String.prototype.localeCompare`, as a sort key: the ICU root collation.

Owns: `locale_compare_key`, used wherever the specification orders strings the way the
Gateway's TypeScript does with `a.localeCompare(b)` (the merge of partition results,
behaviour.md §6 step 5). Must not touch: tokens or folding (collation orders whole
strings; it never changes what matches).

Node's `localeCompare` without a locale argument uses ICU's collator for the default
locale (`en-US` here), whose rules are the root collation's: punctuation first, then
digits, then letters, with case and accents only breaking ties (`m1 < M1 < m10 < m2`).
PyICU's root collator gives the same order (ICU 77 here, Node 24 bundles ICU 78; the
root collation did not change between them for the characters message ids use).

>>> sorted(["m10", "m2", "M1", "m1", "é", "e", "_x", "Z", "z"], key=locale_compare_key)
['_x', 'e', 'é', 'm1', 'M1', 'm10', 'm2', 'z', 'Z']
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any


@cache
def root_collator() -> Any:
    """ICU's root collator, made on first use: importing ICU costs noticeable start-up
    time, which a command that never merges partitions (a search scoped to one agent)
    should not pay."""
    import icu

    return icu.Collator.createInstance(icu.Locale.getRoot())


@lru_cache(maxsize=65_536)
def locale_compare_key(text: str) -> bytes:
    """The ICU root collation sort key of `text` (compare keys as bytes)."""
    return bytes(root_collator().getSortKey(text))
