"""Run workloads against backends in interleaved rounds and collect the samples.

Owns: preparing one store per backend (corpus imported, untimed), walking the
interleaved schedule, and turning each workload round into samples, a skip (a missing
capability) or a failure (a wrong answer or an engine error). Must not touch:
statistics or formatting (`report`), what a workload measures (`workloads`).

A failed or skipped cell is not run again in later rounds, and never contributes a
sample: a benchmark number is only reported for answers that were checked. A cell whose
feature the engine has not built yet (`FeatureNotBuilt`) gets the status `not built`,
which the report leaves out.

Comparators (`BenchServices.comparators`, e.g. `sqlite-kernel` beside `sqlite`) join the
run when their compared backend does, named right after it: they take their turn in the
interleaved schedule like a backend, open over the compared backend's store once it is
prepared, and run only the workloads marked `comparable`; their other cells, and any
request they cannot express (`NotApplicable`), are `not applicable`, left out of the
report like `not built`.

A workload that can be paired (`PairedWorkload`, the query workloads) runs a backend's
cell and its comparator's cell of one round together, their calls alternating
(`run_paired_round`): the ratio between the two is then measured over the same seconds
instead of two neighbouring stretches of a drifting machine. The pair runs at the slot
of whichever of the two comes first in the round; the other's slot is then done. When
the pair cannot run (either side refuses or fails), each cell runs alone, so a failure
or a refusal is charged to the cell that caused it.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import __version__
from engine.bench.adapters import BenchServices, finish_indexing, remove_store
from engine.bench.corpus_generator import import_source
from engine.bench.progress import ProgressBar
from engine.bench.schedule import interleaved_schedule
from engine.bench.signals import CapabilityMissing, FeatureNotBuilt, NotApplicable
from engine.bench.workload_protocol import (
    BenchTarget,
    PairedWorkload,
    Sample,
    Workload,
    WorkloadFailed,
)
from engine.errors import EngineError

OK, SKIPPED, FAILED, NOT_BUILT, NOT_APPLICABLE = (
    "ok", "skipped", "failed", "not built", "not applicable")


@dataclass(slots=True)
class CellResult:
    """The samples of one (workload, backend) pair, or why it has none."""

    workload: str
    group: str
    query_class: str
    backend: str
    samples: list[Sample] = field(default_factory=list)
    status: str = OK
    reason: str = ""


@dataclass(slots=True)
class BenchRun:
    """Everything one benchmark run measured, in schedule order."""

    manifest: dict[str, Any]
    corpus_directory: Path
    backends: tuple[str, ...]
    rounds: int
    cells: list[CellResult]
    setup_seconds: dict[str, float]
    environment: dict[str, str]


def environment_facts() -> dict[str, str]:
    """The machine facts a reader needs to compare two reports."""
    return {
        "engine": __version__,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": str(os.cpu_count()),
    }


def _describe(error: Exception) -> str:
    """An error as a skip reason: the message alone for expected kinds (a missing
    capability, an engine error), with the type name for anything else. Preparing one
    backend may fail in any way while backends are being built; the others still run."""
    if isinstance(error, CapabilityMissing | EngineError | ImportError):
        return str(error)
    return f"{type(error).__name__}: {error}"


def _prepare_target(target: BenchTarget) -> tuple[str, float]:
    """Create the backend's store and import the corpus; return (problem, seconds)."""
    if target.store_directory.exists():
        remove_store(target.store_directory)
    target.store_directory.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    try:
        backend = target.services.open_store(
            target.backend_name, target.store_directory, True, True
        )
    except Exception as error:  # noqa: BLE001 - see _describe
        return f"cannot create a {target.backend_name} store: {_describe(error)}", 0.0
    target.backend = backend
    try:
        target.services.import_corpus(backend, target.corpus_directory)
        finish_indexing(backend)
    except Exception as error:  # noqa: BLE001 - see _describe
        return f"cannot import the corpus: {_describe(error)}", 0.0
    return "", time.perf_counter() - started


