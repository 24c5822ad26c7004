"""A small sd_notify client: tells systemd the service is ready, alive, busy or stopping.

systemd runs the service with ``Type=notify`` (``systemd/mayi-table.service``) and passes the address of
its notification socket in ``NOTIFY_SOCKET``: a file system path (``/run/systemd/notify``) or, with a
leading ``@``, a name in Linux's abstract socket namespace. Each notification is one datagram of
newline-separated ``KEY=VALUE`` lines, e.g. ``READY=1`` or ``READY=1\\nSTATUS=watching the table``.
Without ``NOTIFY_SOCKET`` (run by hand, in tests) every call is a no-op that returns ``False``.

With ``WatchdogSec=`` set, systemd also passes ``WATCHDOG_USEC`` (the timeout) and ``WATCHDOG_PID`` (the
process meant to ping); :func:`watchdog_interval` turns them into how often to ping (half the
timeout, as sd_watchdog_enabled(3) advises). :class:`Watchdog` pings only while camera frames are
really being processed, so a stuck camera or detector stops the pings and systemd restarts the service.

No third-party dependency, nothing but the standard library.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from typing import Callable, Mapping

log = logging.getLogger(__name__)

READY = "READY=1"
WATCHDOG = "WATCHDOG=1"
STOPPING = "STOPPING=1"
RELOADING = "RELOADING=1"


def socket_address(value: str | None) -> bytes | None:
    """The ``NOTIFY_SOCKET`` value as an AF_UNIX address, or None when notifications are off.

    ``/path`` is a socket file; ``@name`` is ``name`` in the abstract namespace (a leading NUL byte).
    Anything else (unset, empty, a ``vsock:`` address) turns notifications off.
    """
    if not value:
        return None
    if value.startswith("@"):
        if len(value) < 2:
            return None
        return b"\0" + os.fsencode(value[1:])
    if value.startswith("/"):
        return os.fsencode(value)
    log.warning("NOTIFY_SOCKET=%r is not a path or an abstract socket name: notifications are off", value)
    return None


def _line(key: str, value: str) -> str:
    # one notification is newline-separated KEY=VALUE lines, so a value must stay on one line
    return f"{key}={' '.join(value.splitlines())}"


class Notifier:
    """Sends notifications to one systemd notification socket (or nowhere)."""

    def __init__(self, address: str | None) -> None:
        self.address = socket_address(address)
        self._sock: socket.socket | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Notifier:
        """A notifier for ``NOTIFY_SOCKET`` in ``env`` (default: this process's environment)."""
        environ = os.environ if env is None else env
        return cls(environ.get("NOTIFY_SOCKET"))

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def send(self, *fields: str) -> bool:
        """Send ``fields`` (``KEY=VALUE`` strings) as one datagram. True when it was sent.

        A failure is logged and reported as False, never raised: losing a notification must not take
        the referee down (a missed watchdog ping is what systemd watches for anyway).
        """
        if self.address is None or not fields:
            return False
        message = "\n".join(fields).encode("utf-8")
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._sock.sendto(message, self.address)
        except OSError as exc:
            log.warning("cannot notify systemd (%s): %s", fields[0], exc)
            self.close()
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        """``READY=1``: start-up is over (camera, detector and web server are running)."""
        return self.send(READY) if status is None else self.send(READY, _line("STATUS", status))

    def watchdog(self) -> bool:
        """``WATCHDOG=1``: still alive. Prefer :class:`Watchdog`, which pings only while frames flow."""
        return self.send(WATCHDOG)

    def status(self, text: str) -> bool:
        """``STATUS=...``: one line shown by ``systemctl status mayi-table``."""
        return self.send(_line("STATUS", text))

    def stopping(self, status: str | None = None) -> bool:
        """``STOPPING=1``: shutting down on purpose."""
        return self.send(STOPPING) if status is None else self.send(STOPPING, _line("STATUS", status))

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> Notifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def notify(*fields: str, env: Mapping[str, str] | None = None) -> bool:
    """Send one notification to ``NOTIFY_SOCKET`` (from ``env``); False, doing nothing, when unset."""
    with Notifier.from_env(env) as notifier:
        return notifier.send(*fields)


def watchdog_interval(env: Mapping[str, str] | None = None, pid: int | None = None) -> float | None:
    """Seconds between watchdog pings: half of ``WATCHDOG_USEC``, or None when there is no watchdog.

    None as well when ``WATCHDOG_USEC`` is not a positive whole number, or when ``WATCHDOG_PID`` is set
    and names another process (``pid``, default this one: the watchdog is meant for that process).
    """
    environ = os.environ if env is None else env
    usec_text = environ.get("WATCHDOG_USEC")
    if not usec_text:
        return None
    try:
        usec = int(usec_text)
    except ValueError:
        return None
    if usec <= 0:
        return None
    pid_text = environ.get("WATCHDOG_PID")
    if pid_text:
        try:
            owner = int(pid_text)
        except ValueError:
            return None
        if owner != (os.getpid() if pid is None else pid):
            return None
    return usec / 2_000_000


class Watchdog:
    """Pings ``WATCHDOG=1`` only while frames are being processed.

    The main loop calls :meth:`frame_processed` after each camera frame has gone through the detector
    and :meth:`tick` whenever it likes (every loop turn). :meth:`tick` pings when a frame was processed
    since the previous ping and at least ``interval`` seconds have passed since it, so pings stay rare
    and stop by themselves when the camera or the detector hangs. ``interval`` None (no watchdog
    configured) makes both methods cheap no-ops for the ping. ``clock`` is injectable for tests.
    """

    def __init__(
        self,
        notifier: Notifier,
        interval: float | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.notifier = notifier
        self.interval = interval
        self.clock = clock
        self.last_frame: float | None = None  # clock time of the last processed frame
        self.last_ping: float | None = None  # clock time of the last ping sent
        self._frame_since_ping = False

    @classmethod
    def from_env(
        cls,
        notifier: Notifier | None = None,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> Watchdog:
        """A watchdog for this process's ``NOTIFY_SOCKET``/``WATCHDOG_USEC``/``WATCHDOG_PID``."""
        return cls(notifier or Notifier.from_env(env), watchdog_interval(env), clock)

    @property
    def enabled(self) -> bool:
        return self.interval is not None and self.notifier.enabled

    def frame_processed(self, now: float | None = None) -> None:
        """Record that one frame has been fully processed (at ``now``, default the clock)."""
        self.last_frame = self.clock() if now is None else now
        self._frame_since_ping = True

    def due(self, now: float | None = None) -> bool:
        """Whether :meth:`tick` at ``now`` would ping."""
        if self.interval is None or not self._frame_since_ping:
            return False
        if self.last_ping is None:
            return True
        t = self.clock() if now is None else now
        return t - self.last_ping >= self.interval

    def tick(self, now: float | None = None) -> bool:
        """Ping if due (see the class docstring). True when a ping was sent."""
        t = self.clock() if now is None else now
        if not self.due(t):
            return False
        self._frame_since_ping = False
        self.last_ping = t
        return self.notifier.watchdog()

    def stalled_for(self, now: float | None = None) -> float | None:
        """Seconds since the last processed frame (None before the first)."""
        if self.last_frame is None:
            return None
        return (self.clock() if now is None else now) - self.last_frame
