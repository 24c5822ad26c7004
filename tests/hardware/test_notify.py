"""sd_notify client: exact datagrams on real AF_UNIX sockets, watchdog interval, frame-driven watchdog."""

from __future__ import annotations

import os
import socket
import tempfile
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from mayi_table.hardware.notify import Notifier, Watchdog, notify, socket_address, watchdog_interval


class Listener:
    """A bound SOCK_DGRAM socket standing in for systemd's notification socket."""

    def __init__(self, sock: socket.socket, env_value: str) -> None:
        self.sock = sock
        self.env_value = env_value  # what NOTIFY_SOCKET would hold

    def recv(self) -> bytes:
        return self.sock.recv(65536)

    def nothing_waiting(self) -> bool:
        self.sock.setblocking(False)
        try:
            self.sock.recv(65536)
        except BlockingIOError:
            return True
        finally:
            self.sock.setblocking(True)
        return False


@pytest.fixture
def path_listener() -> Iterator[Listener]:
    # a short folder of its own: AF_UNIX paths are limited to 107 bytes, pytest's tmp_path can be longer
    with tempfile.TemporaryDirectory(prefix="sdn-") as folder:
        path = str(Path(folder) / "notify")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        sock.settimeout(2.0)
        try:
            yield Listener(sock, path)
        finally:
            sock.close()


@pytest.fixture
def abstract_listener() -> Iterator[Listener]:
    name = f"mayi-table-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(b"\0" + name.encode())
    sock.settimeout(2.0)
    try:
        yield Listener(sock, "@" + name)
    finally:
        sock.close()


@pytest.fixture(params=["path", "abstract"])
def listener(request: pytest.FixtureRequest, path_listener: Listener, abstract_listener: Listener) -> Listener:
    return path_listener if request.param == "path" else abstract_listener


# ------------------------------------------------------------------ addresses


def test_socket_address_forms() -> None:
    assert socket_address("/run/systemd/notify") == b"/run/systemd/notify"
    assert socket_address("@foo/bar") == b"\0foo/bar"
    assert socket_address(None) is None
    assert socket_address("") is None
    assert socket_address("@") is None
    assert socket_address("vsock:2:1234") is None


def test_no_notify_socket_is_a_no_op() -> None:
    n = Notifier.from_env({})
    assert not n.enabled
    assert n.ready() is False
    assert n.watchdog() is False
    assert n.status("x") is False
    assert n.stopping() is False
    assert notify("READY=1", env={}) is False


# ------------------------------------------------------------------ exact datagrams


def test_each_notification_is_one_exact_datagram(listener: Listener) -> None:
    with Notifier.from_env({"NOTIFY_SOCKET": listener.env_value}) as n:
        assert n.enabled
        assert n.ready() is True
        assert listener.recv() == b"READY=1"
        assert n.watchdog() is True
        assert listener.recv() == b"WATCHDOG=1"
        assert n.status("watching the table: 4 seats") is True
        assert listener.recv() == b"STATUS=watching the table: 4 seats"
        assert n.stopping() is True
        assert listener.recv() == b"STOPPING=1"
    assert listener.nothing_waiting()


def test_ready_and_stopping_with_status_share_one_datagram(listener: Listener) -> None:
    with Notifier(listener.env_value) as n:
        n.ready(status="camera 1920x1080, detector ncnn")
        assert listener.recv() == b"READY=1\nSTATUS=camera 1920x1080, detector ncnn"
        n.stopping(status="bye")
        assert listener.recv() == b"STOPPING=1\nSTATUS=bye"


def test_status_stays_on_one_line_and_is_utf8(listener: Listener) -> None:
    with Notifier(listener.env_value) as n:
        n.status("seat 3: Petra\nlaid down 7♥ 8♥ 9♥")
        assert listener.recv() == "STATUS=seat 3: Petra laid down 7♥ 8♥ 9♥".encode()