def run_benchmark(
    corpus_directory: Path,
    manifest: dict[str, Any],
    backends: tuple[str, ...],
    workloads: list[Workload],
    work_directory: Path,
    services: BenchServices,
    rounds: int = 3,
    progress: ProgressBar | None = None,
) -> BenchRun:
    """Prepare every backend (then its comparators), run the interleaved schedule, close."""
    names = with_comparators(backends, services)
    comparators = {comparator.name: comparator for comparator in services.comparators}
    targets = {
        name: BenchTarget(
            backend_name=name,
            corpus_directory=import_source(corpus_directory, manifest),
            manifest=manifest,
            store_directory=work_directory / "stores" / name,
            scratch_directory=work_directory / "scratch",
            services=services,
            comparator=comparators.get(name) if name not in backends else None,
        )
        for name in names
    }
    (work_directory / "scratch").mkdir(parents=True, exist_ok=True)
    by_name = {workload.name: workload for workload in workloads}
    cells = {
        (workload.name, name): CellResult(workload.name, workload.group, workload.query_class, name)
        for workload in workloads
        for name in names
    }
    for (workload_name, name), cell in cells.items():
        if targets[name].comparator is not None and not getattr(by_name[workload_name], "comparable", False):
            cell.status, cell.reason = NOT_APPLICABLE, f"{name} has no {workload_name}"
    setup_seconds: dict[str, float] = {}
    schedule = interleaved_schedule(list(by_name), list(names), rounds)
    if progress is not None:
        progress.total = len(names) + len(schedule)
    try:
        prepared: set[str] = set()
        for name, target in targets.items():
            if target.comparator is not None:
                compared = target.comparator.compared_backend
                problem, seconds = _open_comparator(target, targets[compared], compared in prepared)
            else:
                problem, seconds = _prepare_target(target)
            setup_seconds[name] = seconds
            if problem:
                for (_, backend_name), cell in cells.items():
                    if backend_name == name and cell.status == OK:
                        cell.status, cell.reason = SKIPPED, problem
            else:
                prepared.add(name)
            if progress is not None:
                progress.advance(f"prepared {name}")
        partners = paired_backends(targets)
        ran_paired: set[tuple[int, str, str]] = set()  # (round, workload, backend)
        for slot in schedule:
            cell = cells[(slot.workload, slot.backend)]
            workload = by_name[slot.workload]
            partner = partners.get(slot.backend)
            if (_due(cell, workload, slot.round_number)
                    and (slot.round_number, slot.workload, slot.backend) not in ran_paired):
                if (partner is not None and cells[(slot.workload, partner)].status == OK
                        and hasattr(workload, "run_paired_round")):
                    _run_pair(cell, cells[(slot.workload, partner)],
                              workload,  # type: ignore[arg-type]
                              targets[slot.backend], targets[partner])
                    ran_paired.add((slot.round_number, slot.workload, partner))
                else:
                    _run_cell(cell, workload, targets[slot.backend])
            if progress is not None:
                progress.advance(f"{slot.workload} {slot.backend}")
    finally:
        for target in targets.values():
            _close_quietly(target)
        if progress is not None:
            progress.close()
    return BenchRun(
        manifest=manifest,
        corpus_directory=corpus_directory,
        backends=names,
        rounds=rounds,
        cells=list(cells.values()),
        setup_seconds=setup_seconds,
        environment=environment_facts(),
    )


def with_comparators(backends: tuple[str, ...], services: BenchServices) -> tuple[str, ...]:
    """The backends, each followed by the comparators measured beside it.

    >>> from types import SimpleNamespace
    >>> kernel = SimpleNamespace(name="sqlite-kernel", compared_backend="sqlite")
    >>> with_comparators(("sqlite", "reference"), SimpleNamespace(comparators=(kernel,)))
    ('sqlite', 'sqlite-kernel', 'reference')
    """
    names: list[str] = []
    for name in backends:
        names.append(name)
        names.extend(comparator.name for comparator in services.comparators
                     if comparator.compared_backend == name)
    return tuple(names)


