"""Camera sources read real files; ResilientCamera rides out a camera that vanishes and returns."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from mayi_table.config import FolderCamera, OpenCVCamera, Picamera2Camera, RenderedCamera
from mayi_table.hardware.camera import (
    CallableSource,
    CameraError,
    CameraStatus,
    FolderSource,
    Frame,
    OpenCVSource,
    Picamera2Source,
    ResilientCamera,
    as_bgr,
    camera_from_config,
    open_source,
)


class FakeClock:
    """A monotonic clock that only moves when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.now += s


def solid(value: int, w: int = 32, h: int = 24) -> np.ndarray:
    img = np.zeros((h, w, 3), np.uint8)
    img[:, :] = (value, 255 - value, 7)
    return img


# ------------------------------------------------------------------ images


def test_as_bgr_accepts_grey_and_four_channels_and_refuses_the_rest() -> None:
    grey = np.full((4, 5), 9, np.uint8)
    assert as_bgr(grey, "x").shape == (4, 5, 3)
    bgra = np.zeros((4, 5, 4), np.uint8)
    bgra[..., 2] = 200
    out = as_bgr(bgra, "x")
    assert out.shape == (4, 5, 3) and out[0, 0, 2] == 200
    with pytest.raises(CameraError, match="cam gave float32 pixels"):
        as_bgr(np.zeros((4, 5, 3), np.float32), "cam")
    with pytest.raises(CameraError, match="cam gave no image"):
        as_bgr(None, "cam")
    with pytest.raises(CameraError, match=r"shape \(4, 5, 2\)"):
        as_bgr(np.zeros((4, 5, 2), np.uint8), "cam")


# ------------------------------------------------------------------ folder


def make_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "frames"
    folder.mkdir()
    for n, value in ((10, 30), (2, 20), (1, 10)):
        assert cv2.imwrite(str(folder / f"frame{n}.png"), solid(value))
    (folder / "notes.txt").write_text("not a frame")
    return folder


def test_folder_reads_in_name_order_at_its_rate_and_ends(tmp_path: Path) -> None:
    clock = FakeClock()
    src = FolderSource(make_folder(tmp_path), fps=4, loop=False, clock=clock, sleep=clock.sleep)
    src.open()
    frames = [src.read() for _ in range(3)]
    assert [int(f.image[0, 0, 0]) for f in frames if f] == [10, 20, 30]  # frame1, frame2, frame10
    assert [f.seq for f in frames if f] == [0, 1, 2]
    assert [f.t for f in frames if f] == [100.0, 100.25, 100.5]
    assert src.read() is None
    src.close()


def test_folder_loops_and_skips_what_it_cannot_read(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    (folder / "frame3.jpg").write_bytes(b"not a jpeg")
    clock = FakeClock()
    src = FolderSource(folder, fps=100, loop=True, clock=clock, sleep=clock.sleep)
    src.open()
    values = [int(f.image[0, 0, 0]) for f in (src.read() for _ in range(5)) if f]
    assert values == [10, 20, 30, 10, 20]


def test_folder_errors_say_where(tmp_path: Path) -> None:
    with pytest.raises(CameraError, match="nowhere is not a folder"):
        FolderSource(tmp_path / "nowhere").open()
    (tmp_path / "empty").mkdir()
    with pytest.raises(CameraError, match="empty holds no images"):
        FolderSource(tmp_path / "empty").open()
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "a.png").write_bytes(b"junk")
    src = FolderSource(tmp_path / "bad", fps=100)
    src.open()
    with pytest.raises(CameraError, match="no image in .*bad can be read"):
        src.read()


# ------------------------------------------------------------------ OpenCV


def test_opencv_reads_a_video_file_then_ends(tmp_path: Path) -> None:
    video = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    assert writer.isOpened()
    for value in (40, 120, 200):
        writer.write(solid(value, 64, 48))
    writer.release()
    src = OpenCVSource(str(video))
    src.open()
    frames = []
    while (f := src.read()) is not None:
        frames.append(f)
    src.close()
    assert len(frames) == 3 and frames[0].image.shape == (48, 64, 3)
    assert [abs(int(f.image[10, 10, 0]) - v) < 12 for f, v in zip(frames, (40, 120, 200))] == [True] * 3
    assert [f.seq for f in frames] == [0, 1, 2]


def test_opencv_says_what_it_cannot_open(tmp_path: Path) -> None:
    with pytest.raises(CameraError, match="OpenCV cannot open '.*missing.avi'"):
        OpenCVSource(str(tmp_path / "missing.avi")).open()
    assert OpenCVSource("3").device == 3


# ------------------------------------------------------------------ picamera2


