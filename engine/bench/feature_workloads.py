"""The workloads of the history, agent-tool and palette features, on backends with a
transcript reader.

Owns: `HistoryWorkload` (a history page of the long session), `AgentToolWorkload` (the
`sessions_search` tool under a visibility) and `UiSearchWorkload` (the command palette's
`ui.search`, one call per keystroke, `keystrokes`). Must not touch: the features themselves
(reached only through `adapters`), the other workload families, the order of runs
(`schedule`), statistics, printing.

On a backend without a transcript reader these raise `FeatureNotBuilt` (from `adapters`),
and the report leaves their rows out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from engine.bench.adapters import agent_sessions_search, history_page, palette_ui_search
from engine.bench.workload_protocol import BenchTarget, Sample, WorkloadFailed, prepared_backend


@dataclass(frozen=True, slots=True)
class HistoryWorkload:
    """A history page of the long session: the tail, or a window around an anchor."""

    anchored: bool
    limit: int = 20
    repeats: int = 5
    group: str = "history"

    @property
    def name(self) -> str:
        return "history/anchored" if self.anchored else "history/tail"

    @property
    def query_class(self) -> str:
        return "anchored history read" if self.anchored else "tail history read"

    def run_round(self, target: BenchTarget) -> list[Sample]:
        backend = prepared_backend(target)
        long_session = target.manifest["longSession"]
        arguments: dict[str, Any] = {"session_key": long_session["sessionKey"], "limit": self.limit}
        if self.anchored:
            arguments["message_id"] = long_session["anchorMessageId"]
            arguments["session_id"] = long_session["sessionId"]
        samples = []
        for _ in range(self.repeats):
            started = time.perf_counter()
            page = history_page(backend, **arguments)
            elapsed = time.perf_counter() - started
            messages = page.messages
            if not 1 <= len(messages) <= self.limit:
                raise WorkloadFailed(f"{self.name}: expected 1..{self.limit} messages, got "
                                     f"{len(messages)}")
            samples.append(Sample(elapsed))
        return samples


@dataclass(frozen=True, slots=True)
class AgentToolWorkload:
    """`sessions_search` as `agent:main:main` under `visibility`: `all` covers every
    agent's sessions (the manifest has 200+ keys, so several kernel calls), `agent` the
    main agent's. Timed: the whole tool call (roster, row checks, kernel calls, merge,
    budgets). Checked: at least one result, never more than the limit."""

    visibility: str = "all"
    repeats: int = 3
    group: str = "agent"

    @property
    def name(self) -> str:
        return f"agent/sessions_search_{self.visibility}"

    @property
    def query_class(self) -> str:
        return f"agent tool, visibility {self.visibility}"

    def run_round(self, target: BenchTarget) -> list[Sample]:
        backend = prepared_backend(target)
        common = target.manifest["probes"]["common_word"]
        samples = []
        for _ in range(self.repeats):
            started = time.perf_counter()
            output = agent_sessions_search(backend, common["query"], 10, self.visibility)
            elapsed = time.perf_counter() - started
            results = output.get("results", [])
            if not 1 <= len(results) <= 10:
                raise WorkloadFailed(f"{self.name}: {len(results)} results for "
                                     f"{common['query']!r}, expected 1 to 10")
            samples.append(Sample(elapsed))
        return samples


def keystrokes(query: str) -> list[str]:
    """What the palette's search box holds after each keystroke, from the second character
    (the palette searches from 2 characters on).

    >>> keystrokes("ab c")
    ['ab', 'ab ', 'ab c']
    """
    return [query[:length] for length in range(2, len(query) + 1)]


@dataclass(frozen=True, slots=True)
class UiSearchWorkload:
    """`ui.search` as the command palette sends it while a person types a 3-word query
    (the first three words of the corpus's `multi_words` probe), one call per keystroke
    from the second character, every agent's sessions in scope. Timed: each call (the
    palette scope over the roster, the title matches, the transcript calls in prefix mode
    over 200-key chunks, the merge). Checked: every answer was searched; at most 25
    sessions in each group; every Messages session is a chat (no subagent run, cron job
    or incognito session); no transcript failure."""

    repeats: int = 1
    group: str = "ui"
    name: str = "ui/search_per_keystroke"
    query_class: str = "Control UI search, per keystroke"

    def query(self, manifest: dict[str, Any]) -> str:
        return " ".join(manifest["probes"]["multi_words"]["query"].split()[:3])

    def run_round(self, target: BenchTarget) -> list[Sample]:
        from engine.agent_tools.session_keys import is_incognito, kind_by_shape

        backend = prepared_backend(target)
        samples = []
        for _ in range(self.repeats):
            for typed in keystrokes(self.query(target.manifest)):
                started = time.perf_counter()
                answer = palette_ui_search(backend, typed)
                elapsed = time.perf_counter() - started
                problems = []
                if not answer["searched"] or answer.get("transcriptSearchUnavailable"):
                    problems.append("not searched, or transcript search unavailable")
                if len(answer["sessions"]) > 25 or len(answer["messages"]) > 25:
                    problems.append("more than 25 sessions in a group")
                for entry in answer["messages"]:
                    key = entry["sessionKey"]
                    if entry["kind"] != "chat" or kind_by_shape(key) or is_incognito(key):
                        problems.append(f"{key} is outside the palette's scope")
                if problems:
                    raise WorkloadFailed(f"{self.name} {typed!r}: " + "; ".join(problems))
                samples.append(Sample(elapsed, {"characters": float(len(typed))}))
        return samples
