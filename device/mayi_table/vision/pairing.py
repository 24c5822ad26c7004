"""Group corner-index detections into physical cards.

A card lying flat shows its two corner indices at opposite corners (top-left and bottom-right of the
face), the second one turned 180 degrees: the pair is point-symmetric about the card's centre. So two
detections of the same face belong to one card when

* their boxes have the same size (a 180-degree turn keeps an axis-aligned box's width and height),
* their distance fits one card at the scale their size implies (a 63 x 88 mm card whose index is about
  8 x 16 mm, inset about 3 mm from the edges; the joker's is taller and narrower), and
* the direction between them agrees with the boxes' shape: the line joining the two indices runs along
  the card's diagonal, which fixes the card's angle, and at that angle an upright-tall index must give
  a box that is taller (or wider, or square) by about as much as observed.

In a fanned meld usually only one index of each card shows; indices that cannot be paired are cards of
their own. Duplicates (games use two or three decks) stay apart: the corners of one face are matched
so that as many pairs as possible form, best-fitting first (an exact minimum-cost matching for the
handful of corners one face has), so four corners of two flat 7H make two cards, and two 7H indices
side by side in a fan make two cards.

Only axis-aligned boxes are known, so two *same-facing* copies of one face lying about a card's diagonal
apart can still be taken for one card; the indices' pixels are too small (about 12 x 30 px) to tell a
turned mark from an upright one reliably. On ground-truth corner boxes of rendered game tables the
grouping counted every card right.

Everything is plain numpy and deterministic: the result does not depend on the detections' order.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from typing import Iterable, Sequence

import numpy as np

from .classes import Box, Corner, PhysicalCard

# ------------------------------------------------------------------ card geometry (millimetres)

CARD_WIDTH_MM = 63.0  # a standard (poker-size) card
CARD_HEIGHT_MM = 88.0


@dataclass(frozen=True)
class IndexGeometry:
    """The rank-over-suit mark in a card's corner, upright, and how much real decks vary it."""

    width_mm: float
    height_mm: float
    margin_mm: float  # from the card's edges to the mark
    aspect_range: tuple[float, float]  # (h - w) / (h + w) of the mark over deck designs

    @property
    def offset_mm(self) -> tuple[float, float]:
        """The top-left mark's centre relative to the card's centre (x right, y down, upright card)."""
        return (
            CARD_WIDTH_MM / 2 - self.margin_mm - self.width_mm / 2,
            CARD_HEIGHT_MM / 2 - self.margin_mm - self.height_mm / 2,
        )

    @property
    def pair_distance_mm(self) -> float:
        """Between the centres of a card's two marks."""
        return 2 * math.hypot(*self.offset_mm)

    @property
    def pair_angle_deg(self) -> float:
        """The diagonal joining the two marks, below the card's x axis."""
        return math.degrees(math.atan2(self.offset_mm[1], self.offset_mm[0]))


# measured over the renderer's 24 deck designs: naturals' marks are 6-15.5 mm wide ("10" is widest) and
# 12-19 mm tall, inset 1-6 mm; the joker's mark is the word JOKER written downwards
NATURAL_INDEX = IndexGeometry(width_mm=8.0, height_mm=16.0, margin_mm=3.0, aspect_range=(-0.05, 0.45))
JOKER_INDEX = IndexGeometry(width_mm=5.5, height_mm=26.0, margin_mm=3.0, aspect_range=(0.5, 0.8))


def index_geometry(card: str) -> IndexGeometry:
    return JOKER_INDEX if card == "JK" else NATURAL_INDEX


# ------------------------------------------------------------------ tolerances

DISTANCE_TOLERANCE = 1.6  # observed / expected pair distance may be off by this factor either way
SIZE_TOLERANCE = 0.3  # the two boxes' widths (heights) may differ by this share of the larger one ...
SIZE_SLACK_PX = 3.0  # ... plus this many pixels (small boxes are noisy)
SHAPE_TOLERANCE = 0.15  # allowed miss of a box's (h - w) / (h + w) against the mark's range at the pair's angle
EXACT_MATCHING_LIMIT = 14  # corners of one face matched exactly; more are matched greedily


