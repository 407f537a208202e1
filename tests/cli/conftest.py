"""Running `python -m engine` in a subprocess, as a user and as an unprivileged user.

Owns: the `session_search` fixture (a fresh process from the checkout's root, so the
command line is tested as users meet it: exit status, standard output, standard error),
the `unprivileged` fixture, the same with the permission bits enforced, and
`output_on_terminal`, the same with standard output on a pseudo-terminal.

Why not simply `nobody`: the tests often run as root, which ignores permission bits, so
a store made unreadable would still be read. Switching the child to `nobody` needs an
interpreter and a checkout that `nobody` may read, which a virtual environment under a
private home folder is not. Instead, for root, the child drops the capabilities that
bypass permission checks (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER) from its
bounding set before it starts the interpreter: it stays uid 0, and the permission bits
apply to it as to any owner, so a folder with mode 000 cannot be read and one with mode
555 cannot be written. Tests set modes that deny the owner too. When neither works (not
root, capabilities not droppable) the permission tests are skipped with the reason,
except under `CI=true`, where they fail instead.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]

#: prctl(2) option and the capabilities that let root ignore permission bits.
PR_CAPBSET_DROP = 24
PERMISSION_BYPASSING_CAPABILITIES = (1, 2, 3)  # DAC_OVERRIDE, DAC_READ_SEARCH, FOWNER


@dataclass(frozen=True)
class Outcome:
    """A finished command: exit status, standard output, standard error."""

    status: int
    out: str
    err: str

    def refused(self, status: int, message: str) -> None:
        """Assert exit `status` and exactly one error line `session-search: error: MESSAGE`,
        nothing on standard output, and no traceback."""
        assert "Traceback" not in self.err, self.err
        assert (self.status, self.out, self.err) == (
            status, "", f"session-search: error: {message}\n")


Runner = Callable[..., Outcome]


def _run(argv: tuple[str, ...], preexec: Callable[[], None] | None, stdin: str | None) -> Outcome:
    environment = dict(os.environ)
    environment.pop("COLUMNS", None)
    completed = subprocess.run(
        [sys.executable, "-m", "engine", *argv], cwd=CHECKOUT, input=stdin,
        capture_output=True, text=True, timeout=120, check=False, preexec_fn=preexec,
        env=environment,
    )
    return Outcome(completed.returncode, completed.stdout, completed.stderr)


def output_on_terminal(*argv: str, columns: int, environment: dict[str, str]) -> Outcome:
    """Run `python -m engine ARGV` with standard output on a pseudo-terminal `columns`
    wide (and `$COLUMNS` unset, so the terminal's own width counts); standard error is a
    pipe. `out` is what the terminal received, with its `\\r\\n` line ends made `\\n`."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    child_environment = {name: value for name, value in os.environ.items()
                         if name not in ("COLUMNS", "NO_COLOR", "FORCE_COLOR")}
    child_environment.update({"TERM": "xterm-256color", **environment})
    process = subprocess.Popen([sys.executable, "-m", "engine", *argv], cwd=CHECKOUT,
                               stdin=subprocess.DEVNULL, stdout=follower,
                               stderr=subprocess.PIPE, env=child_environment)
    os.close(follower)
    shown = read_until_closed(leader)
    err = process.stderr.read().decode("utf-8") if process.stderr else ""
    status = process.wait(timeout=120)
    return Outcome(status, shown.decode("utf-8").replace("\r\n", "\n"), err)


def read_until_closed(leader: int) -> bytes:
    """Everything a pseudo-terminal's leader end receives until the terminal closes
    (with the process on its other end); the leader is closed afterwards."""
    shown = bytearray()
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        shown.extend(chunk)
    os.close(leader)
    return bytes(shown)


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A reference store imported from the demo corpus, shared by the tests that only
    read it."""
    store = tmp_path_factory.mktemp("demo-store") / "demo"
    completed = subprocess.run(
        [sys.executable, "-m", "engine", "import", "--quiet", "--store", str(store),
         str(CHECKOUT / "engine" / "demo_corpus")],
        cwd=CHECKOUT, capture_output=True, text=True, timeout=120, check=False)
    assert (completed.returncode, completed.stderr) == (0, "")
    return store


@pytest.fixture
def session_search() -> Runner:
    """`session_search(*argv, stdin=None) -> Outcome`: one fresh `python -m engine`."""
    def run(*argv: str, stdin: str | None = None) -> Outcome:
        return _run(argv, None, stdin)

    return run


def _drop_bypassing_capabilities(libc: ctypes.CDLL) -> Callable[[], None]:
    def drop() -> None:  # runs in the child between fork and exec
        for capability in PERMISSION_BYPASSING_CAPABILITIES:
            if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")

    return drop


def _permission_bits_hold(preexec: Callable[[], None] | None, probe: Path) -> bool:
    """Whether a child started this way is refused a folder with mode 000."""
    probe.mkdir()
    probe.chmod(0)
    try:
        completed = subprocess.run(
            [sys.executable, "-c", f"import os; os.listdir({str(probe)!r})"],
            capture_output=True, timeout=60, check=False, preexec_fn=preexec)
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        probe.chmod(0o700)
    return completed.returncode != 0 and b"PermissionError" in completed.stderr


@pytest.fixture(scope="session")
def permission_preexec(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], None] | None:
    """How to start a child that the permission bits apply to (None: as it is)."""
    folder = tmp_path_factory.mktemp("permission-probe")
    if os.geteuid() != 0 and _permission_bits_hold(None, folder / "as-is"):
        return None
    reason = "running as root, and dropping CAP_DAC_OVERRIDE did not make permission bits apply"
    try:
        preexec: Callable[[], None] | None = _drop_bypassing_capabilities(
            ctypes.CDLL(None, use_errno=True))
    except OSError as error:
        preexec, reason = None, f"running as root, and libc's prctl is unavailable: {error}"
    if preexec is not None and _permission_bits_hold(preexec, folder / "dropped"):
        return preexec
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"CI=true but the permission tests cannot run: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def unprivileged(permission_preexec: Callable[[], None] | None) -> Runner:
    """`unprivileged(*argv) -> Outcome`: `python -m engine` held to permission bits."""
    def run(*argv: str, stdin: str | None = None) -> Outcome:
        return _run(argv, permission_preexec, stdin)

    return run


@pytest.fixture
def chmod() -> Iterator[Callable[[Path, int], None]]:
    """`chmod(path, mode)`, with every mode restored at the end (so tmp_path can go)."""
    changed: list[tuple[Path, int]] = []

    def change(path: Path, mode: int) -> None:
        changed.append((path, path.stat().st_mode & 0o7777))
        path.chmod(mode)

    yield change
    for path, mode in reversed(changed):
        path.chmod(mode)
