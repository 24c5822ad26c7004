"""The built-in demo, and the rendered game as a camera: bots play a game, the table renderer draws it
frame by frame (arms included), and the real device pipeline referees it.

`FilmSource` turns a `GameFilm` into a camera source: frames come at their film times (paced by
`speed`), and the film's button presses are handed to the device in order with the frames (a press
belongs before the first frame filmed after it, so a claim window opened by a discard is already open
when the buyer's press arrives). The device's clock is the film's: claim windows last film seconds,
whatever the recogniser's speed.

`position_file` makes the film a table that waits for the device: the device writes the film position
of each frame it has fully processed (the moment, and how many of the moment's presses it has handled),
and a restarted device (after a crash) resumes the film from the start of the moment it was in, so
nothing of the game happens while nobody watches; the presses it had handled are not pressed again
(a player presses once), the others come again. Film times do not start over: a resumed film's frames
and presses come at the times the uninterrupted film gives them.
"""

from __future__ import annotations

import collections
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from .hardware.camera import CameraError, Frame
from .vision.classes import PhysicalCard
from .vision.render.game import ButtonPress, FilmFrame, GameFilm, oracle_cards

Press = tuple[str, float, bool]


class FilmSource:
    """A rendered game as a camera source (see the module doc)."""

    def __init__(
        self,
        film: GameFilm,
        speed: float = 1.0,
        position_file: Path | None = None,
        sleep: Callable[[float], None] = time.sleep,
        window_open: Callable[[], bool] | None = None,
    ) -> None:
        """`window_open()`: whether the journal's last event is a discard whose claim window was still open
        (nothing decided): the presses of the moment the film resumes at then come again, as players press
        again when no LED answered them."""
        self.film = film
        self.window_open = window_open
        self.speed = speed
        self.position_file = position_file
        self.sleep = sleep
        self.now = 0.0  # film time of the last frame read
        self._items: Iterator[tuple[int, ButtonPress | FilmFrame]] | None = None
        self._starts = moment_starts(film)
        self._pending: list[Press] = []
        self._presses_at: dict[int, list[Press]] = {}
        self._handed: collections.Counter[int] = collections.Counter()  # presses handed out, per moment
        self._position_at: dict[int, tuple[int, int]] = {}
        self._labels: collections.deque[list[Any]] = collections.deque()
        self._seq = 0
        self._wall0: float | None = None
        self._t0 = 0.0

    def describe(self) -> str:
        return f"rendered game (seed {self.film.seed})"

    def _start_position(self) -> tuple[int, int]:
        """(moment, presses of it handled already) where the last run stopped; (0, 0) for a new film."""
        if self.position_file is None or not self.position_file.exists():
            return 0, 0
        try:
            parts = [int(x) for x in self.position_file.read_text().split()]
        except (ValueError, OSError):
            return 0, 0
        if not parts:
            return 0, 0
        return max(0, parts[0]), max(0, parts[1]) if len(parts) > 1 else 0

    def open(self) -> None:
        if self._items is not None:
            return  # reopened after an outage: the film carries on where it was
        start, handled = self._start_position()
        if handled and self.window_open is not None and self.window_open():
            handled = 0  # the claims died with the last process: press again
        self._handed[start] = handled

        def items() -> Iterator[tuple[int, ButtonPress | FilmFrame]]:
            skip = handled
            for k in range(start, len(self.film.moments)):
                base = self._starts[k]  # items(k, k + 1) counts time from 0: the film's own clock goes on
                for item in self.film.items(k, k + 1):
                    if isinstance(item, ButtonPress):
                        if k == start and skip > 0:
                            skip -= 1
                            continue
                        yield k, ButtonPress(item.seat, base + item.t, item.long)
                    else:
                        item.t += base
                        yield k, item

        self._items = items()
        self._wall0 = None

    def read(self) -> Frame | None:
        if self._items is None:
            raise CameraError("the rendered game is not open")
        for moment, item in self._items:
            if isinstance(item, ButtonPress):
                self._pending.append((item.seat, item.t, item.long))
                self._handed[moment] += 1
                continue
            self._pace(item.t)
            self.now = item.t
            seq = self._seq
            self._seq += 1
            self._presses_at[seq], self._pending = self._pending, []
            self._position_at[seq] = (moment, self._handed[moment])
            self._labels.append(item.labels)
            return Frame(item.image, item.t, seq)
        return None

    def _pace(self, t: float) -> None:
        if self._wall0 is None:
            self._wall0, self._t0 = time.monotonic(), t
            return
        due = self._wall0 + (t - self._t0) / self.speed
        wait = due - time.monotonic()
        if wait > 0:
            self.sleep(wait)

    def close(self) -> None:
        pass  # the film is not a device: an outage (ResilientCamera closes and reopens) must not rewind it

    # ----- for the device --------------------------------------------------------------
    def presses_before(self, frame: Frame | None) -> list[Press]:
        """The film's presses due before `frame` (None: those left at the film's end)."""
        if frame is None:
            out, self._pending = self._pending, []
            return out
        return self._presses_at.pop(frame.seq, [])

    def processed(self, frame: Frame) -> None:
        """The device has journaled all `frame` showed: a restart may resume from its moment."""
        position = self._position_at.pop(frame.seq, None)
        if self.position_file is not None and position is not None:
            tmp = self.position_file.with_suffix(".tmp")
            tmp.write_text(f"{position[0]} {position[1]}\n")
            os.replace(tmp, self.position_file)

    def device_options(self) -> dict[str, Any]:
        """How a `runtime.Device` runs on this film: no frame dropped, the film's clock, its presses in
        order with its frames, its position saved as frames are journaled."""
        return {"live": False, "clock": None, "presses_for": self.presses_before, "on_processed": self.processed}

    def oracle(self) -> OracleReader:
        return OracleReader(self._labels)


def moment_starts(film: GameFilm) -> list[float]:
    """The film time at which each moment begins in `film.items()` (which times a whole film from 0),
    so that one moment's items, timed from 0 by `film.items(k, k + 1)`, can be put back on that clock."""
    out: list[float] = []
    t = 0.0
    for mom in film.moments:
        out.append(t)
        short = [p.t for p in mom.presses if not p.long]
        t += max(short, default=0.0) + mom.wait_s + 0.2
        arm = film.arm_frames if mom.actor is not None and film.arm_frames > 0 else 0
        for _ in range(arm + film.steady_frames):
            t += film.frame_dt
        for p in mom.presses:
            if p.long:
                t += p.t + 0.2
    return out


class OracleReader:
    """The exact cards of each film frame, from the renderer's labels, in frame order: stands in for the
    recogniser where only the reading and refereeing are tested."""

    def __init__(self, labels: collections.deque[list[Any]]) -> None:
        self._labels = labels

    def recognize(self, image_bgr: np.ndarray) -> list[PhysicalCard]:
        return oracle_cards(self._labels.popleft()) if self._labels else []


def feed_film_item(
    item: ButtonPress | FilmFrame,
    referee: Any,
    reader: Any,
    recognize: Callable[[FilmFrame], list[PhysicalCard]] = lambda f: oracle_cards(f.labels),
) -> None:
    """One film item through the table reader and the referee, in the order the device handles them: a press,
    or a frame (read, then its snapshot if one is published, then the claim clock)."""
    if isinstance(item, ButtonPress):
        referee.on_press(item.seat, item.t, long=item.long)
        return
    snap = reader.feed(recognize(item), item.image, item.t)
    if snap is not None:
        referee.on_snapshot(snap, item.t)
    referee.tick(item.t)
