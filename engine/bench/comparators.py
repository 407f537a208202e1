"""What a benchmark comparator is: bare SQL measured beside a backend, on its own data.

Owns: the interfaces the runner and the workloads use for a comparator. Must not touch: any comparator's SQL (`sqlite_kernel`,
`bare_write`), timing, statistics.

A *comparator* is not a backend: it has no store of its own to prepare. It is measured
beside one backend (its `compared_backend`) so that a ratio can be stated against the
fastest way to get the same answer from the same engine:
* its query side runs bare statements on the database files the compared backend
  wrote for the benchmark (`open(store_directory)` after that store is prepared); the
  timed call is `PreparedSearch.run` (executing the statements and fetching their rows,
  nothing else); `PreparedSearch.result` turns the rows into a `SearchResult` after the
  clock stopped, so the answer is checked like a backend's;
* its ingest side writes the same corpus into a fresh database the bare way
  (`bare_import`), and reports the counts the ingest workload checks.

* its reopen side is a command line (`ComparatorStore.search_command`) that answers the
  reopen query in a fresh process the bare way; the reopen workload times it as it times
  the real `search` command.

A workload declares `comparable = True` when it knows how to run a comparator (the query,
ingest and reopen workloads); every other cell of a comparator is `not applicable` and is left
out of the report, as is a query the comparator cannot express (it raises
`engine.bench.adapters.NotApplicable`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from engine.model import SearchRequest, SearchResult


class PreparedSearch(Protocol):
    """One request, with its statements and values fixed before the clock starts."""

    def run(self) -> object:
        """Execute the statements and fetch their rows (the timed call)."""
        ...

    def result(self, rows: object) -> SearchResult:
        """The answer `run` fetched, as the backend would give it (after the clock)."""
        ...


class ComparatorStore(Protocol):
    """A comparator opened over the compared backend's prepared store."""

    def prepare_search(self, request: SearchRequest) -> PreparedSearch:
        """The prepared statements for `request` (NotApplicable when it has none)."""
        ...

    def search_command(self, request: SearchRequest, *,
                       with_libraries: bool = False) -> list[str]:
        """A command line that answers `request` in a fresh process the bare way (the
        reopen workload times it beside the real `search` command; NotApplicable when
        the comparator has none); `with_libraries`: the same after importing the
        libraries the engine is written with."""
        ...

    def close(self) -> None:
        """Close what `open` opened."""
        ...


class Comparator(Protocol):
    """Bare SQL measured beside `compared_backend` under the name `name`."""

    name: str
    compared_backend: str

    def open(self, store_directory: Path) -> ComparatorStore:
        """Open the compared backend's store at `store_directory` for bare queries."""
        ...

    def bare_import(self, corpus: Path, directory: Path) -> dict[str, int]:
        """Write `corpus` into a new database under `directory` the bare way; return the
        counts `windows`, `events` and `messages_indexed`."""
        ...
