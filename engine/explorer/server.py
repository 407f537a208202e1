"""Serving the explorer: uvicorn on a socket of this machine, until Ctrl-C.

Owns: `serve`: binding the socket (127.0.0.1 by default; port 0 takes a free one), the
line that says where the page is (printed once the socket listens, so a script may read
the address and connect at once), opening a browser on it (`--open`), and stopping: the
first Ctrl-C (SIGINT) or SIGTERM lets the requests being answered finish (a few seconds
at most) and ends with status 0; a second Ctrl-C stops at once. uvicorn's own signal
handling re-raises the signal once it has stopped, which would end the program as
interrupted; here the stop is the ordinary end of `explore`, so the signal is not
raised again. Must not touch: the application (`engine.explorer.app`) or the store
(closed by the caller).
"""

from __future__ import annotations

import signal
import socket
import threading
import time
import webbrowser
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import uvicorn

from engine import UsageError
from engine.explorer.parameters import MAX_QUERY_STRING

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
#: Seconds the requests being answered get to finish after Ctrl-C.
GRACEFUL_SECONDS = 5


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host:port` and listening; `UsageError` saying why not."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except socket.gaierror as error:
        raise UsageError(f"--host {host!r} is not an address of this machine "
                         f"({error.strerror})") from None
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(128)
    except OSError as error:
        listener.close()
        raise UsageError(f"cannot listen on {host} port {port}: {error.strerror or error} "
                         "(pick another with --port N, or --port 0 for a free one)") from None
    listener.set_inheritable(True)
    return listener


def page_address(listener: socket.socket) -> str:
    """The page's URL for a listening socket (an IPv6 host in brackets)."""
    host, port = listener.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def serve(app: object, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
          open_browser: bool = False, announce: Callable[[str], None] = print) -> None:
    """Serve `app` until Ctrl-C or SIGTERM (module docstring); `announce` is given the
    page's address once the socket listens."""
    listener = listening_socket(host, port)
    address = page_address(listener)
    config = uvicorn.Config(app, log_level="warning", access_log=False, http="h11",
                            lifespan="off", timeout_graceful_shutdown=GRACEFUL_SECONDS,
                            h11_max_incomplete_event_size=MAX_QUERY_STRING + 16 * 1024)
    server = _Server(config)
    announce(address)
    if open_browser:
        threading.Thread(target=_open_when_started, args=(server, address),
                         daemon=True).start()
    try:
        server.run(sockets=[listener])
    finally:
        listener.close()


def _open_when_started(server: uvicorn.Server, address: str) -> None:
    """Open the page in the user's browser once the server answers."""
    for _ in range(200):
        if server.started:
            webbrowser.open(address)
            return
        time.sleep(0.05)


class _Server(uvicorn.Server):
    """uvicorn's server, whose stop by a signal is the ordinary end (no re-raise)."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        originals = {number: signal.signal(number, self.handle_exit)
                     for number in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for number, handler in originals.items():
                signal.signal(number, handler)