def _due(cell: CellResult, workload: Workload, round_number: int) -> bool:
    """Whether `cell` runs in round `round_number`: it has not failed or been skipped,
    and its workload runs that many rounds (`max_rounds`, when it has one)."""
    max_rounds = getattr(workload, "max_rounds", None)
    return cell.status == OK and (max_rounds is None or round_number < max_rounds)


def paired_backends(targets: dict[str, BenchTarget]) -> dict[str, str]:
    """Each backend with its comparator, both ways (the first comparator of a backend,
    when it has several).

    >>> from types import SimpleNamespace as T
    >>> kernel = T(compared_backend="sqlite")
    >>> paired_backends({"sqlite": T(comparator=None), "sqlite-kernel": T(comparator=kernel),
    ...                  "reference": T(comparator=None)})
    {'sqlite-kernel': 'sqlite', 'sqlite': 'sqlite-kernel'}
    """
    partners: dict[str, str] = {}
    for name, target in targets.items():
        compared = target.comparator.compared_backend if target.comparator is not None else None
        if compared in targets and compared not in partners:
            partners[name] = compared
            partners[compared] = name
    return partners


def _run_pair(cell: CellResult, partner_cell: CellResult, workload: PairedWorkload,
              target: BenchTarget, partner: BenchTarget) -> None:
    """Run one round of a backend's cell and its comparator's cell together (either may
    be `cell`); when the pair cannot run, each alone (see the module docstring)."""
    if target.comparator is not None:
        cell, partner_cell, target, partner = partner_cell, cell, partner, target
    try:
        ours, theirs = workload.run_paired_round(target, partner)
    except Exception:  # noqa: BLE001 - run alone, each cell records its own failure
        _run_cell(cell, workload, target)
        _run_cell(partner_cell, workload, partner)
        return
    cell.samples.extend(ours)
    partner_cell.samples.extend(theirs)


def _open_comparator(target: BenchTarget, compared: BenchTarget, ready: bool) -> tuple[str, float]:
    """Open a comparator over its compared backend's store (`ready`: it was prepared);
    (problem, seconds)."""
    assert target.comparator is not None
    if not ready:
        return f"the {compared.backend_name} store it reads was not prepared", 0.0
    target.store_directory = compared.store_directory
    try:
        target.comparator_store = target.comparator.open(compared.store_directory)
    except Exception as error:  # noqa: BLE001 - see _describe
        return f"cannot open {target.backend_name}: {_describe(error)}", 0.0
    return "", 0.0


def _close_quietly(target: BenchTarget) -> None:
    """Close a prepared store; a failure to close is reported on stderr, not raised."""
    for opened in (target.backend, target.comparator_store):
        if opened is None:
            continue
        try:
            opened.close()
        except Exception as error:  # noqa: BLE001 - the measurements are already taken
            print(f"session-search bench: closing the {target.backend_name} store failed: "
                  f"{type(error).__name__}: {error}", file=sys.stderr)
    target.backend = None
    target.comparator_store = None


def _run_cell(cell: CellResult, workload: Workload, target: BenchTarget) -> None:
    """Run one round of one cell, recording samples, a skip or a failure."""
    try:
        cell.samples.extend(workload.run_round(target))
    except FeatureNotBuilt as missing:
        cell.status, cell.reason = NOT_BUILT, str(missing)
        cell.samples.clear()
    except NotApplicable as missing:
        cell.status, cell.reason = NOT_APPLICABLE, str(missing)
        cell.samples.clear()
    except CapabilityMissing as missing:
        cell.status, cell.reason = SKIPPED, str(missing)
    except WorkloadFailed as failure:
        cell.status, cell.reason = FAILED, str(failure)
        cell.samples.clear()
    except Exception as error:  # noqa: BLE001 - one broken backend must not end the run
        # A benchmark compares backends that are still being built: an unexpected
        # exception is recorded as this cell's failure (type and message) and the other
        # cells go on. The cell is never retried and keeps no samples.
        cell.status, cell.reason = FAILED, f"{type(error).__name__}: {error}"
        cell.samples.clear()
