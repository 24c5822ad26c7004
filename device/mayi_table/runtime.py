"""The device's main loop: camera -> recogniser (one worker thread) -> table reader -> referee -> hub -> browsers.

Three threads and a web server:

* the camera thread reads frames (a `ResilientCamera`: outages are reported and the source reopened)
  and hands the newest to the recogniser; a live camera's stale frames are dropped, a film's or a
  folder's are not (they wait, so nothing of the game is skipped);
* the recogniser thread names the cards in each frame;
* the main thread feeds the table reader, the referee (which journals through the hub before
  anything changes), the seat buttons' presses and the claim windows' clock, lights the winner's LED,
  pings the systemd watchdog only while frames are processed, and keeps the device status current;
* uvicorn serves the scoreboard and the host tablet (web/).

`Device.run()` reports READY to systemd once the web server is up, the model is loaded and the
camera has given its first frame. The journal is written before any state changes, so a restart
(after a crash, a SIGKILL, a power cut) rebuilds the referee from it and carries on.
"""

from __future__ import annotations

import json
import logging
import queue
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from .hardware.camera import Frame, ResilientCamera
from .hardware.notify import Notifier, Watchdog
from .rules.events import Deal, GameStart
from .table.claims import ClaimDesk
from .table.hub import TableHub
from .table.referee import Referee, RefereeError
from .vision.classes import CardReader, PhysicalCard
from .vision.table_reading import TableReader

log = logging.getLogger("mayi_table.device")

CAMERA_VIEW_EVERY_S = 2.0  # how often the host's annotated camera view is refreshed
_END = object()  # the camera source ended (a film, a folder played once)


class Panel(Protocol):
    """The seat buttons and LEDs (hardware.buttons.SeatPanel, or nothing)."""

    def light(self, seat: str | None) -> None: ...

    def close(self) -> None: ...


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line: time, level, message and the record's `fields` (structured logs)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "t": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        out.update(getattr(record, "fields", {}) or {})
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def setup_logging(level: str = "info", stream: Any = None) -> None:
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonLogFormatter())
    root = logging.getLogger("mayi_table")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


def _info(msg: str, **fields: Any) -> None:
    log.info(msg, extra={"fields": fields})


@dataclass
class DeviceStats:
    frames_read: int = 0
    frames_processed: int = 0
    frames_dropped: int = 0
    snapshots: int = 0
    presses: int = 0
    started: float = field(default_factory=time.monotonic)


