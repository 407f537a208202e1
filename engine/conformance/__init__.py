"""The conformance oracle: the specification's cases as data, and the runner that drives
any backend through them (`session-search conform`).

Map of the package (the case format and the protocol, for readers and porters, are
`docs/conformance.md`):

* `cases/`         - the case files (JSON), grouped by area; they ship in the wheel;
* `spec_units.py`  - the parts of the specification a case may pin (behaviour.md's
                     numbered rules, the upstream tests of §12, the seed's paragraphs);
* `case_files.py`  - reading and checking case files: `Case`, `load_cases`, feature tags;
* `macros.py`      - `$repeat`, `$join`, `$generate`: long values written short;
* `plan.py`        - a case as protocol calls: set-up steps, named corpora, chaining;
* `compare.py`     - expectations (exact, paths, order modes, tolerance, errors) and diffs;
* `scratch.py`     - the scratch store and the set-up methods a backend under test answers
                     (`session-search serve` without `--store` speaks them);
* `targets.py`     - the backends a run drives: this engine in-process, or `exec:COMMAND`;
* `runner.py`      - running cases: statuses, skips, restarts, the expectations file;
* `report.py`      - the summary by spec section, readable failures, JUnit XML, JSON;
* `coverage.py`    - which case pins which part of the specification (docs' table);
* `differential.py` - generated corpora and queries, two backends compared, and the
                     metamorphic relations that need no oracle (`session-search diff`);
* `shrink.py`      - a difference shrunk (delta debugging) and written as a case file.
* `predicted.py`   - a backend's own expectations (`expectOn`) written into the case
                     files from the engine that predicts it (the reference engine's
                     postgres mode for PostgreSQL).

Import direction: `spec_units`, `macros` <- `case_files` <- `plan`, `compare` <- `scratch`
<- `targets` <- `runner` <- `report`, `coverage`; `targets`, `plan`, `compare` <-
`differential` <- `shrink`; `targets`, `runner` <- `predicted`. The package sits above
`engine.rpc` (a backend under test speaks its protocol) and below `engine.cli` (`conform`, and `serve`'s
scratch store); it imports only the front door, the wings and bottom values.
"""
