"""Start the studio: bind the address (loopback unless the author allows remote access), make this start's
secrets, print the link that holds the token, open it in the browser and serve until Ctrl-C."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from ..errors import InputError
from ._app import create_app
from ._security import Secrets


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or the name localhost."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Started:
    """Where the studio listens and the link that opens it (with this start's token)."""

    host: str
    port: int
    url: str
    remote: bool


def bind(host: str, port: int, *, allow_remote: bool) -> socket.socket:
    """A listening socket on host:port (port 0: a free one). A non-loopback host needs `allow_remote`."""
    if not is_loopback(host) and not allow_remote:
        raise InputError(
            "STUDIO_REMOTE",
            f"--host {host} is not a loopback address: anyone who can reach it could read the book",
            "command line",
            "keep the default 127.0.0.1, or add --allow-remote if you really mean it",
        )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InputError(
            "STUDIO_BIND",
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            "command line",
            "choose another --port (or leave it out: a free port is picked)",
        ) from None
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def serve(
    root: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    open_browser: bool = True,
    allow_remote: bool = False,
    on_start: Callable[[Started], None] = lambda s: None,
) -> None:
    """Serve the book at `root` until interrupted; `on_start` hears where (before the browser is opened)."""
    sock = bind(host, port, allow_remote=allow_remote)
    bound = sock.getsockname()[1]
    keys = Secrets()
    shown = f"[{host}]" if ":" in host else host
    started = Started(host, bound, f"http://{shown}:{bound}/?token={keys.token}", not is_loopback(host))
    config = uvicorn.Config(
        create_app(root, keys, host=host, port=bound),
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)

    def announce() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.02)
        if server.started:
            on_start(started)
            if open_browser:
                webbrowser.open(started.url)

    threading.Thread(target=announce, daemon=True).start()
    server.run(sockets=[sock])
