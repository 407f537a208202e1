"""Running `python -m engine mcp ...` as an MCP client runs it: a real subprocess over
stdio, spoken to with the official SDK's own client (`stdio_client`, `ClientSession`).

Owns: `mcp_session` (the server started, initialised, and stopped by closing its input,
as a client stops it), `demo_store` (the demo corpus imported once with
`engine.import_into_store`), and `run_session` (a scenario run to its end from a plain
test function, so no async test plugin is needed).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import engine

CHECKOUT = Path(__file__).resolve().parents[2]

#: Seconds a request may wait for its answer before the client gives up (a hang fails).
READ_TIMEOUT = 120.0


@asynccontextmanager
async def mcp_session(*argv: str, stderr: Path,
                      environment: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    """`python -m engine mcp ARGV`, initialised; its standard error goes to `stderr`. The
    server stops when the block ends (the client closes its input)."""
    server = StdioServerParameters(command=sys.executable, args=["-m", "engine", "mcp", *argv],
                                   cwd=str(CHECKOUT), env=environment)
    with stderr.open("w", encoding="utf-8") as errors:
        async with (stdio_client(server, errlog=errors) as (read, write),
                    ClientSession(read, write, read_timeout_seconds=READ_TIMEOUT) as session):
            await session.initialize()
            yield session


def run_session(scenario: Callable[[], Awaitable[Any]]) -> Any:
    """Run an async scenario to its end; its result."""
    return anyio.run(scenario)


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A reference store of the demo corpus, shared by the tests that only read it."""
    store = tmp_path_factory.mktemp("mcp-demo") / "demo"
    engine.import_into_store(store, "reference", [engine.DEMO_CORPUS])
    return store