class FakePicamera2:
    """What Picamera2Source uses of picamera2.Picamera2, recording the calls."""

    def __init__(self, image: np.ndarray) -> None:
        self.image = image
        self.calls: list[Any] = []

    def create_video_configuration(self, main: dict[str, Any]) -> dict[str, Any]:
        return {"main": main}

    def configure(self, config: dict[str, Any]) -> None:
        self.calls.append(("configure", config))

    def start(self) -> None:
        self.calls.append("start")

    def capture_array(self, name: str) -> np.ndarray:
        self.calls.append(("capture", name))
        return self.image

    def stop(self) -> None:
        self.calls.append("stop")

    def close(self) -> None:
        self.calls.append("close")


def test_picamera2_asks_rgb888_and_keeps_its_bgr_bytes() -> None:
    pixels = np.zeros((6, 8, 3), np.uint8)
    pixels[..., 0], pixels[..., 1], pixels[..., 2] = 11, 22, 33  # B, G, R in memory
    cam = FakePicamera2(pixels)
    src = Picamera2Source(8, 6, factory=lambda: cam, clock=lambda: 5.0)
    src.open()
    frame = src.read()
    src.close()
    src.close()
    assert cam.calls[0] == ("configure", {"main": {"size": (8, 6), "format": "RGB888"}})
    assert frame is not None and frame.t == 5.0
    assert frame.image[0, 0].tolist() == [11, 22, 33]  # not swapped
    assert cam.calls[-2:] == ["stop", "close"]


def test_picamera2_missing_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import fails as off a Pi
    with pytest.raises(CameraError, match="apt install python3-picamera2"):
        Picamera2Source().open()


# ------------------------------------------------------------------ callable and config


def test_callable_source_paces_and_ends() -> None:
    clock = FakeClock()
    made = [solid(1), Frame(solid(2), 42.0, 99), None]
    opened: list[str] = []
    src = CallableSource(
        lambda: made.pop(0),
        "demo",
        fps=2,
        on_open=lambda: opened.append("o"),
        on_close=lambda: opened.append("c"),
        clock=clock,
        sleep=clock.sleep,
    )
    src.open()
    a, b = src.read(), src.read()
    assert a is not None and b is not None
    assert (a.seq, a.t, b.seq, b.t) == (0, 100.0, 1, 42.0)
    assert clock.sleeps == [0.5]
    assert src.read() is None
    src.close()
    src.close()
    assert opened == ["o", "c"]


def test_open_source_follows_the_config(tmp_path: Path) -> None:
    assert isinstance(open_source(Picamera2Camera(source="picamera2")), Picamera2Source)
    src = open_source(OpenCVCamera(source="opencv", device="1"))
    assert isinstance(src, OpenCVSource) and src.device == 1
    folder = open_source(FolderCamera(source="folder", path=tmp_path, fps=3, loop=False))
    assert isinstance(folder, FolderSource) and folder.loop is False
    rendered = RenderedCamera(source="rendered")
    with pytest.raises(CameraError, match="mayi-table demo"):
        open_source(rendered)
    made = CallableSource(lambda: None)
    assert open_source(rendered, rendered=lambda cfg: made) is made


# ------------------------------------------------------------------ ResilientCamera


class VanishingCamera:
    """A camera that gives frames, is unplugged (read raises, then open fails `down_opens` times),
    then is plugged back in."""

    def __init__(self, good_before: int, down_opens: int) -> None:
        self.good_before = good_before
        self.down_opens = down_opens
        self.unplugged = False
        self.reads = 0
        self.opens = 0
        self.closes = 0
        self.is_open = False

    def describe(self) -> str:
        return "usb camera"

    def open(self) -> None:
        self.opens += 1
        if self.unplugged:
            if self.down_opens > 0:
                self.down_opens -= 1
                raise CameraError("no such device /dev/video0")
            self.unplugged = False
        self.is_open = True

    def read(self) -> Frame | None:
        assert self.is_open
        self.reads += 1
        if self.reads == self.good_before + 1:
            self.unplugged = True
            raise OSError("VIDIOC_DQBUF: No such device")
        return Frame(solid(self.reads % 250), 0.0, self.reads)

    def close(self) -> None:
        self.closes += 1
        self.is_open = False