class Device:
    """The running device. Build it with its parts (see `build_device` in cli.py / demo.py), then `run()`."""

    def __init__(
        self,
        *,
        hub: TableHub,
        camera: ResilientCamera,
        recognizer: CardReader,
        reader_factory: Callable[[], TableReader],
        live: bool = True,
        panel: Panel | None = None,
        notifier: Notifier | None = None,
        watchdog: Watchdog | None = None,
        clock: Callable[[], float] | None = time.monotonic,
        min_confidence: float = 0.5,
        faint_below: float = 0.0,
        claim_window_s: float = 3.0,
        on_processed: Callable[[Frame], None] | None = None,
        presses_for: Callable[[Frame | None], list[tuple[str, float, bool]]] | None = None,
        annotate_view: bool = True,
        first_dealer: str | None = None,
    ) -> None:
        """`clock` None: the device's time is the time of the last frame processed (a film's clock).
        `presses_for(frame)`: button presses that belong before a frame (a film's, in order with its
        frames; None at the end). `on_processed(frame)`: called once everything the frame and its
        presses caused is journaled (claim decisions included). `first_dealer`: who deals round 1 when
        neither the hub (it forgets across a restart) nor the journal (no deal yet) says."""
        self.hub = hub
        self.camera = camera
        self.recognizer = recognizer
        self.reader_factory = reader_factory
        self.reader = reader_factory()
        self.live = live
        self.panel = panel
        self.notifier = notifier or Notifier(None)
        self.watchdog = watchdog or Watchdog(self.notifier, None)
        self.last_t = 0.0
        self.clock: Callable[[], float] = clock if clock is not None else (lambda: self.last_t)
        self._film_clock = clock is None
        self._first_dealer = first_dealer
        self.presses_for = presses_for
        self.min_confidence = min_confidence
        self.faint_below = faint_below
        self.claim_window_s = claim_window_s
        self.on_processed = on_processed
        self.annotate_view = annotate_view
        self.referee: Referee | None = None
        self.stats = DeviceStats()
        self._frames: queue.Queue[Any] = queue.Queue(maxsize=1)
        self._results: queue.Queue[Any] = queue.Queue(maxsize=2)
        self._presses: queue.Queue[tuple[str, float, bool]] = queue.Queue()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._first_frame = threading.Event()
        self._version_seen = -1
        self._last_view = 0.0
        self._last_camera_state: str | None = None
        self._threads: list[threading.Thread] = []
        self.error: str | None = None

    # ----- inputs from other threads ----------------------------------------------------
    def press(self, seat: str, t: float | None = None, long: bool = False) -> None:
        """A seat's button (from gpiozero's thread, or a film); handled on the main thread."""
        self._presses.put((seat, self.clock() if t is None else t, long))

    def stop(self) -> None:
        self._stop.set()

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    # ----- the camera and recogniser threads --------------------------------------------
    def _camera_loop(self) -> None:
        try:
            for frame in self.camera.frames():
                if self._stop.is_set():
                    break
                self.stats.frames_read += 1
                self._first_frame.set()
                if self.live:
                    try:  # keep only the newest frame: the recogniser is slower than the camera
                        self._frames.get_nowait()
                        self.stats.frames_dropped += 1
                    except queue.Empty:
                        pass
                    self._frames.put(frame)
                else:
                    while not self._stop.is_set():
                        try:
                            self._frames.put(frame, timeout=0.2)
                            break
                        except queue.Full:
                            continue
        except Exception as e:  # noqa: BLE001 - reported, and the device stops cleanly
            self.error = f"camera thread failed: {type(e).__name__}: {e}"
            log.exception("camera thread failed")
        finally:
            self._put_end(self._frames)

    def _put_end(self, q: queue.Queue[Any]) -> None:
        while not self._stop.is_set():
            try:
                q.put(_END, timeout=0.2)
                return
            except queue.Full:
                continue

    def _recognize_loop(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    frame = self._frames.get(timeout=0.2)
                except queue.Empty:
                    continue
                if frame is _END:
                    break
                cards = self.recognizer.recognize(frame.image)
                while not self._stop.is_set():
                    try:
                        self._results.put((frame, cards), timeout=0.2)
                        break
                    except queue.Full:
                        continue
        except Exception as e:  # noqa: BLE001
            self.error = f"recogniser thread failed: {type(e).__name__}: {e}"
            log.exception("recogniser thread failed")
        finally:
            self._put_end(self._results)

    # ----- the referee ---------------------------------------------------------------
    def _ensure_referee(self) -> None:
        """Follow the journal's game: build the referee when a game is set up (or after a restart), and
        rebuild it when the host starts a new one."""
        game = self.hub.game
        if game is None:
            self.referee = None
            return
        start: GameStart = game.start
        if self.referee is not None and self.referee.game.start == start:
            return
        first = self.hub.first_dealer or self._first_dealer_in_history() or self._first_dealer
        if first not in start.seats:
            first = start.seats[0]
        claims = ClaimDesk(game, length_s=self.claim_window_s)
        try:
            self.referee = Referee(
                self.hub,
                start,
                first,
                claims=claims,
                min_confidence=self.min_confidence,
                claim_window_s=self.claim_window_s,
                faint_below=self.faint_below,
            )
        except RefereeError as e:
            self.error = str(e)
            log.error("cannot referee the journal's game", extra={"fields": {"error": str(e)}})
            self.referee = None
            return
        self.reader = self.reader_factory()
        self._version_seen = self.hub.version
        _info("refereeing", profile=start.profile, seats=list(start.seats), first_dealer=first)

    def _first_dealer_in_history(self) -> str | None:
        for line in self.hub.history(public=True):
            event = line.get("event") or {}  # history lines are {"seq", "event"}
            if event.get("type") == Deal.__name__.lower():
                dealer = event.get("dealer")
                return str(dealer) if dealer else None
        return None

    def _after_host_changes(self) -> None:
        """The host confirmed, corrected or undid something on the tablet: the referee reloads."""
        version = self.hub.version
        if self.referee is not None and version != self._version_seen:
            self.referee.resync()
        self._version_seen = version

    def _handle_presses(self, in_band: list[tuple[str, float, bool]] | None = None) -> None:
        while True:
            if in_band is not None:
                if not in_band:
                    return
                seat, t, long = in_band.pop(0)
            else:
                try:
                    seat, t, long = self._presses.get_nowait()
                except queue.Empty:
                    return
            self.stats.presses += 1
            _info("button", seat=seat, long=long)
            if self.referee is not None:
                self.referee.on_press(seat, t, long=long)
                self._version_seen = self.hub.version

    def _process(self, frame: Frame, cards: list[PhysicalCard]) -> None:
        self.last_t = max(self.last_t, frame.t)
        self._ensure_referee()
        self._after_host_changes()
        if self.presses_for is not None:
            self._handle_presses(self.presses_for(frame))
        self._handle_presses()
        snap = self.reader.feed(cards, frame.image, frame.t)
        if snap is not None:
            self.stats.snapshots += 1
            if self.referee is not None:
                self.referee.on_snapshot(snap, frame.t)
                self._version_seen = self.hub.version
        self.stats.frames_processed += 1
        self.watchdog.frame_processed()
        self.hub.update_device(add_frames=1)
        if self.annotate_view and frame.t - self._last_view >= CAMERA_VIEW_EVERY_S:
            self._last_view = frame.t
            self._publish_view(frame, cards)

    def _publish_view(self, frame: Frame, cards: list[PhysicalCard]) -> None:
        import cv2

        from .vision.recognize import annotate

        small = annotate(frame.image, cards)
        h, w = small.shape[:2]
        if w > 1280:
            small = cv2.resize(small, (1280, round(h * 1280 / w)), interpolation=cv2.INTER_AREA)
        ok, buf = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 80])
        if ok:
            self.hub.set_camera_view(buf.tobytes())

    def _camera_status(self) -> None:
        st = self.camera.status
        if st.state != self._last_camera_state:
            self._last_camera_state = st.state
            ok = st.state in ("ok", "ended")
            # the error shows while the outage lasts; once frames flow again it is cleared
            self.hub.update_device(camera_ok=ok, error="" if ok else st.last_error or "")
            _info("camera", state=st.state, error=st.last_error, attempts=st.attempts, outages=st.outages)
            self.notifier.status(f"camera {st.state}" + (f": {st.last_error}" if st.last_error else ""))

    def _tick(self) -> None:
        now = self.clock()
        self._handle_presses()
        if self._film_clock and self.stats.frames_processed == 0:
            return  # the film's clock starts with its first frame: no time to decide windows by before it
        if self.referee is not None:
            self.referee.tick(now)
            self._version_seen = self.hub.version
            if self.panel is not None:
                self.panel.light(self.referee.claims.lit_at(now))
        self.watchdog.tick()

    # ----- the loop ------------------------------------------------------------------
    def _maybe_ready(self) -> None:
        if not self._ready.is_set() and self._first_frame.is_set():
            self._ready.set()
            self.notifier.ready("refereeing")
            _info("ready")

    def run(self, ready_timeout: float | None = None) -> int:
        """Run until stopped or the source ends; the exit status (0 when all went well)."""
        for target, name in ((self._camera_loop, "camera"), (self._recognize_loop, "recogniser")):
            t = threading.Thread(target=target, name=name, daemon=True)
            t.start()
            self._threads.append(t)
        self._ensure_referee()
        try:
            while not self._stop.is_set():
                self._maybe_ready()
                self._camera_status()
                try:
                    item = self._results.get(timeout=0.05)
                except queue.Empty:
                    self._tick()
                    continue
                if item is _END:
                    if self.presses_for is not None:
                        self._handle_presses(self.presses_for(None))
                    self._tick()
                    break
                frame, cards = item
                self._maybe_ready()  # the frame may have come since the loop's top: READY before any ping
                self._process(frame, cards)
                self._tick()  # may journal a claim decision this frame's time brought
                if self.on_processed is not None:
                    self.on_processed(frame)
        finally:
            self._stop.set()
            self._camera_status()
            self.notifier.stopping()
            self.camera.close()
            for t in self._threads:
                t.join(timeout=5)
            if self.panel is not None:
                self.panel.light(None)
        _info("stopped", frames=self.stats.frames_processed, snapshots=self.stats.snapshots, error=self.error)
        return 1 if self.error else 0
