"""How an oracle test decides to skip, and where it leaves the counts it reports.

Owns: the skip rule of the OpenClaw oracle (`SESSION_SEARCH_OPENCLAW=skip` skips it, but
only outside CI; with `CI=true` a failure to install or start it fails the test, as the
PostgreSQL fixture does), starting the adapter under that rule (`running_adapter`), both
backends with the same flat file imported (`imported_stores`), and the list of summary
lines printed after the run. Must not touch: installing
(`openclaw/installation.py`) or comparing (the test modules).

A plain module rather than `conftest.py`, so that the fixtures and the tests share one
copy of it (pytest imports a conftest under its own name).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from engine.rpc.client import RpcClient, RpcConnectionError
from engine.rpc.errors import RpcError
from tests.oracles.openclaw.installation import OPENCLAW_VERSION, Installation, spawn_adapter
from tests.summary_section import SummarySection

SKIP_VARIABLE = "SESSION_SEARCH_OPENCLAW"
#: The "OpenClaw oracle" section of the terminal summary (tests/oracles/conftest.py).
SUMMARY = SummarySection("OpenClaw oracle")


def running_in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


def skip_requested() -> bool:
    """`SESSION_SEARCH_OPENCLAW=skip`, which CI ignores."""
    return os.environ.get(SKIP_VARIABLE, "").strip().lower() == "skip" and not running_in_ci()


def skip_or_fail(reason: str) -> None:
    """Skip locally, fail in CI: an oracle that cannot run must never make CI green."""
    if running_in_ci():
        pytest.fail(f"CI=true but the OpenClaw oracle cannot run: {reason}", pytrace=False)
    pytest.skip(f"{reason} (set {SKIP_VARIABLE}=skip to skip it on purpose)")


def oracle_summary(config: pytest.Config) -> list[str]:
    """The lines printed in the "OpenClaw oracle" section after the run (tests add to it)."""
    return SUMMARY.lines(config)


@contextmanager
def running_adapter(installation: Installation, state: Path) -> Iterator[RpcClient]:
    """The adapter on the OpenClaw state folder `state`, checked to run `OPENCLAW_VERSION`;
    one that does not start is a skip locally and a failure in CI (`skip_or_fail`), one
    that does not exit with status 0 afterwards fails the test."""
    client: RpcClient | None = None
    try:
        client = spawn_adapter(installation, state)
        info = client.call("adapter.info")
    except (RpcConnectionError, RpcError) as error:
        if client is not None:
            client.close()
        skip_or_fail(f"the OpenClaw adapter did not start: {error}")
    assert client is not None and info["openclawVersion"] == OPENCLAW_VERSION, info
    try:
        yield client
    finally:
        status = client.close()
    assert status == 0, f"the adapter exited with status {status}"


@contextmanager
def imported_stores(folder: Path, flat_file: Path) -> Iterator[dict[str, Any]]:
    """Both backends with `flat_file` imported (`engine.ingest`) under `folder`, open
    for reading, by backend name; closed afterwards."""
    from engine.ingest.into_store import import_into_store
    from engine.store.registry import open_backend

    stores = {}
    try:
        for backend in ("reference", "sqlite"):
            import_into_store(folder / backend, backend, [flat_file])
            stores[backend] = open_backend(folder / backend)
        yield stores
    finally:
        for store in stores.values():
            store.close()