def test_module_level_notify_uses_the_environment(listener: Listener, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", listener.env_value)
    assert notify("READY=1", "STATUS=up") is True
    assert listener.recv() == b"READY=1\nSTATUS=up"
    monkeypatch.delenv("NOTIFY_SOCKET")
    assert notify("READY=1") is False
    assert listener.nothing_waiting()


def test_a_missing_socket_is_reported_not_raised() -> None:
    with tempfile.TemporaryDirectory(prefix="sdn-") as folder:
        n = Notifier(str(Path(folder) / "gone"))
        assert n.enabled
        assert n.ready() is False
        n.close()


# ------------------------------------------------------------------ watchdog interval


@pytest.mark.parametrize(
    "env, expected",
    [
        ({}, None),
        ({"WATCHDOG_USEC": "30000000"}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "4242"}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "4243"}, None),
        ({"WATCHDOG_USEC": "1000"}, 0.0005),
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "-5"}, None),
        ({"WATCHDOG_USEC": "soon"}, None),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "me"}, None),
        ({"WATCHDOG_PID": "4242"}, None),
    ],
)
def test_watchdog_interval(env: dict[str, str], expected: float | None) -> None:
    assert watchdog_interval(env, pid=4242) == expected


def test_watchdog_interval_defaults_to_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "10000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert watchdog_interval() == 5.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() + 1))
    assert watchdog_interval() is None


# ------------------------------------------------------------------ frame-driven watchdog (injected clock)


class FakeClock:
    def __init__(self, t: float = 100.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_watchdog_pings_only_after_frames(path_listener: Listener) -> None:
    clock = FakeClock()
    dog = Watchdog(Notifier(path_listener.env_value), interval=15.0, clock=clock)
    assert dog.enabled
    assert dog.tick() is False  # started, no frame yet: nothing proves the camera works
    assert path_listener.nothing_waiting()

    clock.t = 101.0
    dog.frame_processed()
    assert dog.last_frame == 101.0
    assert dog.tick() is True  # first frame: ping at once
    assert path_listener.recv() == b"WATCHDOG=1"
    assert dog.last_ping == 101.0

    clock.t = 105.0
    dog.frame_processed()
    assert dog.tick() is False  # too soon after the last ping
    clock.t = 116.0
    assert dog.tick() is True  # interval passed and a frame came since the last ping
    assert path_listener.recv() == b"WATCHDOG=1"

    clock.t = 140.0
    assert dog.tick() is False  # frames stopped: no more pings, systemd will restart us
    assert dog.stalled_for() == 35.0
    assert path_listener.nothing_waiting()


def test_watchdog_with_explicit_times_and_no_frames_between_pings(path_listener: Listener) -> None:
    dog = Watchdog(Notifier(path_listener.env_value), interval=2.0, clock=FakeClock(0.0))
    dog.frame_processed(now=10.0)
    assert dog.tick(now=10.0) is True
    assert dog.tick(now=12.5) is False  # due by time, but no frame since the ping
    dog.frame_processed(now=12.6)
    assert dog.due(now=12.7)
    assert dog.tick(now=12.7) is True
    assert dog.tick(now=20.0) is False
    assert [path_listener.recv(), path_listener.recv()] == [b"WATCHDOG=1", b"WATCHDOG=1"]
    assert path_listener.nothing_waiting()


def test_watchdog_without_interval_never_pings(path_listener: Listener) -> None:
    dog = Watchdog(Notifier(path_listener.env_value), interval=None, clock=FakeClock())
    assert not dog.enabled
    dog.frame_processed()
    assert dog.tick() is False
    assert path_listener.nothing_waiting()


def test_watchdog_from_env(abstract_listener: Listener) -> None:
    env = {"NOTIFY_SOCKET": abstract_listener.env_value, "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}
    clock = FakeClock(7.0)
    dog = Watchdog.from_env(env=env, clock=clock)
    assert dog.interval == 15.0 and dog.enabled
    assert dog.stalled_for() is None
    dog.frame_processed()
    assert dog.tick() is True
    assert abstract_listener.recv() == b"WATCHDOG=1"
    dog.notifier.close()
