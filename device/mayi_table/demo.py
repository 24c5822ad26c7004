"""The built-in demo, and the rendered game as a camera: bots play a game, the table renderer draws it
frame by frame (arms included), and the real device pipeline referees it.

`FilmSource` turns a `GameFilm` into a camera source: frames come at their film times (paced by
`speed`), and the film's button presses are handed to the device in order with the frames (a press
belongs before the first frame filmed after it, so a claim window opened by a discard is already open
when the buyer's press arrives). The device's clock is the film's: claim windows last film seconds,
whatever the recogniser's speed.

`position_file` makes the film a table that waits for the device: the device writes the film position
of each frame it has fully processed, and a restarted device (after a crash) resumes the film from the
start of the moment it was in, so nothing of the game happens while nobody watches.
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
    ) -> None:
        self.film = film
        self.speed = speed
        self.position_file = position_file
        self.sleep = sleep
        self.now = 0.0  # film time of the last frame read
        self._items: Iterator[tuple[int, ButtonPress | FilmFrame]] | None = None
        self._pending: list[Press] = []
        self._presses_at: dict[int, list[Press]] = {}
        self._position_at: dict[int, int] = {}
        self._labels: collections.deque[list[Any]] = collections.deque()
        self._seq = 0
        self._wall0: float | None = None
        self._t0 = 0.0

    def describe(self) -> str:
        return f"rendered game (seed {self.film.seed})"

    def _start_moment(self) -> int:
        if self.position_file is None or not self.position_file.exists():
            return 0
        try:
            return max(0, int(self.position_file.read_text().split()[0]))
        except (ValueError, IndexError, OSError):
            return 0

    def open(self) -> None:
        start = self._start_moment()

        def items() -> Iterator[tuple[int, ButtonPress | FilmFrame]]:
            for k in range(start, len(self.film.moments)):
                for item in self.film.items(k, k + 1):
                    yield k, item

        self._items = items()
        self._wall0 = None

    def read(self) -> Frame | None:
        if self._items is None:
            raise CameraError("the rendered game is not open")
        for moment, item in self._items:
            if isinstance(item, ButtonPress):
                self._pending.append((item.seat, item.t, item.long))
                continue
            self._pace(item.t)
            self.now = item.t
            seq = self._seq
            self._seq += 1
            self._presses_at[seq], self._pending = self._pending, []
            self._position_at[seq] = moment
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
        self._items = None

    # ----- for the device --------------------------------------------------------------
    def presses_before(self, frame: Frame | None) -> list[Press]:
        """The film's presses due before `frame` (None: those left at the film's end)."""
        if frame is None:
            out, self._pending = self._pending, []
            return out
        return self._presses_at.pop(frame.seq, [])

    def processed(self, frame: Frame) -> None:
        """The device has journaled all `frame` showed: a restart may resume from its moment."""
        moment = self._position_at.pop(frame.seq, None)
        if self.position_file is not None and moment is not None:
            tmp = self.position_file.with_suffix(".tmp")
            tmp.write_text(f"{moment}\n")
            os.replace(tmp, self.position_file)

    def oracle(self) -> OracleReader:
        return OracleReader(self._labels)


class OracleReader:
    """The exact cards of each film frame, from the renderer's labels, in frame order: stands in for the
    recogniser where only the reading and refereeing are tested."""

    def __init__(self, labels: collections.deque[list[Any]]) -> None:
        self._labels = labels

    def recognize(self, image_bgr: np.ndarray) -> list[PhysicalCard]:
        return oracle_cards(self._labels.popleft()) if self._labels else []
