"""Where the MCP server's store comes from, kept in step with its source before each call.

Owns: opening the store the server answers from, and, over a live OpenClaw state
folder, bringing it up to date before every tool call. Must not touch: what a live
import does (`engine.ingest.live_import_into_store`, the same import as `import
--openclaw-state` and `watch`), what a store is, or the tools.

Two sources, one protocol (`StoreSource`):

* `StoreFolder` (`mcp --store DIR`): the store is opened once, as a reader; the tools
  refresh a reader that sees a snapshot before they read, so what a writer (`import`,
  `watch`) commits meanwhile is answered.
* `LiveState` (`mcp --openclaw-state PATH [--store DIR]`): the state is imported, as
  `import --openclaw-state` does, into DIR (kept between runs, so a restart imports only
  what is new) or into a private temporary store removed when the server stops. Before
  each call the live import runs again: a line appended to a transcript, a new session
  file, new events of an agent's `openclaw-agent.sqlite` are in the answer to the next
  call. With the marks the import keeps, a pass that finds nothing new costs one `stat`
  and one read of the last consumed line per file (milliseconds for a state of a few
  hundred sessions), so a refresh per call is cheaper than an interval's stale answers
  and a thread. A pass that fails for a reason the next pass may not have (a malformed
  line a writer is still fixing, the store locked by a `watch` into the same DIR) is a
  warning line on standard error, once per message, and the call is answered from what
  the store holds; a state folder or store folder that cannot be used is the call's
  error. The first import must succeed unless DIR already holds a store.

A source is used by one thread at a time (the server runs every call in its one worker
thread, which also opens and closes the source: a SQLite store's connections belong to
the thread that opened them).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from engine import SearchBackend
from engine.errors import InputError, MalformedInput, StoreLocked, StorePathError, UsageError
from engine.ingest import live_import_into_store
from engine.ingest.live_state import NOT_A_STATE, is_live_state
from engine.store.registry import open_store

Warn = Callable[[str], None]

#: The name commands give the store in their messages.
COMMAND = "mcp"


class StoreSource(Protocol):
    """The store the server answers from, and what it is, for people (`description`)."""

    description: str

    def current_store(self) -> SearchBackend:
        """The store, brought up to date with its source."""
        ...

    def close(self) -> None:
        """Close the store (and remove what the source made for itself)."""
        ...


class StoreFolder:
    """A store folder, opened once as a reader (`mcp --store DIR`)."""

    def __init__(self, path: Path, warn: Warn) -> None:
        self.path = path
        self.description = f"store {path}"
        self._store = open_store(path, COMMAND, warn=warn)

    def current_store(self) -> SearchBackend:
        return self._store  # each tool refreshes a snapshot reader before it reads

    def close(self) -> None:
        self._store.close()


class LiveState:
    """An OpenClaw state folder, imported into a store before every call
    (`mcp --openclaw-state PATH [--store DIR]`)."""

    def __init__(self, state: Path, store_path: Path | None, warn: Warn) -> None:
        if not is_live_state(state):
            raise MalformedInput(str(state), None, NOT_A_STATE)
        self.state = state
        self._warn = warn
        self._shown: set[str] = set()
        self._temporary: Path | None = None
        if store_path is None:
            self._temporary = Path(tempfile.mkdtemp(prefix="session-search-mcp-"))
            store_path = self._temporary / "store"
        self.store_path = store_path
        self.description = (f"OpenClaw state {state}, imported before each call into "
                             + ("a temporary store" if self._temporary else f"{store_path}"))
        try:
            self._import(first=True)
            self._store = open_store(store_path, COMMAND, warn=self._warn_once)
        except BaseException:
            self._remove_temporary()
            raise

    def current_store(self) -> SearchBackend:
        self._import(first=False)
        return self._store  # the tools refresh their reader, so they see this import

    def close(self) -> None:
        try:
            self._store.close()
        finally:
            self._remove_temporary()

    def _import(self, *, first: bool) -> None:
        """One live import; a failure the next pass may not have is a warning unless
        there is no store yet to answer from."""
        try:
            outcome = live_import_into_store(self.store_path, None, self.state,
                                             warn=self._warn_once)
        except (StorePathError, UsageError):
            raise
        except (InputError, StoreLocked) as error:
            if first and not holds_files(self.store_path):
                raise
            self._warn_once(f"{error} (the answer is from the last import; the next call "
                            "imports again)")
            return
        for note in outcome.imported.notes:
            self._warn_once(note)

    def _warn_once(self, message: str) -> None:
        if message not in self._shown:
            self._shown.add(message)
            self._warn(message)

    def _remove_temporary(self) -> None:
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = None


def holds_files(path: Path) -> bool:
    """Whether `path` is a folder with something in it (a store an earlier run made).

    >>> holds_files(Path("/no/such/folder"))
    False
    """
    return path.is_dir() and any(path.iterdir())