def test_a_camera_that_vanishes_mid_stream_is_recovered_and_the_outage_shows() -> None:
    clock = FakeClock()
    src = VanishingCamera(good_before=3, down_opens=3)
    seen: list[CameraStatus] = []
    during: list[CameraStatus] = []
    cam = ResilientCamera(src, backoff_s=0.5, max_backoff_s=1.5, clock=clock, sleep=clock.sleep)

    def sleeping(s: float) -> None:
        during.append(cam.status)  # what the scoreboard would show while we wait
        clock.sleep(s)

    cam._sleep = sleeping
    cam.on_status = seen.append
    assert cam.status.state == "starting"
    frames = [cam.read() for _ in range(3)]
    assert cam.status.state == "ok" and cam.status.frames == 3
    outage_start = clock.now
    frames.append(cam.read())  # through the outage: unplugged, 3 failed reopens, back
    assert all(f is not None for f in frames)
    assert [f.seq for f in frames if f] == [0, 1, 2, 3]  # numbered on across the reconnect
    # while it lasted: reconnecting, since the failure, with the error and the attempts so far
    assert during and all(s.state == "reconnecting" for s in during)
    assert during[0].since == outage_start and "No such device" in (during[0].last_error or "")
    assert [s.attempts for s in during] == [0, 1, 2, 3]
    assert "no such device /dev/video0" in (during[-1].last_error or "")
    assert clock.sleeps == [0.5, 1.0, 1.5, 1.5]  # doubling back-off, capped
    after = cam.status
    assert after.state == "ok" and after.outages == 1 and after.attempts == 0 and after.frames == 4
    assert after.since == clock.now and after.as_dict(clock.now + 2)["for_s"] == 2.0
    states = [s.state for s in seen]
    assert [x for i, x in enumerate(states) if i == 0 or states[i - 1] != x] == ["ok", "reconnecting", "ok"]
    assert [s.attempts for s in seen if s.state == "reconnecting"] == [0, 1, 1, 2, 2, 3, 3, 4]  # each try, each failure
    assert src.opens == 5 and src.closes >= 1
    cam.close()
    assert cam.status.state == "closed" and cam.read() is None


def test_reads_that_return_nothing_count_as_an_outage() -> None:
    clock = FakeClock()
    answers: list[Frame | None] = [None, None, None, Frame(solid(5), 1.0, 0)]

    class Silent:
        def describe(self) -> str:
            return "webcam"

        def open(self) -> None:
            pass

        def read(self) -> Frame | None:
            return answers.pop(0)

        def close(self) -> None:
            pass

    statuses: list[CameraStatus] = []
    cam = ResilientCamera(Silent(), max_empty=3, clock=clock, sleep=clock.sleep, on_status=statuses.append)
    frame = cam.read()
    assert frame is not None and frame.seq == 0
    assert any(s.state == "reconnecting" and s.last_error == "webcam gave no frame" for s in statuses)
    assert cam.status.state == "ok" and cam.status.outages == 1


def test_a_source_that_ends_ends(tmp_path: Path) -> None:
    clock = FakeClock()
    src = FolderSource(make_folder(tmp_path), fps=10, loop=False, clock=clock, sleep=clock.sleep)
    cam = ResilientCamera(src, ends=True, clock=clock, sleep=clock.sleep)
    assert [int(f.image[0, 0, 0]) for f in cam.frames()] == [10, 20, 30]
    assert cam.status.state == "ended" and cam.read() is None


def test_close_from_another_thread_wakes_a_back_off_wait() -> None:
    class Gone:
        def describe(self) -> str:
            return "gone"

        def open(self) -> None:
            raise CameraError("no camera")

        def read(self) -> Frame | None:
            raise AssertionError("never opened")

        def close(self) -> None:
            pass

    cam = ResilientCamera(Gone(), backoff_s=30.0, max_backoff_s=30.0)  # real waiting, on an Event
    result: list[Frame | None] = []
    reader = threading.Thread(target=lambda: result.append(cam.read()))
    started = time.monotonic()
    reader.start()
    deadline = time.monotonic() + 5
    while cam.status.state != "reconnecting" and time.monotonic() < deadline:
        time.sleep(0.01)
    cam.close()
    reader.join(5)
    assert not reader.is_alive() and result == [None]
    assert time.monotonic() - started < 5  # not the 30 s back-off


def test_camera_from_config_knows_which_sources_end(tmp_path: Path) -> None:
    once = camera_from_config(FolderCamera(source="folder", path=make_folder(tmp_path), fps=100, loop=False))
    assert once.ends and [int(f.image[0, 0, 0]) for f in once.frames()] == [10, 20, 30]
    assert once.status.state == "ended"
    assert not camera_from_config(FolderCamera(source="folder", path=tmp_path, loop=True)).ends
    video = tmp_path / "clip.avi"
    video.write_bytes(b"")
    assert camera_from_config(OpenCVCamera(source="opencv", device=str(video))).ends
    webcam = camera_from_config(OpenCVCamera(source="opencv", device=0), backoff_s=2.0)
    assert not webcam.ends and webcam.backoff_s == 2.0
    assert not camera_from_config(Picamera2Camera(source="picamera2")).ends
