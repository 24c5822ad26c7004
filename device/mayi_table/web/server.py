"""Run the web app with uvicorn in a background thread, beside the device's main loop.

    server = WebServer(app, host="0.0.0.0", port=8000)
    server.start()          # returns once it accepts connections (or raises WebServerError)
    ...
    server.stop()

`port=0` picks a free port; `server.port` and `server.url` tell which.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn

from ..table.hub import TableHub


class WebServerError(RuntimeError):
    """The server did not start (port in use, bad address) or did not stop in time."""


class WebServer:
    def __init__(
        self,
        app: Any,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        hub: TableHub | None = None,
        log_level: str = "warning",
    ) -> None:
        self.app = app
        self.host = host
        self.requested_port = port
        self.hub = hub
        self._sock: socket.socket | None = None
        self._config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level=log_level,
            access_log=False,
            lifespan="off",
            # open event streams never finish by themselves: do not wait long for them on stop
            timeout_graceful_shutdown=2,
            ws="none",
        )
        self._server = uvicorn.Server(self._config)
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def ready(self) -> bool:
        """True while the server accepts connections."""
        return bool(self._server.started) and self._thread is not None and self._thread.is_alive()

    @property
    def port(self) -> int:
        if self._sock is not None:
            return int(self._sock.getsockname()[1])
        return self.requested_port

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def start(self, timeout: float = 10.0) -> None:
        """Start serving in a daemon thread; return once it accepts connections."""
        if self._thread is not None:
            raise WebServerError("the web server was started already")
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.requested_port))
        except OSError as e:
            sock.close()
            raise WebServerError(f"cannot serve on {self.host}:{self.requested_port}: {e.strerror or e}") from None
        sock.set_inheritable(True)
        self._sock = sock

        def run() -> None:
            try:
                self._server.run(sockets=[sock])
            except BaseException as e:  # reported to start()/stop(); a thread has nobody else to tell
                self._error = e

        self._thread = threading.Thread(target=run, name="web-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive():
                raise WebServerError(f"the web server stopped while starting: {self._error!r}")
            if time.monotonic() > deadline:
                self.stop()
                raise WebServerError(f"the web server did not start within {timeout} s")
            time.sleep(0.02)

    def stop(self, timeout: float = 10.0) -> None:
        """Close the live streams, stop accepting, and wait for the thread to end."""
        if self.hub is not None:
            self.hub.end_streams()
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                self._server.force_exit = True
                self._thread.join(timeout)
                if self._thread.is_alive():
                    raise WebServerError(f"the web server did not stop within {2 * timeout} s")
        if self._sock is not None:
            self._sock.close()

    def __enter__(self) -> WebServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
