"""Why each hit stands above the next: the tie-break chain of a search's answer.

Owns: `tie_breaks`, which names, for each pair of adjacent hits, the criterion that put
the first above the second, and the criteria it read them from, in the order they are
tried: the store's merge of partition answers (`engine.search.merge`: score descending,
timestamp descending, messageId in `localeCompare` order; a recent search: timestamp
only); and `ordered_pairs`, the same report for any key function (a view of the agent
tool's answer passes the tool's own key). Must not touch: any order (the keys compared
are the stages' own key functions; this only reports which component of the key
decided), or which hits there are.

A pair equal on every component is reported as `tied`: the sort is stable, so such hits
keep the order their partitions gave (agents in order, each in its kernel order, whose
last keys are the session id and the row's insertion order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engine.model import SearchHit
from engine.search.merge import merge_order_key, recent_order_key

#: The components of each order's key, named as a reader reads them.
RELEVANCE_CRITERIA = ("score (higher first)", "timestamp (newer first)",
                      "messageId (localeCompare)")
RECENT_CRITERIA = ("timestamp (newer first)",)
#: What a pair equal on every component says.
TIED = "tied on every key: kept in the order the partitions answered (stable sort)"


def tie_breaks(hits: Sequence[SearchHit], order: str) -> list[dict[str, Any]]:
    """For each adjacent pair of a store search's hits, the criterion that ordered it.

    >>> def hit(message_id, score, timestamp):
    ...     return SearchHit("agent:main:k", "w", message_id, "user", timestamp, "", score)
    >>> hits = [hit("b", 2.0, 1), hit("a", 1.0, 5), hit("c", 1.0, 3), hit("d", 1.0, 3)]
    >>> [pair["decidedBy"] for pair in tie_breaks(hits, "relevance")]
    ['score (higher first)', 'timestamp (newer first)', 'messageId (localeCompare)']
    >>> [pair["decidedBy"] for pair in tie_breaks(hits[2:], "recent")]
    ['tied on every key: kept in the order the partitions answered (stable sort)']
    """
    if order == "recent":
        return ordered_pairs(hits, lambda hit: (recent_order_key(hit),), RECENT_CRITERIA,
                      lambda hit: (hit.timestamp,))
    return ordered_pairs(hits, merge_order_key, RELEVANCE_CRITERIA,
                  lambda hit: (hit.score, hit.timestamp, hit.message_id))


def ordered_pairs(hits: Sequence[Any], key: Callable[[Any], tuple], criteria: tuple[str, ...],
           shown: Callable[[Any], tuple]) -> list[dict[str, Any]]:
    """Each adjacent pair of `hits`: the first component of `key` that differs (named by
    `criteria`), and the two values of it (`shown`: the readable values of each component).

    >>> ordered_pairs([3, 1], lambda n: (-n,), ("size (larger first)",), lambda n: (n,))
    [{'upper': 0, 'lower': 1, 'criteria': ['size (larger first)'], 'decidedBy': 'size (larger first)', 'values': [3, 1], 'tiedOn': []}]
    """
    pairs = []
    for number in range(len(hits) - 1):
        upper, lower = hits[number], hits[number + 1]
        upper_key, lower_key = key(upper), key(lower)
        decided = next((index for index, (a, b) in enumerate(zip(upper_key, lower_key))
                        if a != b), None)
        entry: dict[str, Any] = {"upper": number, "lower": number + 1, "criteria": list(criteria)}
        if decided is None:
            entry["decidedBy"] = TIED
        else:
            entry["decidedBy"] = criteria[decided]
            entry["values"] = [shown(upper)[decided], shown(lower)[decided]]
            entry["tiedOn"] = list(criteria[:decided])
        pairs.append(entry)
    return pairs
