"""Benchmark workloads, defined as data, each checking its own answer: the catalogue.

Owns: what is measured, as the list of every workload of the benchmark for one corpus in
running order (`standard_workloads`). Each family, with what a correct answer is for it,
lives in a module of its own: the contract every workload meets and the exact answer of a
search (`workload_protocol`), the query workloads (`query_workloads`), ingest and append
(`write_workloads`), reopen (`reopen_workload`), history, agent tool and palette
(`feature_workloads`), reconcile (`reconcile_workloads`). Must not touch: the order of runs
(`schedule`), statistics, printing.

| group     | workload                  | timed call                                   |
|-----------|---------------------------|----------------------------------------------|
| ingest    | `ingest/import`           | create a store + import the whole corpus     |
|           | `ingest/file_to_answer`   | new processes: `import` the corpus file, then the first `search` |
|           | `ingest/state_to_answer`  | the same from the corpus as an OpenClaw state folder (`import --openclaw-state`) |
| append    | `append/one_message`      | one message in its own durable transaction   |
| reopen    | `reopen/first_query`      | new process: open the store + first query    |
|           | (metric `command_seconds`) | new process: the whole `session-search search` |
| query     | `query/<probe>`           | `Backend.search` for one probe               |
| history   | `history/tail`, `/anchored` | a history page of the long session         |
| agent     | `agent/sessions_search_all`, `_agent` | the agent tool as `agent:main:main` under visibility `all` (every agent) and `agent` |
| ui        | `ui/search_per_keystroke` | `ui.search` for one keystroke: each prefix of a 3-word query from its 2nd character |
| reconcile | `reconcile/all_windows`   | `reconcile()` with every window dirty        |
|           | `reconcile/background`    | the first search on a writer with every window dirty, and the background run it starts, to its end (metric `first_search_seconds`: that search alone) |

A comparator (`engine.bench.comparators`, e.g. `sqlite-kernel`) runs the workloads marked
`comparable`: a query workload times its prepared statements (`PreparedSearch.run`) and
checks `PreparedSearch.result` like a backend's answer; the ingest workload times its bare
write path into a fresh database and checks the same counts; the whole-process ingest
workloads run that path in a fresh process on the same file or state folder, then the
bare search script; the reopen workload runs its bare search script in a fresh process
(`engine.bench.bare_search_script`: the sample is the script's own open and first query,
metric `script_seconds` its whole wall time, the yardstick of the `search` command's
`command_seconds`; `libraries_script_seconds` the same script after importing the
engine's libraries).

A workload a backend cannot run at all raises `FeatureNotBuilt` (`workload_protocol`).
"""

from __future__ import annotations

from typing import Any

from engine.bench.feature_workloads import AgentToolWorkload, HistoryWorkload, UiSearchWorkload
from engine.bench.process_ingest import ProcessIngestWorkload, state_ingest_workload
from engine.bench.query_workloads import query_workloads
from engine.bench.reconcile_workloads import BackgroundReconcileWorkload, ReconcileWorkload
from engine.bench.reopen_workload import ReopenWorkload
from engine.bench.workload_protocol import Workload
from engine.bench.write_workloads import AppendWorkload, IngestWorkload


def standard_workloads(manifest: dict[str, Any], query_repeats: int = 5) -> list[Workload]:
    """Every workload of the benchmark for one corpus, in running order.

    Ingest first (fresh stores), then reads of the prepared store, then the writes
    and rebuilds that change it.
    """
    workloads: list[Workload] = [IngestWorkload(), ProcessIngestWorkload(),
                                 state_ingest_workload(), ReopenWorkload()]
    workloads.extend(query_workloads(manifest, query_repeats))
    workloads.extend([
        HistoryWorkload(anchored=False), HistoryWorkload(anchored=True),
        AgentToolWorkload("all"), AgentToolWorkload("agent"), UiSearchWorkload(),
        AppendWorkload(),
        ReconcileWorkload(), BackgroundReconcileWorkload(),
    ])
    return workloads
