"""Benchmarks: a seeded corpus generator and a harness that times every backend alike.

Owns: synthetic transcript corpora (`vocabulary`, `text_synthesis`, `probes`,
`corpus_plan`, `window_events`, `corpus_generator`) and a real-text corpus
(`real_text`), the OpenClaw state folder made of a corpus (`state_folder`), workload
definitions (`workloads`, the catalogue, over `workload_protocol`, `query_workloads`,
`write_workloads`, `process_ingest`, `reopen_workload`, `feature_workloads` and
`reconcile_workloads`), interleaved timing rounds (`schedule`, `runner`, `progress`),
statistics (`statistics`), the report with its charts (`report`, `chart_data`, `charts`;
drawing needs matplotlib, the `bench` extra), and the comparator measured beside the SQLite
backend so that every ratio is stated against the fastest SQLite figure (`comparators`,
`sqlite_kernel`, `bare_write`: upstream's bare search statement and write path on the same
databases).
Must not touch: any search, storage or analysis algorithm, or the command line (`cli`
sits above this package). The harness reaches backends only through
`engine.store.registry.open_backend` and the `Backend` protocol, and corpora only
through `engine.ingest`, so a benchmark measures exactly the code users run; only the
comparator opens a backend's database files itself, read-only.

Reading order: `vocabulary` → `text_synthesis` → `probes` → `corpus_plan` →
`window_events` → `corpus_generator` (what a corpus is and how its expected answers are
counted while it is written) → `state_folder`, then `adapters` → `workload_protocol` → the workload
families → `workloads` → `schedule` → `runner` → `statistics` → `report` → `chart_data` →
`charts` (how it is timed and shown), and
`comparators` → `bare_write` → `sqlite_kernel` (what the SQLite figures are compared to).
The command is `session-search bench` (`engine/cli/bench_command.py`); the
pytest-benchmark files in `bench/` reuse the same generator and workloads.
"""
