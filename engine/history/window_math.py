"""Which rows of a view a page holds: anchored windows, offset pages, cursor pages.

Owns: the page arithmetic of behaviour.md §9.4 and §9.5 as pure functions over row
counts and indexes (`anchor_range`, `offset_range`, `older_range`, `newer_range`,
`next_offset`). Must not touch: rows, bytes or storage.

Let `T` be the rows of the view (or closed interval) and `a` the 0-based index of the
anchor there.

* **Anchored** (`messageId`, upstream `resolveHistoryAnchorPageRange`): with
  `page = max(1, limit)`, `newer = page // 2` rows after the anchor and
  `older = page - newer - 1` before it; `start = min(max(0, a - older), max(0, T -
  page))`, `end = min(T, start + page)`. So limit 5 gives `[a-2, a+2]`, limit 4
  `[a-1, a+2]`, limit 1 `[a]`, and an anchor at the tail the last 5 rows.
* **Offset** (unanchored): the page is `[T - offset - limit, T - offset)`, clamped to the
  view; `offset` 0 is the newest tail.
* **Cursors**: an `older` cursor anchored at row `a` reads the `limit` rows before it,
  `[max(0, a - limit), a)`; a `newer` cursor the `limit` rows after it, `[a + 1, min(T,
  a + 1 + limit))`. Upstream's formulas (`older`: `[max(0, a + 1 - page), a + 1)`,
  `newer`: `[a, min(T, a + page))`) read the anchor too and leave it out of the page;
  here the anchor is read to check the window and is not counted, so a page holds up to
  `limit` rows besides it and `limit` 1 still advances (it never ends early).
* **Next offset** (upstream `resolveChatHistoryNextOffset`): the offset of the page
  just older than the one returned, from the display ordinal of the oldest row returned
  (`T - oldestSeq + 1`), never less than `offset + 1`; when the byte cap split the
  oldest ordinal's rows, the page of that ordinal is read again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: The page size when a request gives no limit, and the largest one
#: (`CHAT_HISTORY_MAX_ENTRIES`).
DEFAULT_LIMIT = 200
MAX_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class PageRange:
    """Rows `[start, end)` of a view."""

    start: int
    end: int

    def __len__(self) -> int:
        return max(0, self.end - self.start)


def page_size(limit: int) -> int:
    """`max(1, limit)`: a page holds at least one row.

    >>> page_size(0), page_size(7)
    (1, 7)
    """
    return max(1, int(limit))


def anchor_range(total: int, anchor: int, limit: int) -> PageRange:
    """The anchored window around row `anchor` of `total` rows.

    >>> [anchor_range(20, 10, limit) for limit in (5, 4, 1)]
    [PageRange(start=8, end=13), PageRange(start=9, end=13), PageRange(start=10, end=11)]
    >>> anchor_range(20, 19, 5), anchor_range(20, 0, 5), anchor_range(3, 1, 200)
    (PageRange(start=15, end=20), PageRange(start=0, end=5), PageRange(start=0, end=3))
    """
    size = page_size(limit)
    older = size - size // 2 - 1
    latest_start = max(0, total - size)
    start = min(max(0, anchor - older), latest_start)
    return PageRange(start, min(total, start + size))


def offset_range(total: int, offset: int, limit: int) -> PageRange:
    """The unanchored page `offset` rows back from the newest, `limit` rows long.

    >>> offset_range(10, 0, 3), offset_range(10, 8, 3), offset_range(10, 12, 3)
    (PageRange(start=7, end=10), PageRange(start=0, end=2), PageRange(start=0, end=0))
    """
    end = max(0, total - max(0, offset))
    return PageRange(max(0, end - page_size(limit)), end)


def older_range(anchor: int, limit: int) -> PageRange:
    """The rows an `older` cursor at row `anchor` reads (the anchor left out).

    >>> older_range(10, 3), older_range(2, 3), older_range(0, 3)
    (PageRange(start=7, end=10), PageRange(start=0, end=2), PageRange(start=0, end=0))
    """
    return PageRange(max(0, anchor - page_size(limit)), max(0, anchor))


def newer_range(total: int, anchor: int, limit: int) -> PageRange:
    """The rows a `newer` cursor at row `anchor` reads (the anchor left out).

    >>> newer_range(10, 3, 3), newer_range(10, 8, 3), newer_range(10, 9, 3)
    (PageRange(start=4, end=7), PageRange(start=9, end=10), PageRange(start=10, end=10))
    """
    start = min(total, anchor + 1)
    return PageRange(start, min(total, start + page_size(limit)))


def next_offset(total: int, offset: int, returned_seqs: Sequence[int],
                read_seqs: Sequence[int], raw_page_rows: int) -> int:
    """The offset of the next older page (upstream `resolveChatHistoryNextOffset`).

    `returned_seqs` are the display ordinals of the rows returned (oldest first),
    `read_seqs` those of the rows read before the byte cap, `raw_page_rows` how many
    rows the page read.

    >>> next_offset(10, 0, [8, 9, 10], [8, 9, 10], 3)
    3
    >>> next_offset(10, 0, [], [], 0)
    0
    >>> next_offset(10, 3, [5, 5, 6], [5, 5, 5, 6], 4)  # ordinal 5 was split: read again
    5
    """
    if not returned_seqs:
        return offset + raw_page_rows
    oldest = returned_seqs[0]
    bounded_siblings = sum(1 for seq in returned_seqs if seq == oldest)
    record_offset = total - oldest + 1
    replay_offset = record_offset - 1
    if replay_offset > offset and sum(1 for seq in read_seqs if seq == oldest) > bounded_siblings:
        return replay_offset
    return max(offset + 1, record_offset)
