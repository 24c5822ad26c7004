"""The detector's classes and the records passed between detection, pairing and the referee.

The model detects corner indices (the rank-and-suit marks printed in two opposite corners of a
card), not whole cards: a fanned meld shows only corners. One class per card face: 52 naturals in
the record notation, then the joker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..rules.cards import RANKS, SUITS

if TYPE_CHECKING:
    import numpy as np

# below this the index classifier's best guess is no reading at all (chosen on seed 1234); here, beside
# the records, so that the config can bound its faint readings by it without loading the classifier
MIN_CONFIDENCE = 0.45
CLASS_NAMES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS) + ("JK",)
CLASS_INDEX: dict[str, int] = {name: i for i, name in enumerate(CLASS_NAMES)}

Box = tuple[float, float, float, float]  # x1, y1, x2, y2 in pixels of the image as given
Readings = tuple[tuple[str, float], ...]  # other names a mark may have, with their probabilities, likeliest first


def box_area(box: Box) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


@dataclass(frozen=True)
class Corner:
    """One detected corner index."""

    card: str
    confidence: float
    box: Box
    alternatives: Readings = ()  # the classifier's next readings (the referee may pick one the rules need)


@dataclass(frozen=True)
class PhysicalCard:
    """One card on the table: one or two corners of the same face grouped together."""

    card: str
    confidence: float
    box: Box  # covers its corners (and the card between them when both are seen)
    corners: tuple[Corner, ...]
    orientation: float | None = None  # degrees, from the corner pair when both are seen
    alternatives: Readings = ()  # its corners' next readings, other than `card`


class CardReader(Protocol):
    """Anything that names the physical cards of a BGR image (a `Recognizer`, a `StillView`, an oracle)."""

    def recognize(self, image_bgr: np.ndarray) -> list[PhysicalCard]: ...
