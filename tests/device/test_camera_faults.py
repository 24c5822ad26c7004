"""A camera that goes away mid-game and comes back: the same device process carries on, the outage
shows in the hub's device status while it lasts and is cleared after, and the watchdog is not fed
while no frame is processed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from mayi_table.demo import FilmSource
from mayi_table.hardware.camera import CallableSource, CameraError, Frame, ResilientCamera
from mayi_table.hardware.notify import Notifier, Watchdog
from mayi_table.runtime import Device
from mayi_table.table.hub import TableHub

from .conftest import PROFILE, DirectRun, NotifyListener, journal_events, reader, round_film

GOOD_FRAMES = 60  # the outage begins mid-round (after the buy)
FAILURES = ["raise"] * 3 + ["none"] * 2  # unplugged, then a device that gives no frame


def test_camera_outage_is_reported_and_recovered_without_a_restart(tmp_path: Path, direct_run: DirectRun) -> None:
    film = round_film()
    film_source = FilmSource(film, speed=100)
    listener = NotifyListener(tmp_path / "notify.sock")
    hub = TableHub(tmp_path / "device.sqlite3")
    hub.start_game(PROFILE, film.seats, first_dealer=film.first_dealer)
    calls = {"frames": 0, "failed": 0}
    during: dict[str, Any] = {}
    outage: list[float] = []

    def make() -> Frame | None:
        if calls["frames"] >= GOOD_FRAMES and calls["failed"] < len(FAILURES):
            kind = FAILURES[calls["failed"]]
            calls["failed"] += 1
            if calls["failed"] == 1:
                outage.append(time.monotonic())
            if calls["failed"] == len(FAILURES):
                # the main thread publishes the outage while the camera thread waits to reopen
                deadline = time.monotonic() + 5
                while hub.snapshot()["device"]["camera_ok"] is not False and time.monotonic() < deadline:
                    time.sleep(0.01)
                during.update(hub.snapshot()["device"])
            if kind == "raise":
                raise CameraError("camera unplugged")
            return None
        if calls["failed"] and len(outage) == 1:
            outage.append(time.monotonic())
        calls["frames"] += 1
        return film_source.read()

    camera = ResilientCamera(
        CallableSource(make, on_open=film_source.open), ends=True, backoff_s=0.2, max_backoff_s=0.4
    )
    notifier = Notifier(listener.path)
    device = Device(
        hub=hub,
        camera=camera,
        recognizer=film_source.oracle(),
        reader_factory=reader,
        notifier=notifier,
        watchdog=Watchdog(notifier, 0.02),
        **film_source.device_options(),
        annotate_view=False,
    )
    try:
        code = device.run()
        after = hub.snapshot()["device"]
    finally:
        hub.close()
        listener.close()
    assert code == 0
    assert calls["failed"] == len(FAILURES) and camera.status.outages == 1
    # while it lasted
    assert during["camera_ok"] is False
    assert during["camera_last_error"] in ("camera unplugged", "rendered frames gave no frame")
    assert during["camera_outage_since"]
    # and after: clear, and nothing of the game was lost
    assert after["camera_ok"] is True and not after["camera_last_error"] and after["camera_outage_since"] is None
    events, state, flags = journal_events(tmp_path / "device.sqlite3")
    assert events == direct_run.events and state == direct_run.state and flags == 0
    # no frames, no watchdog: nothing fed it from shortly after the outage began until frames came again
    assert len(outage) == 2 and outage[1] - outage[0] > 1.0
    pings = listener.with_line("WATCHDOG=1")
    assert not [t for t in pings if outage[0] + 0.5 < t < outage[1]]
    assert [t for t in pings if t > outage[1]]
    assert len(listener.with_line("READY=1")) == 1
