"""Camera sources: where frames come from, and a wrapper that survives a camera going away.

Every source is a :class:`FrameSource`: ``open()``, then ``read()`` until it returns None (the
source has ended: a folder played once) or raises (the camera failed), then ``close()``. Frames
are BGR uint8 images, the order OpenCV and the detector expect.

- :class:`Picamera2Source`: a Raspberry Pi camera module (libcamera). ``picamera2`` is imported
  only in ``open()``: it cannot even be imported off a Pi.
- :class:`OpenCVSource`: ``cv2.VideoCapture`` on a device index, a device path, a file or a URL.
- :class:`FolderSource`: the images of a folder in name order at a given rate, optionally looping.
- :class:`CallableSource`: a Python function that makes frames (the demo's rendered game).

:class:`ResilientCamera` wraps any source: when it raises or stops giving frames, the outage shows
in :class:`CameraStatus` and the source is reopened with exponential back-off, for as long as it
takes, without restarting the process.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Literal, Protocol, Union

import numpy as np

if TYPE_CHECKING:
    from ..config import CameraConfig, RenderedCamera

log = logging.getLogger(__name__)

Clock = Callable[[], float]
Sleep = Callable[[float], None]
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")


class CameraError(RuntimeError):
    """A camera that cannot be opened or read; the message says which and why."""


@dataclass(frozen=True)
class Frame:
    """One camera frame: `image` is BGR uint8 (H x W x 3), `t` the time.monotonic() seconds when it
    was read, `seq` its number (from 0; a ResilientCamera numbers on across reconnects)."""

    image: np.ndarray
    t: float
    seq: int


class FrameSource(Protocol):
    def open(self) -> None:
        """Start the source; raises CameraError (or the library's own error) when it cannot."""

    def read(self) -> Frame | None:
        """The next frame (blocking until it comes); None when the source has no more frames."""

    def close(self) -> None:
        """Release the device; safe to call twice and on a source that never opened."""

    def describe(self) -> str:
        """A short name for messages: "picamera2 1920x1080", "folder /data/frames"."""


def as_bgr(image: Any, where: str) -> np.ndarray:
    """`image` as a BGR uint8 H x W x 3 array: grey becomes three channels and a fourth (alpha or
    padding) channel is dropped; anything else is a CameraError naming `where`."""
    if not isinstance(image, np.ndarray) or image.size == 0:
        raise CameraError(f"{where} gave no image ({type(image).__name__})")
    if image.dtype != np.uint8:
        raise CameraError(f"{where} gave {image.dtype} pixels, not 8-bit")
    if image.ndim == 2:
        return np.repeat(image[:, :, None], 3, axis=2)
    if image.ndim == 3 and image.shape[2] == 3:
        return image
    if image.ndim == 3 and image.shape[2] == 4:
        return np.ascontiguousarray(image[:, :, :3])
    raise CameraError(f"{where} gave an image of shape {image.shape}, not H x W x 3")


class _Pacer:
    """Spaces reads 1/fps apart (on the injected clock), without drifting."""

    def __init__(self, fps: float | None, clock: Clock, sleep: Sleep) -> None:
        self.period = 1.0 / fps if fps else 0.0
        self.clock = clock
        self.sleep = sleep
        self.due: float | None = None

    def wait(self) -> None:
        if not self.period:
            return
        now = self.clock()
        if self.due is None or now - self.due > self.period:
            self.due = now  # first frame, or we fell behind: start afresh rather than burst
        elif self.due > now:
            self.sleep(self.due - now)
        self.due += self.period

    def reset(self) -> None:
        self.due = None


# ------------------------------------------------------------------ sources


class Picamera2Source:
    """A camera module through picamera2, `width` x `height`.

    The format asked for is ``RGB888``, which libcamera names by its 32-bit word order: in memory
    each pixel is B, G, R, the order OpenCV uses. So ``capture_array()`` is already BGR and is
    passed on as it is; swapping channels here would turn red cards blue. `factory` makes the
    Picamera2 object (tests pass a fake); by default it is imported from picamera2 in `open()`.
    """

    def __init__(
        self,
        width: int = 1920,
        height: int = 1080,
        factory: Callable[[], Any] | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self.width = width
        self.height = height
        self.factory = factory
        self.clock = clock
        self._cam: Any = None
        self._seq = 0

    def describe(self) -> str:
        return f"picamera2 {self.width}x{self.height}"

    def open(self) -> None:
        factory = self.factory
        if factory is None:
            try:
                from picamera2 import Picamera2
            except ImportError as exc:
                raise CameraError(
                    f"picamera2 is not importable ({exc}): sudo apt install python3-picamera2, and create the venv "
                    "with --system-site-packages"
                ) from None
            factory = Picamera2
        cam = factory()
        try:
            config = cam.create_video_configuration(main={"size": (self.width, self.height), "format": "RGB888"})
            cam.configure(config)
            cam.start()
        except Exception:
            cam.close()
            raise
        self._cam = cam

    def read(self) -> Frame | None:
        if self._cam is None:
            raise CameraError(f"{self.describe()} is not open")
        image = as_bgr(self._cam.capture_array("main"), self.describe())  # RGB888 is BGR in memory: no swap
        frame = Frame(image, self.clock(), self._seq)
        self._seq += 1
        return frame

    def close(self) -> None:
        cam, self._cam = self._cam, None
        if cam is None:
            return
        try:
            cam.stop()
        finally:
            cam.close()


class OpenCVSource:
    """cv2.VideoCapture on `device`: an index (0), a path (/dev/video0, a video file) or a URL;
    `width`/`height` are asked of the device when given (it may pick the nearest size it has)."""

    def __init__(
        self,
        device: Union[int, str] = 0,
        width: int | None = None,
        height: int | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        # "0" on a command line means the first camera, not a file called 0
        self.device: Union[int, str] = int(device) if isinstance(device, str) and device.isdigit() else device
        self.width = width
        self.height = height
        self.clock = clock
        self._cap: Any = None
        self._seq = 0

    def describe(self) -> str:
        return f"OpenCV camera {self.device!r}"

    def open(self) -> None:
        import cv2

        cap = cv2.VideoCapture(self.device)
        if not cap.isOpened():
            cap.release()
            raise CameraError(f"OpenCV cannot open {self.device!r} (no such camera, file or stream)")
        if self.width:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.width)
        if self.height:
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.height)
        self._cap = cap

    def read(self) -> Frame | None:
        if self._cap is None:
            raise CameraError(f"{self.describe()} is not open")
        ok, image = self._cap.read()
        if not ok or image is None:
            return None  # end of a file, or a device that went away; ResilientCamera tells them apart
        frame = Frame(as_bgr(image, self.describe()), self.clock(), self._seq)
        self._seq += 1
        return frame

    def close(self) -> None:
        cap, self._cap = self._cap, None
        if cap is not None:
            cap.release()


def _natural(name: str) -> list[Union[int, str]]:
    """frame2 before frame10."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", name)]


class FolderSource:
    """The images in `path` (jpg, png, bmp, webp, tif) in name order, numbers compared as numbers
    (frame2 before frame10), `fps` a second; with `loop` it starts over at the end, else `read()`
    returns None. An unreadable image is skipped with a warning."""

    def __init__(
        self,
        path: Path | str,
        fps: float = 2.0,
        loop: bool = True,
        clock: Clock = time.monotonic,
        sleep: Sleep = time.sleep,
    ) -> None:
        self.path = Path(path)
        self.loop = loop
        self.clock = clock
        self._pacer = _Pacer(fps, clock, sleep)
        self._files: list[Path] = []
        self._next = 0
        self._seq = 0
        self._open = False

    def describe(self) -> str:
        return f"folder {self.path}"

    def open(self) -> None:
        if not self.path.is_dir():
            raise CameraError(f"{self.path} is not a folder")
        files = [p for p in self.path.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES]
        if not files:
            raise CameraError(f"{self.path} holds no images ({', '.join(IMAGE_SUFFIXES)})")
        self._files = sorted(files, key=lambda p: _natural(p.name))
        self._next = 0
        self._pacer.reset()
        self._open = True

    def read(self) -> Frame | None:
        import cv2

        if not self._open:
            raise CameraError(f"{self.describe()} is not open")
        skipped = 0
        while True:
            if self._next >= len(self._files):
                if not self.loop:
                    return None
                self._next = 0
            if skipped >= len(self._files):
                raise CameraError(f"no image in {self.path} can be read")
            file = self._files[self._next]
            self._next += 1
            image = cv2.imread(str(file), cv2.IMREAD_COLOR)
            if image is None:
                log.warning("skipping %s: not an image OpenCV can read", file)
                skipped += 1
                continue
            self._pacer.wait()
            frame = Frame(as_bgr(image, str(file)), self.clock(), self._seq)
            self._seq += 1
            return frame

    def close(self) -> None:
        self._open = False


class CallableSource:
    """Frames from `make()`: it returns a BGR image, a Frame (its image and time are kept, the
    number is ours), or None when it has no more. `fps` paces the calls; `on_open`/`on_close` run
    when the source opens and closes (to start and stop a renderer)."""

    def __init__(
        self,
        make: Callable[[], Union[np.ndarray, Frame, None]],
        name: str = "rendered frames",
        fps: float | None = None,
        on_open: Callable[[], None] | None = None,
        on_close: Callable[[], None] | None = None,
        clock: Clock = time.monotonic,
        sleep: Sleep = time.sleep,
    ) -> None:
        self.make = make
        self.name = name
        self.on_open = on_open
        self.on_close = on_close
        self.clock = clock
        self._pacer = _Pacer(fps, clock, sleep)
        self._seq = 0
        self._open = False

    def describe(self) -> str:
        return self.name

    def open(self) -> None:
        if self.on_open is not None:
            self.on_open()
        self._pacer.reset()
        self._open = True

    def read(self) -> Frame | None:
        if not self._open:
            raise CameraError(f"{self.name} is not open")
        self._pacer.wait()
        made = self.make()
        if made is None:
            return None
        if isinstance(made, Frame):
            frame = Frame(as_bgr(made.image, self.name), made.t, self._seq)
        else:
            frame = Frame(as_bgr(made, self.name), self.clock(), self._seq)
        self._seq += 1
        return frame

    def close(self) -> None:
        was_open, self._open = self._open, False
        if was_open and self.on_close is not None:
            self.on_close()


def open_source(
    config: CameraConfig,
    rendered: Callable[[RenderedCamera], FrameSource] | None = None,
) -> FrameSource:
    """The source the config's ``camera:`` section names (not opened yet). `rendered` builds the
    demo's rendered game source; without it a ``rendered`` camera is a CameraError."""
    if config.source == "picamera2":
        return Picamera2Source(config.width, config.height)
    if config.source == "opencv":
        return OpenCVSource(config.device, config.width, config.height)
    if config.source == "folder":
        return FolderSource(config.path, config.fps, config.loop)
    if rendered is None:
        raise CameraError("camera source `rendered` is the demo's rendered game: run it with `mayi-table demo`")
    return rendered(config)


# ------------------------------------------------------------------ surviving outages


CameraState = Literal["starting", "ok", "reconnecting", "ended", "closed"]


@dataclass(frozen=True)
class CameraStatus:
    """What the camera is doing, for the scoreboard and the log.

    `state`: starting (not read yet), ok, reconnecting (an outage: the source failed and is being
    reopened), ended (the source has no more frames), closed. `since`: monotonic time the state
    began. `last_error`: why the last outage began or the last reopen failed. `attempts`: reopen
    attempts in the current outage. `frames`: frames delivered in all. `outages`: outages so far.
    """

    source: str
    state: CameraState
    since: float
    last_error: str | None = None
    attempts: int = 0
    frames: int = 0
    outages: int = 0
    next_attempt_at: float | None = None

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    def as_dict(self, now: float | None = None) -> dict[str, Any]:
        """JSON-ready, with `for_s` (how long the state has lasted) when `now` is given."""
        out: dict[str, Any] = {
            "source": self.source,
            "state": self.state,
            "since": self.since,
            "last_error": self.last_error,
            "attempts": self.attempts,
            "frames": self.frames,
            "outages": self.outages,
        }
        if now is not None:
            out["for_s"] = round(max(0.0, now - self.since), 3)
        return out


class ResilientCamera:
    """Reads frames from `source`, reopening it after any failure.

    A failure is an exception from open() or read(), an image that is not an image, or
    `max_empty` reads in a row without a frame (a device that has gone away often just stops
    giving frames). Then the status turns `reconnecting` (with the error), the source is closed,
    and reopened after `backoff_s`, doubling up to `max_backoff_s` between attempts, until a
    frame comes again: the status is then `ok`. A source that ends normally (`ends=True`, such as
    a folder played once) makes read() return None with the status `ended`.

    read() blocks through an outage (sleeping with the injected `sleep`) and returns None only when
    the source has ended or close() was called, from any thread. Frames are renumbered 0, 1, 2, ...
    across reconnects. `on_status` is called with each new status (from the reading thread);
    `status` can be read from any thread.

    A read() that blocks forever inside the camera library cannot be interrupted from here; the
    frame-driven systemd watchdog (hardware.notify.Watchdog) restarts the service in that case.
    """

    def __init__(
        self,
        source: FrameSource,
        *,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        max_empty: int = 3,
        ends: bool = False,
        clock: Clock = time.monotonic,
        sleep: Sleep | None = None,
        on_status: Callable[[CameraStatus], None] | None = None,
    ) -> None:
        if backoff_s <= 0 or max_backoff_s < backoff_s:
            raise ValueError("need 0 < backoff_s <= max_backoff_s")
        self.source = source
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.max_empty = max(1, max_empty)
        self.ends = ends
        self.clock = clock
        self.on_status = on_status
        self._stop = threading.Event()
        self._sleep: Sleep = sleep if sleep is not None else self._wait
        self._lock = threading.Lock()
        self._status = CameraStatus(source.describe(), "starting", clock())
        self._opened = False
        self._reading = False
        self._empty = 0
        self._seq = 0

    def _wait(self, seconds: float) -> None:
        self._stop.wait(seconds)  # close() from another thread cuts a back-off wait short

    # ----- status -------------------------------------------------------------------
    @property
    def status(self) -> CameraStatus:
        with self._lock:
            return self._status

    def _set(self, **changes: Any) -> None:
        with self._lock:
            if "state" in changes and changes["state"] != self._status.state:
                changes.setdefault("since", self.clock())
            self._status = replace(self._status, **changes)
            status = self._status
        if self.on_status is not None:
            try:
                self.on_status(status)
            except Exception:
                log.exception("camera status callback failed")

    # ----- reading ------------------------------------------------------------------
    def read(self) -> Frame | None:
        """The next frame; None once the source has ended or the camera is closed."""
        with self._lock:
            self._reading = True
        try:
            return self._read()
        finally:
            with self._lock:
                self._reading = False
            if self._stop.is_set():
                self._close_source()  # close() came from another thread while we were reading

    def _read(self) -> Frame | None:
        delay = self.backoff_s
        while not self._stop.is_set():
            st = self.status
            if st.state == "ended":
                return None
            if st.state == "reconnecting":
                wait = max(0.0, (st.next_attempt_at or 0.0) - self.clock())
                if wait > 0:
                    self._sleep(wait)
                    continue
                self._set(attempts=st.attempts + 1)
            try:
                if not self._opened:
                    self.source.open()
                    self._opened = True
                frame = self.source.read()
            except Exception as exc:  # a camera library raises anything when the device goes
                self._fail(f"{type(exc).__name__}: {exc}" if not isinstance(exc, CameraError) else str(exc), delay)
                delay = min(delay * 2, self.max_backoff_s)
                continue
            if frame is None:
                if self.ends and self.status.state != "reconnecting":
                    self._close_source()
                    self._set(state="ended")
                    return None
                self._empty += 1
                if self._empty >= self.max_empty or self.status.state == "reconnecting":
                    self._fail(f"{self.source.describe()} gave no frame", delay)
                    delay = min(delay * 2, self.max_backoff_s)
                continue
            self._empty = 0
            out = replace(frame, seq=self._seq)
            self._seq += 1
            if self.status.state != "ok":
                self._set(state="ok", attempts=0, next_attempt_at=None, frames=self._seq)
            else:
                with self._lock:
                    self._status = replace(self._status, frames=self._seq)
            return out
        return None

    def _fail(self, error: str, delay: float) -> None:
        self._close_source()
        self._empty = 0
        st = self.status
        log.warning("camera %s: %s; reopening in %.1f s", st.source, error, delay)
        retry = self.clock() + delay
        if st.state != "reconnecting":
            self._set(state="reconnecting", last_error=error, attempts=0, outages=st.outages + 1, next_attempt_at=retry)
        else:
            self._set(last_error=error, next_attempt_at=retry)

    def _close_source(self) -> None:
        with self._lock:
            was_open, self._opened = self._opened, False
        if not was_open:
            return
        try:
            self.source.close()
        except Exception as exc:
            log.warning("camera %s: closing failed: %s", self.source.describe(), exc)

    def frames(self) -> Iterator[Frame]:
        """Frames until the source ends or close() is called."""
        while (frame := self.read()) is not None:
            yield frame

    def close(self) -> None:
        """Stop reading and release the source. From another thread: a read() waiting out a back-off
        returns None at once, and one inside the camera library releases the source when it returns."""
        self._stop.set()
        with self._lock:
            reading = self._reading
        if not reading:
            self._close_source()
        self._set(state="closed")

    def __enter__(self) -> ResilientCamera:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def camera_from_config(
    config: CameraConfig,
    rendered: Callable[[RenderedCamera], FrameSource] | None = None,
    **options: Any,
) -> ResilientCamera:
    """The config's camera wrapped in a ResilientCamera (`options` are its keyword arguments). A
    folder played once, a video file and a rendered game end; a camera or a stream never does: when
    it stops, it is reconnected."""
    source = open_source(config, rendered)
    if config.source == "folder":
        ends = not config.loop
    elif config.source == "opencv":
        ends = isinstance(config.device, str) and Path(config.device).is_file()
    else:
        ends = config.source == "rendered"
    return ResilientCamera(source, ends=ends, **options)
