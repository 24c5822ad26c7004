"""Recognise a frame only when the view changed: a still table keeps its last reading.

The camera films a table that holds still most of the time (between one move and the next), and
recognising a 1920 x 1080 frame costs about a second of a core. `StillView` wraps a recogniser (as
`mayi-table run` and `demo` do): each frame is shrunk to a small grey thumbnail, and while no patch
of it differs from the thumbnail of the last recognised frame by more than sensor noise does, the
last cards are returned again. An arm reaching in, a card laid down or light switched on changes
patches far beyond that level.

A small index read unsure may read sure in the next frame (sensor noise alone moves a 7C from 0.39 to
1.0: petras film 2002, round 3, where the 0.39 was kept and the discard never taken as sure). So a
changed view whose reading holds a card under `SURE` is read once more, and the surer of the two
readings is kept.
"""

from __future__ import annotations

import cv2
import numpy as np

from .classes import CardReader, PhysicalCard

THUMB_WIDTH = 480  # a 1920-wide frame shrinks by 4: a card index is still several thumbnail pixels
# thumbnail pixels a side: a patch is 16 x 16 px of a 1920-wide frame, about an index's rank. With
# 32 px patches a 2S thrown where a 3H lay the same way round changed them by 6.0, no more than the
# level (classic film 2002, round 6): the 3H's reading was kept and the discard missed
PATCH = 4
CHANGE_LEVEL = 6.0  # mean grey-level difference of one patch that counts as a change (noise gives < 1)
SURE = 0.9  # a card read under this in a changed view has the view read once more


class StillView:
    """A recogniser that reuses its last reading while the view is unchanged."""

    def __init__(self, reader: CardReader, change_level: float = CHANGE_LEVEL, sure: float = SURE) -> None:
        self.reader = reader
        self.change_level = change_level
        self.sure = sure
        self._read_again = False  # the last changed view held an unsure card and has been read once
        self.recognised = 0
        self.reused = 0
        self._shape: tuple[int, ...] = ()
        self._thumb: np.ndarray | None = None
        self._cards: list[PhysicalCard] = []

    def _thumbnail(self, image: np.ndarray) -> np.ndarray:
        h, w = image.shape[:2]
        tw = min(THUMB_WIDTH, w)
        th = max(1, round(h * tw / w))
        grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
        thumb: np.ndarray = cv2.resize(grey, (tw, th), interpolation=cv2.INTER_AREA).astype(np.float32)
        return thumb

    def _changed(self, image: np.ndarray, thumb: np.ndarray) -> bool:
        """Whether a frame differs from the last recognised one (or there is none, or its size changed)."""
        last = self._thumb
        if last is None or image.shape != self._shape:
            return True
        diff = cv2.absdiff(thumb, last)
        h, w = diff.shape
        patches = cv2.resize(diff, (max(1, w // PATCH), max(1, h // PATCH)), interpolation=cv2.INTER_AREA)
        return float(patches.max()) > self.change_level

    def recognize(self, image: np.ndarray) -> list[PhysicalCard]:
        thumb = self._thumbnail(image)
        if not self._changed(image, thumb):
            if self._read_again:
                self._read_again = False
                again = self.reader.recognize(image)
                self.recognised += 1
                if self._sureness(again) > self._sureness(self._cards):
                    self._cards = list(again)
                return list(self._cards)
            self.reused += 1
            return list(self._cards)
        cards = self.reader.recognize(image)
        self._shape, self._thumb, self._cards = image.shape, thumb, list(cards)
        self.recognised += 1
        self._read_again = any(c.confidence < self.sure for c in cards)
        return cards

    def _sureness(self, cards: list[PhysicalCard]) -> tuple[int, float]:
        """How sure a reading is: its cards read sure, then their confidence summed."""
        return sum(c.confidence >= self.sure for c in cards), sum(c.confidence for c in cards)
