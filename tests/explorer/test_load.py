"""A load check: 1,000 requests to the JSON endpoints from a local client, in a bounded
loop, every one answered, and the server's memory flat.

The memory is the server process's resident set (`VmRSS` of `/proc/PID/status`), read
after a warm-up of 200 requests (every endpoint's code loaded, caches filled, the Compare
copy made) and again after the 1,000: it may grow by at most `RSS_GROWTH_BYTES`, far
below what a leak of one answer per request would add. No timing is measured.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from tests.explorer.client import Explorer

REQUESTS = 1000
WARM_UP = 200
#: The most the resident set may grow across the 1,000 requests (a leak of even 10 KiB a
#: request would add 10 MB).
RSS_GROWTH_BYTES = 6 * 1024 * 1024

#: The requests cycled through: every endpoint, with varied parameters.
MIX = [
    ("/api/hits", {"q": "cafe"}),
    ("/api/hits", {"q": "per session communi", "match": "prefix", "limit": 5}),
    ("/api/hits", {"q": "namespace", "requester": "agent:main:main"}),
    ("/api/why", {"q": "cafe", "hit": 1}),
    ("/api/why", {"q": "会议"}),
    ("/api/analysis", {"text": "Café 会议讨论 don't per-session"}),
    ("/api/query", {"q": "per-session OR - 会议"}),
    ("/api/history", {"sessionKey": "agent:main:logical-reset", "messageId": "reset-m3"}),
    ("/api/index/postings", {"term": "communication"}),
    ("/api/index/message", {"sessionId": "ui-search", "messageId": "cafe-communication"}),
    ("/api/index/facts", {}),
    ("/api/compare", {"q": "cafe"}),
    ("/api/case", {"q": "cafe"}),
    ("/api/hits", {"q": ""}),  # a refusal is an answer too (400), and must not leak
]


def resident_bytes(pid: int) -> int:
    """The resident set of process `pid`, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def test_a_thousand_requests_and_flat_memory(explorer: Explorer) -> None:
    requests = itertools.cycle(MIX)
    for path, params in itertools.islice(requests, WARM_UP):
        assert explorer.get(path, params).status in (200, 400)
    before = resident_bytes(explorer.pid)
    statuses: dict[int, int] = {}
    for path, params in itertools.islice(requests, REQUESTS):
        status = explorer.get(path, params).status
        statuses[status] = statuses.get(status, 0) + 1
        expected = 400 if params == {"q": ""} else 200
        assert status == expected, (path, params, status)
    after = resident_bytes(explorer.pid)
    assert sum(statuses.values()) == REQUESTS and explorer.alive()
    assert after - before <= RSS_GROWTH_BYTES, (before, after)