@dataclass(frozen=True)
class PairFit:
    """How well two corners fit one flat card."""

    cost: float  # 0 (perfect) .. 1 (at the tolerances); pairs at or above 1 are rejected
    orientation: float  # degrees counter-clockwise, (-90, 90]: 0 = upright or upside down
    centre: tuple[float, float]
    px_per_mm: float


def _centre(box: Box) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def _size(box: Box) -> tuple[float, float]:
    return (max(0.0, box[2] - box[0]), max(0.0, box[3] - box[1]))


def normalise_orientation(degrees: float) -> float:
    """An angle of a 180-degree-symmetric card in (-90, 90]."""
    a = math.fmod(degrees, 180.0)
    if a <= -90.0:
        a += 180.0
    elif a > 90.0:
        a -= 180.0
    return a


def pair_orientation(a: Box, b: Box, geometry: IndexGeometry = NATURAL_INDEX) -> float:
    """The card angle (degrees counter-clockwise, (-90, 90]) implied by two opposite corner indices."""
    (ax, ay), (bx, by) = _centre(a), _centre(b)
    # in y-up coordinates the diagonal from the top-left to the bottom-right mark points at -pair_angle_deg
    direction = math.degrees(math.atan2(-(by - ay), bx - ax))
    return normalise_orientation(direction + geometry.pair_angle_deg)


def fit_pair(a: Corner, b: Corner) -> PairFit | None:
    """How well two corners of one face fit the two indices of one flat card; None when they cannot."""
    if a.card != b.card:
        return None
    (aw, ah), (bw, bh) = _size(a.box), _size(b.box)
    if min(aw, ah, bw, bh) <= 0:
        return None
    # 1. point symmetry: the same box size
    size_err = max(
        abs(aw - bw) / (SIZE_TOLERANCE * max(aw, bw) + SIZE_SLACK_PX),
        abs(ah - bh) / (SIZE_TOLERANCE * max(ah, bh) + SIZE_SLACK_PX),
    )
    if size_err >= 1:
        return None
    geo = index_geometry(a.card)
    # 2. the card's angle from the diagonal, and the index's rotated box at that angle
    theta = pair_orientation(a.box, b.box, geo)
    c, s = abs(math.cos(math.radians(theta))), abs(math.sin(math.radians(theta)))
    # 3. distance against the scale the boxes' size implies: w + h of a box = (w + h of the index) * (|c| + |s|)
    px_per_mm = ((aw + ah + bw + bh) / 2) / ((geo.width_mm + geo.height_mm) * (c + s))
    (ax, ay), (bx, by) = _centre(a.box), _centre(b.box)
    distance = math.hypot(bx - ax, by - ay)
    ratio = distance / (geo.pair_distance_mm * px_per_mm)
    dist_err = abs(math.log(max(ratio, 1e-9))) / math.log(DISTANCE_TOLERANCE)
    if dist_err >= 1:
        return None
    # 4. shape: an index k = (h - w) / (h + w) turned by theta gives a box with (H - W) / (H + W) = k * g
    g = (c - s) / (c + s)
    lo, hi = sorted((geo.aspect_range[0] * g, geo.aspect_range[1] * g))
    shape_miss = 0.0
    for w, h in ((aw, ah), (bw, bh)):
        q = (h - w) / (h + w)
        shape_miss = max(shape_miss, lo - q, q - hi, 0.0)
    shape_err = shape_miss / SHAPE_TOLERANCE
    if shape_err >= 1:
        return None
    cost = (size_err + dist_err + shape_err) / 3
    return PairFit(cost, theta, ((ax + bx) / 2, (ay + by) / 2), distance / geo.pair_distance_mm)


