"""Benchmarks: a seeded corpus generator and a harness that times every backend alike.

Owns: synthetic transcript corpora (`vocabulary`, `text_synthesis`, `probes`,
`corpus_generator`), workload definitions (`workloads`), interleaved timing rounds
(`schedule`, `runner`, `progress`), statistics (`statistics`), and the report with its
charts (`report`, `charts`, `bar_chart`, `png_encoder`). Must not touch: any search,
storage or analysis algorithm. The harness reaches backends only through
`engine.backends.registry.open_backend` and the `Backend` protocol, and corpora only
through `engine.ingest`, so a benchmark measures exactly the code users run.

Reading order: `vocabulary` → `text_synthesis` → `probes` → `corpus_generator` (what a
corpus is and how its expected answers are counted while it is written), then
`workloads` → `schedule` → `runner` → `statistics` → `report` (how it is timed).
The command is `session-search bench` (`engine/cli/bench_command.py`); the
pytest-benchmark files in `bench/` reuse the same generator and workloads.
"""