def card_outline(centre: tuple[float, float], orientation: float, px_per_mm: float) -> np.ndarray:
    """The four corners (4 x 2, image pixels) of a card at a centre, angle and scale."""
    t = math.radians(orientation)
    c, s = math.cos(t), math.sin(t)
    hw, hh = CARD_WIDTH_MM / 2 * px_per_mm, CARD_HEIGHT_MM / 2 * px_per_mm
    pts = []
    for u, v in ((-hw, -hh), (hw, -hh), (hw, hh), (-hw, hh)):
        # turning counter-clockwise on screen (y down): x = u cos + v sin, y = -u sin + v cos
        pts.append((centre[0] + u * c + v * s, centre[1] - u * s + v * c))
    return np.array(pts, dtype=np.float64)


def _union(boxes: Iterable[Box]) -> Box:
    bs = list(boxes)
    return (min(b[0] for b in bs), min(b[1] for b in bs), max(b[2] for b in bs), max(b[3] for b in bs))


def _clip(box: Box, image_size: tuple[int, int] | None) -> Box:
    if image_size is None:
        return box
    w, h = float(image_size[0]), float(image_size[1])
    return (min(max(box[0], 0.0), w), min(max(box[1], 0.0), h), min(max(box[2], 0.0), w), min(max(box[3], 0.0), h))


def _match(costs: dict[tuple[int, int], float], n: int) -> list[tuple[int, int]]:
    """Pairs minimising (sum of pair costs + 1 per unpaired corner); exact for small n, else greedy."""
    if n <= EXACT_MATCHING_LIMIT:

        @cache
        def best(mask: int) -> tuple[float, tuple[tuple[int, int], ...]]:
            if mask == 0:
                return (0.0, ())
            i = (mask & -mask).bit_length() - 1
            rest = mask & ~(1 << i)
            cost, pairs = best(rest)
            choice = (cost + 1.0, pairs)
            for j in range(i + 1, n):
                if rest >> j & 1 and (i, j) in costs:
                    cost, pairs = best(rest & ~(1 << j))
                    if cost + costs[(i, j)] < choice[0] - 1e-12:
                        choice = (cost + costs[(i, j)], ((i, j),) + pairs)
            return choice

        return list(best((1 << n) - 1)[1])
    used: set[int] = set()
    out = []
    for (i, j), _ in sorted(costs.items(), key=lambda kv: (kv[1], kv[0])):
        if i not in used and j not in used:
            used.update((i, j))
            out.append((i, j))
    return out


def _sort_key(corner: Corner) -> tuple[float, float, float, float, float]:
    return (corner.box[0], corner.box[1], corner.box[2], corner.box[3], -corner.confidence)


def pair_corners(corners: Sequence[Corner], image_size: tuple[int, int] | None = None) -> list[PhysicalCard]:
    """Group corner detections into physical cards (image_size = (width, height) clips card boxes).

    Cards come out in reading order (top to bottom, then left to right, by box).
    """
    by_card: dict[str, list[Corner]] = defaultdict(list)
    for corner in corners:
        by_card[corner.card].append(corner)
    cards: list[PhysicalCard] = []
    for name in sorted(by_card):
        group = sorted(by_card[name], key=_sort_key)
        fits: dict[tuple[int, int], PairFit] = {}
        for i in range(len(group)):
            for j in range(i + 1, len(group)):
                fit = fit_pair(group[i], group[j])
                if fit is not None:
                    fits[(i, j)] = fit
        pairs = _match({k: f.cost for k, f in fits.items()}, len(group))
        paired: set[int] = set()
        for i, j in pairs:
            paired.update((i, j))
            fit, a, b = fits[(i, j)], group[i], group[j]
            outline = card_outline(fit.centre, fit.orientation, fit.px_per_mm)
            card_box: Box = (
                float(outline[:, 0].min()),
                float(outline[:, 1].min()),
                float(outline[:, 0].max()),
                float(outline[:, 1].max()),
            )
            box = _clip(_union((card_box, a.box, b.box)), image_size)
            cards.append(PhysicalCard(name, max(a.confidence, b.confidence), box, (a, b), fit.orientation))
        for k, corner in enumerate(group):
            if k not in paired:
                cards.append(PhysicalCard(name, corner.confidence, _clip(corner.box, image_size), (corner,)))
    cards.sort(key=lambda c: (c.box[1], c.box[0], c.card, c.box[2], c.box[3]))
    return cards
